"""The review queue: escalated and abstained issues and shadow plans awaiting approval, and the
three things a reviewer may do with a plan: approve it, approve an edited version, or reject it.

Every approval goes back through the guard against the issue as stored now and is applied by
`approve` (the one function the acting path rewires); a rejection is kept as a correction."""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from issuetriage.engine.effects import Effects
from issuetriage.engine.guard import Rejection, guard
from issuetriage.errors import UserError
from issuetriage.live.outcomes import PlanRow, latest_per_issue, plan_rows
from issuetriage.models import Issue, Plan
from issuetriage.policy import Policy
from issuetriage.store.sqlite import Store


@dataclass(frozen=True)
class Item:
    """One plan waiting for a person, with why it waits."""

    row: PlanRow
    issue: Issue
    kind: str  # shadow, escalated or abstained
    held_for_review: tuple[str, ...]
    rejections: tuple[dict[str, str], ...]


def reviewed(store: Store) -> dict[int, dict[str, Any]]:
    return {r["audit_id"]: dict(r) for r in store.db.execute("SELECT * FROM reviews")}


def _kind(row: PlanRow, policy: Policy) -> str | None:
    labels = set(row.plan.labels_added)
    if row.shadow:
        return "shadow"
    if policy.bot.high_priority in labels:
        return "escalated"
    if policy.bot.triage_review in labels or row.plan.decision.value == "triage_review":
        return "abstained"
    return None


def queue(store: Store, policy: Policy) -> list[Item]:
    """The newest unreviewed plan of every open issue that waits for a person, oldest first."""
    repo = policy.meta.repo
    done = reviewed(store)
    items = []
    for row in latest_per_issue(plan_rows(store, repo)):
        kind = _kind(row, policy)
        if kind is None or row.audit_id in done:
            continue
        extra = audit_extra(store, row.audit_id)
        issue = store.get_issue(repo, row.plan.number)
        if issue.state != "open" or "approved_from" in extra:  # a person already decided
            continue
        items.append(Item(row, issue, kind, tuple(extra.get("held_for_review", ())),
                          tuple(extra.get("rejections", ()))))
    return sorted(items, key=lambda i: i.row.audit_id)


def audit_extra(store: Store, audit_id: int) -> dict[str, Any]:
    row = store.db.execute("SELECT extra FROM audit WHERE id=?", (audit_id,)).fetchone()
    return json.loads(row["extra"]) if row else {}


def pending(store: Store, policy: Policy, audit_id: int) -> Item:
    """The queue item for `audit_id`; UserError when it is not waiting (unknown or reviewed)."""
    for item in queue(store, policy):
        if item.row.audit_id == audit_id:
            return item
    raise UserError(f"plan {audit_id} is not waiting for review (unknown, superseded or already reviewed)")


@dataclass(frozen=True)
class Approval:
    plan: Plan
    effects: Effects
    rejections: tuple[Rejection, ...]


def approve(store: Store, policy: Policy, audit_id: int, reviewer: str,
            labels: tuple[str, ...] | None = None) -> Approval:
    """Apply a waiting plan (with `labels` in place of its labels when edited) through the guard,
    and record the review. Whatever the guard refuses is not written."""
    item = pending(store, policy, audit_id)
    proposed = item.row.plan if labels is None else item.row.plan.model_copy(update={"labels_added": labels})
    safe = guard(proposed, item.issue, policy)
    with store.transaction():
        effects = store.apply(safe.plan, policy, judge=item.row.judge,
                              extra={"approved_from": audit_id, "reviewer": reviewer,
                                     "rejections": [r.__dict__ for r in safe.rejections]})
        _review(store, audit_id, "edited" if labels is not None else "approved", reviewer, safe.plan, "")
    return Approval(safe.plan, effects, safe.rejections)


def reject(store: Store, policy: Policy, audit_id: int, reviewer: str, note: str = "") -> None:
    """Refuse a waiting plan: nothing is written to the issue; the refusal is a correction."""
    item = pending(store, policy, audit_id)
    with store.transaction():
        _review(store, audit_id, "rejected", reviewer, item.row.plan, note[:2000])


def _review(store: Store, audit_id: int, verdict: str, reviewer: str, plan: Plan, note: str) -> None:
    store.db.execute("INSERT INTO reviews VALUES (?,?,?,?,?,?)",
                     (audit_id, verdict, reviewer[:100], datetime.now(UTC).isoformat(timespec="seconds"),
                      json.dumps(plan.to_json()), note))
