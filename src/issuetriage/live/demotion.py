"""Demotion: a label whose live precision falls below the profile's target is only suggested
(its plans wait in the review queue instead of being applied) until its precision recovers.

The status of each label is kept in the store (`label_status`, read by `Store.demoted`), so a change
is reported once, when it happens, and every acting command reads the same answer: the one flow
holds such plans (`act/hold.py`)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from issuetriage.live.outcomes import live_quality, outcomes, window
from issuetriage.policy import Policy
from issuetriage.store.sqlite import Store


@dataclass(frozen=True)
class Change:
    """A label demoted or restored, with the live figures that decided it."""

    label: str
    demoted: bool
    precision: float
    support: int

    def describe(self) -> str:
        verb = "demoted to suggest only" if self.demoted else "restored"
        return f"{self.label}: {verb} (live precision {self.precision:.2f} over {self.support} plan(s))"


def status(store: Store, repo: str) -> list[dict[str, Any]]:
    rows = store.db.execute("SELECT * FROM label_status WHERE repo=? ORDER BY label", (repo,))
    return [dict(r) for r in rows]


def update(store: Store, policy: Policy, now: datetime | None = None) -> list[Change]:
    """Judge every label with enough live plans in the window; record and return the changes.
    A label below `min_support` keeps its status: too little evidence either way."""
    live = policy.meta.live
    repo = policy.meta.repo
    since, until = window(now or datetime.now(UTC), live.window_days)
    quality = live_quality(outcomes(store, policy, repo, since, until), policy)
    was = store.demoted(repo)
    changes = []
    with store.transaction():
        for label, prf in quality.per_label.items():
            support = prf.tp + prf.fp
            if support < live.min_support:
                continue
            low = prf.precision < live.precision_target
            if low != (label in was):
                changes.append(Change(label, low, prf.precision, support))
            store.db.execute("INSERT OR REPLACE INTO label_status VALUES (?,?,?,?,?,?)",
                             (repo, label, int(low), prf.precision, support,
                              (now or datetime.now(UTC)).isoformat(timespec="seconds")))
    return changes
