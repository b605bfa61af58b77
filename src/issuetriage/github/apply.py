"""Apply a guarded plan to GitHub with the fewest calls, in an order a crash cannot spoil.

`writes_for` turns the difference between the plan and the issue's current state
(`issuetriage.engine.effects.diff`) into typed writes, one class per kind; `GitHubApplier.write`
sends them. Order: the one comment, body edit (redaction), close, labels (with `bot-triaged`, the
"done" marker, last), transfer. A run that dies between two writes leaves GitHub in a state from
which the next run's diff finishes the job: a posted template is recognised by its marker, a
present label is not re-added, a closed issue is not re-closed.

Every write returns what GitHub answered (the labels after an append, the issue after an edit, the
comment as stored, where a transferred issue lives), and the applier folds those answers into the
issue as it is now: the outcome check needs no second read.
"""

from __future__ import annotations

import contextlib
import copy
import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, ClassVar

from issuetriage.engine.effects import Effects
from issuetriage.github import reads, writes
from issuetriage.github.client import GitHubClient
from issuetriage.models import Issue, Plan
from issuetriage.policy import Policy, Release


@dataclass(frozen=True)
class Write:
    """One write as it will be sent; `send` returns the issue as GitHub's answer shows it."""

    kind: ClassVar[str]
    method: ClassVar[str]

    def path(self, issue: Issue) -> str:
        return f"/repos/{issue.repo}/issues/{issue.number}"

    def payload(self) -> dict[str, Any]:
        raise NotImplementedError

    def send(self, client: GitHubClient, issue: Issue) -> Issue:
        raise NotImplementedError

    def describe(self, issue: Issue, width: int = 100) -> str:
        text = json.dumps(self.payload(), ensure_ascii=False)
        if len(text) > width:
            text = text[: width - 3] + "..."
        return f"{self.method} {self.path(issue)} {text}"


def _edited(issue: Issue, data: dict[str, Any]) -> Issue:
    """`issue` with the state, body and labels of an update's answer (comments are not in it)."""
    return issue.model_copy(update={
        "state": data.get("state", issue.state), "body": data.get("body") or "",
        "labels": tuple(label["name"] for label in data.get("labels", [])) or issue.labels})


@dataclass(frozen=True)
class PostComment(Write):
    body: str
    kind: ClassVar[str] = "comment"
    method: ClassVar[str] = "POST"

    def path(self, issue: Issue) -> str:
        return super().path(issue) + "/comments"

    def payload(self) -> dict[str, Any]:
        return {"body": self.body}

    def send(self, client: GitHubClient, issue: Issue) -> Issue:
        posted = writes.comment(client, issue.repo, issue.number, self.body)
        return issue.model_copy(update={"comments": issue.comments + (posted,)})


@dataclass(frozen=True)
class EditBody(Write):
    body: str
    kind: ClassVar[str] = "body"
    method: ClassVar[str] = "PATCH"

    def payload(self) -> dict[str, Any]:
        return {"body": self.body}

    def send(self, client: GitHubClient, issue: Issue) -> Issue:
        return _edited(issue, writes.edit_issue(client, issue.repo, issue.number, body=self.body))


@dataclass(frozen=True)
class Close(Write):
    state_reason: str
    kind: ClassVar[str] = "close"
    method: ClassVar[str] = "PATCH"

    def payload(self) -> dict[str, Any]:
        return {"state": "closed", "state_reason": self.state_reason}

    def send(self, client: GitHubClient, issue: Issue) -> Issue:
        return _edited(issue, writes.edit_issue(client, issue.repo, issue.number, **self.payload()))


@dataclass(frozen=True)
class AddLabels(Write):
    labels: tuple[str, ...]
    kind: ClassVar[str] = "labels"
    method: ClassVar[str] = "POST"

    def path(self, issue: Issue) -> str:
        return super().path(issue) + "/labels"

    def payload(self) -> dict[str, Any]:
        return {"labels": list(self.labels)}

    def send(self, client: GitHubClient, issue: Issue) -> Issue:
        return issue.model_copy(update={
            "labels": writes.add_labels(client, issue.repo, issue.number, self.labels)})


@dataclass(frozen=True)
class Transfer(Write):
    repository: str
    kind: ClassVar[str] = "transfer"
    method: ClassVar[str] = "POST"

    def path(self, issue: Issue) -> str:
        return "/graphql (transferIssue)"

    def payload(self) -> dict[str, Any]:
        return {"repository": self.repository}

    def send(self, client: GitHubClient, issue: Issue) -> Issue:
        moved = writes.transfer(client, issue.repo, issue.number, self.repository)
        return issue.model_copy(update={"repo": moved.repo, "number": moved.number,
                                        "state": moved.state, "labels": moved.labels})


def writes_for(effects: Effects, marker: str) -> tuple[Write, ...]:
    """The writes that realise `effects`, in crash-safe order; empty when there is nothing to do.
    A transferred issue gets the done marker in its new home, after the move."""
    out: list[Write] = []
    if effects.comment:
        out.append(PostComment(effects.comment))
    if effects.body is not None:
        out.append(EditBody(effects.body))
    if effects.close:
        out.append(Close(effects.state_reason or "not_planned"))
    labels = tuple(label for label in effects.labels if not (effects.transfer_repo and label == marker))
    if labels:
        out.append(AddLabels(labels))
    if effects.transfer_repo:
        out.append(Transfer(effects.transfer_repo))
        if marker in effects.labels:
            out.append(AddLabels((marker,)))
    return tuple(out)


def with_release(policy: Policy, minor: str | None) -> Policy:
    """The policy with the latest release's MAJOR.MINOR filled in (it is data, so we copy)."""
    if not minor or policy.meta.release.latest_minor != "unknown":
        return policy
    updated = copy.copy(policy)
    updated.meta = policy.meta.model_copy(update={"release": Release(latest_minor=minor)})
    return updated


@dataclass
class GitHubApplier:
    """The GitHub side of the one flow (`issuetriage.act.act`): one read, typed writes, answers
    folded into the issue. `keep_subscription` restores the viewer's notification subscription
    after writing unless the issue ends closed (the scrub flow's etiquette)."""

    client: GitHubClient
    keep_subscription: bool = False
    where: ClassVar[str] = "github"
    _release: dict[tuple[str, int], str | None] = field(default_factory=dict, repr=False)

    def spent(self) -> int:
        """API calls made so far."""
        return len(self.client.calls)

    def read(self, repo: str, number: int) -> Issue:
        snapshot = reads.read_issue(self.client, repo, number)
        self._release[(repo, number)] = snapshot.latest_release
        return snapshot.issue

    def context(self, policy: Policy, issue: Issue) -> Policy:
        """Release context from the same read (no call of its own)."""
        return with_release(policy, reads.minor_of(self._release.get((issue.repo, issue.number))))

    @contextlib.contextmanager
    def atomic(self) -> Iterator[None]:
        yield  # GitHub has no transactions: the write order makes a crash recoverable instead

    def planned(self, effects: Effects, issue: Issue, policy: Policy) -> tuple[str, ...]:
        return _describe(writes_for(effects, policy.bot.bot_triaged), issue)

    def write(self, plan: Plan, effects: Effects, issue: Issue, policy: Policy) -> tuple[Issue, tuple[str, ...]]:
        sent = writes_for(effects, policy.bot.bot_triaged)
        saved = (writes.subscription(self.client, issue.repo, issue.number)
                 if self.keep_subscription and sent else None)
        after, done = issue, []
        for write in sent:
            done.append(write.describe(after))
            after = write.send(self.client, after)
        if saved and after.state != "closed" and (after.repo, after.number) == (issue.repo, issue.number):
            node_id, state = saved
            writes.set_subscription(self.client, node_id, state)
        return after, tuple(done)


def _describe(sent: tuple[Write, ...], issue: Issue) -> tuple[str, ...]:
    return tuple(write.describe(issue) for write in sent)
