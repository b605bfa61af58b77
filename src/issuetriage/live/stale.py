"""Stale follow-up, planned: an issue waiting on its reporter (the bot asked for information or a
reproduction) gets one reminder after N quiet days, then after M more a close as not planned
with a template that invites reopening. Any reply from the reporter stops the clock.

Pure: the clock is a parameter. `act/stale.py` runs the due plans through the one flow (the guard
itself refuses a stale close without the reminder; apply by difference makes a rerun a no-op)."""

from __future__ import annotations

from datetime import datetime, timedelta

from issuetriage.engine.guard import guard
from issuetriage.evidence.followup import posted_at, reporter_replied_after, utc, waiting_since
from issuetriage.models import Decision, Issue, Plan, TraceStep
from issuetriage.policy import Policy


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
