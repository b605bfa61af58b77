"""The outcome check: re-read the issue after an apply and say what actually happened.

An agent's "done" is not evidence; GitHub's state is. `classify` is pure; `verify` re-reads,
re-adds a missing `bot-triaged`, marks `bot-triage-blocked` when the guard blocked everything,
and reports anything of the plan that did not land.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from issuetriage.engine.effects import diff
from issuetriage.github import reads, writes
from issuetriage.github.client import GitHubClient
from issuetriage.engine.guard import guard
from issuetriage.models import Decision, Issue, Plan
from issuetriage.policy import Policy


class Outcome(StrEnum):
    ROUTED = "routed"
    TRIAGED = "triaged"
    REVIEW = "review"
    CLOSED = "closed"
    WAITING_ON_REPORTER = "waiting_on_reporter"
    NO_ACTION = "no_action"


@dataclass(frozen=True)
class Verdict:
    """The outcome, the issue as re-read, labels the check itself added, and what did not land."""

    outcome: Outcome
    issue: Issue
    fixed: tuple[str, ...] = ()
    missing: tuple[str, ...] = ()

    @property
    def ok(self) -> bool:
        return self.outcome is not Outcome.NO_ACTION and not self.missing


def _routing_labels(policy: Policy) -> frozenset[str]:
    pt2 = policy.queues.pt2
    return policy.redirect_labels | ({pt2.label} if pt2 else frozenset())


def classify(after: Issue, origin: str, policy: Policy) -> Outcome:
    """What the issue's current state says happened (`origin`: the repo it was triaged in)."""
    labels = set(after.labels)
    if after.state == "closed":
        return Outcome.CLOSED
    if after.repo != origin or labels & _routing_labels(policy):
        return Outcome.ROUTED
    if policy.bot.triage_review in labels:
        return Outcome.REVIEW
    waits = [name for name, t in policy.templates.items() if "wait" in t.action.lower()]
    posted = "\n".join(c.body for c in after.comments)
    if any(policy.template_marker(name) in posted for name in waits):
        return Outcome.WAITING_ON_REPORTER
    if labels & {policy.bot.bot_triaged, policy.bot.triaged}:
        return Outcome.TRIAGED
    return Outcome.NO_ACTION


def residual(plan: Plan, after: Issue, policy: Policy) -> tuple[str, ...]:
    """Parts of the plan that GitHub does not show yet (labels, comment, close, body)."""
    if plan.transfer_repo and after.repo == plan.transfer_repo:
        return ()
    left = diff(plan, after, policy)
    missing = [f"label {name!r}" for name in left.labels if name != policy.bot.bot_triaged]
    if left.comment:
        missing.append("comment")
    if left.close:
        missing.append("close")
    if left.body is not None:
        missing.append("body edit")
    if left.transfer_repo:
        missing.append(f"transfer to {left.transfer_repo}")
    return tuple(missing)


def fixups(after: Issue, plan: Plan, blocked: bool, policy: Policy) -> tuple[str, ...]:
    """Labels the check adds itself: `bot-triage-blocked` when the guard blocked every proposed
    write, and `bot-triaged` when the plan changed the issue but the marker is not there."""
    wanted: list[str] = []
    if blocked and policy.bot.blocked not in after.labels:
        wanted.append(policy.bot.blocked)
    moved = bool(plan.transfer_repo) and after.repo == plan.transfer_repo
    if plan.has_effect and not moved and policy.bot.bot_triaged not in after.labels:
        wanted.append(policy.bot.bot_triaged)
    return tuple(wanted)


def verify(client: GitHubClient, plan: Plan, repo: str, number: int, policy: Policy,
           blocked: bool = False) -> Verdict:
    """Re-read the issue (where it lives now), fix the markers, classify."""
    after = reads.fetch_issue(client, repo, number, moved_ok=True)
    markers = fixups(after, plan, blocked, policy)
    # the markers are a plan of their own, and like every write they pass the guard
    fixed = guard(Plan(repo=after.repo, number=after.number, decision=Decision.LABEL,
                       labels_added=markers), after, policy).plan.labels_added if markers else ()
    if fixed:
        writes.add_labels(client, after.repo, after.number, fixed)
        after = reads.fetch_issue(client, after.repo, after.number, moved_ok=True)  # believe GitHub, not the reply
    return Verdict(classify(after, plan.repo, policy), after, fixed, residual(plan, after, policy))
