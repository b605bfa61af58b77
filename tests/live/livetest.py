"""Helpers for the live-quality tests: a store with plans and the label events humans made."""

from __future__ import annotations

import copy
import itertools
from datetime import UTC, datetime, timedelta
from typing import Any

from issuetriage.live import events as label_events
from issuetriage.live.events import LabelEvent
from issuetriage.models import Decision, Plan
from issuetriage.policy import Policy
from issuetriage.store.sqlite import Store

REPO = "pytorch/pytorch"
HUMAN = "a-maintainer"
BOT = "issuetriage-bot"
_ids = itertools.count(1)


def tuned(policy: Policy, live: dict[str, Any] | None = None, stale: dict[str, Any] | None = None) -> Policy:
    """The policy with some [live] / [stale] settings changed (profiles are data: we copy)."""
    meta = policy.meta
    changed = copy.copy(policy)
    changed.meta = meta.model_copy(update={"live": meta.live.model_copy(update=live or {}),
                                           "stale": meta.stale.model_copy(update=stale or {})})
    return changed


def later(hours: float = 1) -> datetime:
    """A time after every plan recorded so far (plans are stamped with the real clock)."""
    return datetime.now(UTC) + timedelta(hours=hours)


def record(store: Store, number: int, labels: tuple[str, ...], *, shadow: bool = True,
           decision: Decision = Decision.LABEL, judge: str = "heuristic", close: bool = False) -> int:
    plan = Plan(repo=REPO, number=number, decision=decision, labels_added=labels, close=close)
    return store.record(plan, judge=judge, extra={"shadow": True} if shadow else {})


def happened(store: Store, number: int, *steps: tuple[str, str | None, str], at: datetime | None = None) -> None:
    """Store events (kind, label, actor) for issue `number`, in order, a minute apart, and make
    the stored issue's labels and state what they lead to."""
    start = at or later()
    events = [LabelEvent(number, next(_ids), kind, label, actor, start + timedelta(minutes=i))
              for i, (kind, label, actor) in enumerate(steps)]
    existing = label_events.load(store, REPO).get(number, [])
    label_events.save(store, REPO, number, existing + events)
    issue = store.get_issue(REPO, number)
    state = issue.state
    for e in events:
        state = {"closed": "closed", "reopened": "open"}.get(e.event, state)
    labels = label_events.labels_at(existing + events)
    store.put_issue(issue.model_copy(update={"labels": tuple(sorted(labels)), "state": state}))
