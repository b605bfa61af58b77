"""What a reviewer does with a plan waiting in the review queue (`live/review.py`): approve it,
approve an edited version, or reject it.

An approval runs the one flow with the plan as decided by a person: read the issue where it lives
(GitHub in service mode or with a token, else the local store), guard it as it is now, apply by
difference, verify, audit. It is all or nothing: when the guard refuses any part of it, nothing
is written and the plan stays in the queue with the reason. A rejection writes nothing to the
issue and is kept as a correction."""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import UTC, datetime

from issuetriage.act.applier import Applier
from issuetriage.act.flow import Report, act, given
from issuetriage.act.hold import Mode
from issuetriage.live.review import pending
from issuetriage.models import Plan
from issuetriage.policy import Policy
from issuetriage.store.sqlite import Store


@dataclass(frozen=True)
class Approval:
    """The flow's report on an approval; `refused` when the guard refused part of it (nothing
    was written and the plan still waits)."""

    report: Report

    @property
    def refused(self) -> bool:
        return bool(self.report.extra.get("refused"))

    def describe(self) -> str:
        """One line for the reviewer."""
        reasons = "; ".join(f"{r.item}: {r.reason}" for r in self.report.rejections)
        if self.refused:
            return f"not applied, still waiting: the guard refused {reasons}"
        effects = self.report.effects.describe() if self.report.effects else []
        verdict = self.report.verdict
        missing = f"; NOT on the issue: {', '.join(verdict.missing)}" if verdict and verdict.missing else ""
        return (f"applied on {self.report.extra.get('where', '?')}: {', '.join(effects) or 'nothing left to change'}"
                + (f" (outcome {verdict.outcome.value}{missing})" if verdict else ""))


def approve(applier: Applier, store: Store, policy: Policy, audit_id: int, reviewer: str,
            labels: tuple[str, ...] | None = None) -> Approval:
    """Apply a waiting plan (with `labels` in place of its labels when edited) through the one
    flow, and record the review unless the guard refused part of it."""
    item = pending(store, policy, audit_id)
    plan = item.row.plan
    proposed = plan if labels is None else plan.model_copy(update={"labels_added": labels})
    report = act(applier, plan.repo, plan.number, policy, given(proposed, judge=item.row.judge),
                 Mode(apply=True, approved=True), audit=store, respect_marker=False, strict=True,
                 extra={"approved_from": audit_id, "reviewer": reviewer})
    done = Approval(report)
    if not done.refused and report.plan is not None:
        _review(store, audit_id, "edited" if labels is not None else "approved", reviewer, report.plan, "")
    return done


def reject(store: Store, policy: Policy, audit_id: int, reviewer: str, note: str = "") -> None:
    """Refuse a waiting plan: nothing is written to the issue; the refusal is a correction."""
    item = pending(store, policy, audit_id)
    _review(store, audit_id, "rejected", reviewer, item.row.plan, note[:2000])


def _review(store: Store, audit_id: int, verdict: str, reviewer: str, plan: Plan, note: str) -> None:
    with store.transaction():
        store.db.execute("INSERT INTO reviews VALUES (?,?,?,?,?,?)",
                         (audit_id, verdict, reviewer[:100], datetime.now(UTC).isoformat(timespec="seconds"),
                          json.dumps(plan.to_json()), note))
