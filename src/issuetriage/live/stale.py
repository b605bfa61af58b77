"""Stale follow-up: an issue waiting on its reporter (the bot asked for information or a
reproduction) gets one reminder after N quiet days, then after M more a close as not planned
with a template that invites reopening. Any reply from the reporter stops the clock.

Off unless the profile enables it; every plan goes through the guard (which itself refuses a
stale close without the reminder) and is applied by difference, so a rerun changes nothing.
The clock is a parameter."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from issuetriage.engine.guard import guard
from issuetriage.errors import UserError
from issuetriage.live.followup import posted_at, reporter_replied_after, utc, waiting_since
from issuetriage.models import Decision, Issue, Plan, TraceStep
from issuetriage.policy import Policy
from issuetriage.store.sqlite import Store


@dataclass(frozen=True)
class FollowUp:
    issue: Issue
    plan: Plan


def follow_up_plan(issue: Issue, policy: Policy, now: datetime) -> Plan | None:
    """The reminder or the close `issue` is due at `now`, guarded; None when nothing is due."""
    cfg = policy.meta.stale
    asked = waiting_since(issue, policy)
    if issue.state != "open" or asked is None or reporter_replied_after(issue, asked):
        return None
    reminded = posted_at(issue, policy, cfg.remind_template)
    now = utc(now)
    if reminded is None and now - asked >= timedelta(days=cfg.remind_after_days):
        proposed = Plan(repo=issue.repo, number=issue.number, decision=Decision.REQUEST_INFO,
                        templates=(cfg.remind_template,), trace=(TraceStep(
                            step="stale", outcome="remind",
                            reason=f"no reply from the reporter {cfg.remind_after_days}+ days after the request"),))
    elif reminded is not None and now - reminded >= timedelta(days=cfg.close_after_days):
        proposed = Plan(repo=issue.repo, number=issue.number, decision=Decision.CLOSE_STALE, close=True,
                        templates=(cfg.close_template,), trace=(TraceStep(
                            step="stale", outcome="close as not planned",
                            reason=f"no reply {cfg.close_after_days}+ days after the reminder"),))
    else:
        return None
    plan = guard(proposed, issue, policy).plan
    return plan if plan.has_effect else None


def follow_up(store: Store, policy: Policy, now: datetime, apply: bool = False) -> list[FollowUp]:
    """Plan (and with `apply`, apply and audit) every due follow-up of the profile's repo."""
    if not policy.meta.stale.enabled:
        raise UserError(f"profile {policy.name}: stale follow-up is off ([stale] enabled = false)")
    due = []
    for issue in store.issues(policy.meta.repo):
        plan = follow_up_plan(issue, policy, now)
        if plan is None:
            continue
        if apply:
            store.apply(plan, policy, judge="stale", extra={"stale": True}, at=utc(now))
        else:
            store.record(plan, judge="stale", extra={"stale": True})
        due.append(FollowUp(issue, plan))
    return due
