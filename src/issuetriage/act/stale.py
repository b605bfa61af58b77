"""`issuetriage stale`: remind, then close, issues whose reporter went quiet (when the profile
enables it), through the one flow: the issue is read where it lives (GitHub with a token, else the
local store), the follow-up due is planned on it as it is now (`live/stale.py`), guarded, applied
by difference, verified and audited in the store. Shadow mode holds every follow-up for review."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from issuetriage.act.applier import Applier
from issuetriage.act.flow import Decide, Report, act
from issuetriage.act.hold import Mode
from issuetriage.engine.decided import Decided
from issuetriage.errors import UserError
from issuetriage.live.stale import follow_up_plan
from issuetriage.models import Decision, Issue, Plan, TraceStep
from issuetriage.policy import Policy
from issuetriage.store.sqlite import Store


@dataclass(frozen=True)
class FollowUp:
    issue: Issue
    plan: Plan
    report: Report


def follow_up(applier: Applier, store: Store, policy: Policy, now: datetime, apply: bool = False) -> list[FollowUp]:
    """Plan (and with `apply`, apply) every follow-up due at `now` on the profile's repository,
    auditing each in `store`; the mirror's issues say which may be due."""
    if not policy.meta.stale.enabled:
        raise UserError(f"profile {policy.name}: stale follow-up is off ([stale] enabled = false)")
    done = []
    for issue in store.issues(policy.meta.repo):
        if follow_up_plan(issue, policy, now) is None:
            continue
        report = act(applier, issue.repo, issue.number, policy, _due(now), Mode(apply=apply), audit=store,
                     respect_marker=False, extra={"stale": True})
        if report.plan is not None and report.plan.has_effect:
            done.append(FollowUp(report.before, report.plan, report))
    return done


def _due(now: datetime) -> Decide:
    """The follow-up due on the issue as the flow read it (nothing when it changed since)."""
    def decide(issue: Issue, policy: Policy) -> Decided:
        plan = follow_up_plan(issue, policy, now) or Plan(
            repo=issue.repo, number=issue.number, decision=Decision.REQUEST_INFO,
            trace=(TraceStep(step="stale", outcome="nothing due", reason="the issue changed since the mirror"),))
        return Decided(plan, None, "stale")
    return decide
