"""Apply a guarded plan to GitHub with the fewest calls, in an order a crash cannot spoil.

Decide, then act: `calls_for` turns the difference between the plan and the issue's current
state (`issuetriage.engine.effects.diff`) into a list of calls; `apply_plan` sends them. Order: body
edit (redaction first), the one comment, close, labels (with `bot-triaged`, the "done" marker,
last), transfer. A run that dies between two writes leaves GitHub in a state from which the
next run's diff finishes the job: a posted template is recognised by its marker, a present
label is not re-added, a closed issue is not re-closed.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from issuetriage.engine.effects import Effects, diff
from issuetriage.github import writes
from issuetriage.github.client import GitHubClient
from issuetriage.models import Issue, Plan
from issuetriage.policy import Policy


@dataclass(frozen=True)
class Call:
    """One write as it will be sent: what it does, the HTTP method and path, and its payload."""

    kind: str
    method: str
    path: str
    payload: dict[str, Any] = field(default_factory=dict)

    def describe(self, width: int = 100) -> str:
        text = json.dumps(self.payload, ensure_ascii=False)
        if len(text) > width:
            text = text[: width - 3] + "..."
        return f"{self.method} {self.path} {text}"


@dataclass(frozen=True)
class Applied:
    """What was sent, and where the issue lives afterwards (it moves when transferred)."""

    calls: tuple[Call, ...]
    repo: str
    number: int


def calls_for(effects: Effects, repo: str, number: int, marker: str) -> tuple[Call, ...]:
    """The writes that realise `effects`, in crash-safe order; empty when there is nothing to do."""
    path = f"/repos/{repo}/issues/{number}"
    calls: list[Call] = []
    if effects.comment:
        calls.append(Call("comment", "POST", f"{path}/comments", {"body": effects.comment}))
    if effects.body is not None:
        calls.append(Call("body", "PATCH", path, {"body": effects.body}))
    if effects.close:
        calls.append(Call("close", "PATCH", path,
                          {"state": "closed", "state_reason": effects.state_reason or "not_planned"}))
    labels = [label for label in effects.labels if not (effects.transfer_repo and label == marker)]
    if labels:
        calls.append(Call("labels", "POST", f"{path}/labels", {"labels": labels}))
    if effects.transfer_repo:
        calls.append(Call("transfer", "POST", "/graphql (transferIssue)",
                          {"repository": effects.transfer_repo}))
        if marker in effects.labels:
            calls.append(Call("labels", "POST", f"/repos/{effects.transfer_repo}/issues/(moved)/labels",
                              {"labels": [marker]}))
    return tuple(calls)


def plan_calls(plan: Plan, issue: Issue, policy: Policy) -> tuple[Call, ...]:
    """The calls applying `plan` to `issue` as it is now would make (the dry run prints these)."""
    return calls_for(diff(plan, issue, policy), issue.repo, issue.number, policy.bot.bot_triaged)


def send(client: GitHubClient, call: Call, repo: str, number: int) -> str | None:
    """Send one call; returns the new OWNER/NAME#N for a transfer."""
    if call.kind in {"body", "close"}:
        writes.edit_issue(client, repo, number, **call.payload)
    elif call.kind == "comment":
        writes.comment(client, repo, number, call.payload["body"])
    elif call.kind == "labels":
        writes.add_labels(client, repo, number, tuple(call.payload["labels"]))
    elif call.kind == "transfer":
        return writes.transfer(client, repo, number, call.payload["repository"])
    return None


def apply_plan(client: GitHubClient, plan: Plan, issue: Issue, policy: Policy,
               keep_subscription: bool = False) -> Applied:
    """Send the calls for `plan` against `issue` (read just before); optionally keep the viewer's
    notification subscription as it was (the scrub flow's etiquette) unless the issue ends closed."""
    calls = plan_calls(plan, issue, policy)
    saved = writes.subscription(client, issue.repo, issue.number) if keep_subscription and calls else None
    repo, number = issue.repo, issue.number
    for call in calls:
        moved = send(client, call, repo, number)
        if moved:
            repo, number_text = moved.split("#")
            number = int(number_text)
    closes = any(c.kind == "close" for c in calls) or issue.state == "closed"
    if saved and not closes and (repo, number) == (issue.repo, issue.number):
        node_id, state = saved
        writes.set_subscription(client, node_id, state)
    return Applied(calls, repo, number)
