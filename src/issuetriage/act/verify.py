"""The outcome check: what the issue shows after an apply, and what actually happened.

An agent's "done" is not evidence; the issue's state is. The applier hands back the issue as the
write answers show it (GitHub returns the labels after an append, the issue after an edit), so no
second read is needed. `classify`, `residual` and `fixups` are pure; `verify` writes the marker
labels the check itself adds (`bot-triaged` when missing, `bot-triage-blocked` when the guard
blocked everything) through the same guard and applier, and reports what did not land.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from issuetriage.act.applier import Applier
from issuetriage.engine.effects import diff
from issuetriage.engine.guard import guard
from issuetriage.evidence.followup import posted_templates
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
    if set(waits) & posted_templates(after, policy):
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


def verify(applier: Applier, plan: Plan, after: Issue, policy: Policy, blocked: bool = False) -> Verdict:
    """Fix the markers on `after` (the issue as the writes left it) and classify."""
    markers = fixups(after, plan, blocked, policy)
    # the markers are a plan of their own, and like every write they pass the guard
    marker_plan = guard(Plan(repo=after.repo, number=after.number, decision=Decision.LABEL,
                             labels_added=markers), after, policy).plan if markers else None
    fixed = marker_plan.labels_added if marker_plan else ()
    if marker_plan and fixed:
        after, _ = applier.write(marker_plan, diff(marker_plan, after, policy), after, policy)
    return Verdict(classify(after, plan.repo, policy), after, fixed, residual(plan, after, policy))
