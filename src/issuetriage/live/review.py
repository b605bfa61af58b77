"""The review queue: escalated and abstained issues and shadow plans awaiting a person. What a
reviewer does with one (approve, approve edited, reject) is `act/review.py`."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from issuetriage.errors import UserError
from issuetriage.live.outcomes import PlanRow, latest_per_issue, plan_rows
from issuetriage.models import Issue
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
