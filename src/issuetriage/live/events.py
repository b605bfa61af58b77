"""Label events (who added or removed which label, when) as the store keeps them, and the label
history they replay to. GitHub's events API is the source; `sync` stores them."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from issuetriage.errors import UserError
from issuetriage.models import Issue
from issuetriage.store.sqlite import Store

KINDS = frozenset({"labeled", "unlabeled", "closed", "reopened"})


@dataclass(frozen=True)
class LabelEvent:
    """One event that changed an issue's labels or state."""

    number: int
    event_id: int
    event: str
    label: str | None
    actor: str
    created_at: datetime


def from_github(number: int, data: Any) -> LabelEvent | None:
    """Our event from one item of the events API; None for kinds we do not track."""
    if not isinstance(data, dict) or data.get("event") not in KINDS:
        return None
    label = data.get("label") if isinstance(data.get("label"), dict) else None
    actor: dict[str, Any] = data["actor"] if isinstance(data.get("actor"), dict) else {}
    try:
        return LabelEvent(number, int(data["id"]), str(data["event"]),
                          str(label["name"]) if label else None, str(actor.get("login") or "ghost"),
                          datetime.fromisoformat(str(data["created_at"]).replace("Z", "+00:00")))
    except (KeyError, TypeError, ValueError):
        raise UserError(f"#{number}: malformed issue event {str(data)[:80]!r}") from None


def save(store: Store, repo: str, number: int, events: Iterable[LabelEvent]) -> int:
    """Replace the stored events of one issue (the API returns the whole history each time)."""
    rows = [(repo, number, e.event_id, e.event, e.label, e.actor, e.created_at.isoformat())
            for e in events]
    with store.transaction():
        store.db.execute("DELETE FROM label_events WHERE repo=? AND number=?", (repo, number))
        store.db.executemany("INSERT OR REPLACE INTO label_events VALUES (?,?,?,?,?,?,?)", rows)
    return len(rows)


def load(store: Store, repo: str) -> dict[int, list[LabelEvent]]:
    """Every stored event of `repo`, per issue, oldest first."""
    out: dict[int, list[LabelEvent]] = {}
    for r in store.db.execute("SELECT * FROM label_events WHERE repo=? ORDER BY number, created_at, "
                              "event_id", (repo,)):
        out.setdefault(r["number"], []).append(LabelEvent(
            r["number"], r["event_id"], r["event"], r["label"], r["actor"],
            datetime.fromisoformat(r["created_at"])))
    return out


def labels_at(events: Iterable[LabelEvent], when: datetime | None = None) -> set[str]:
    """The labels the issue carried at `when` (default: after every event)."""
    labels: set[str] = set()
    for e in events:
        if when is not None and e.created_at > when:
            break
        if e.event == "labeled" and e.label:
            labels.add(e.label)
        elif e.event == "unlabeled" and e.label:
            labels.discard(e.label)
    return labels


def check_complete(issue: Issue, events: list[LabelEvent], local: frozenset[str] = frozenset()) -> None:
    """Fail closed on a gap: the events (and the `local` labels plans applied to the mirror, which
    GitHub never saw) must explain the labels the issue carries now, and never remove a label
    that was not there."""
    labels: set[str] = set()
    for e in events:
        if e.event == "unlabeled" and e.label not in labels:
            raise UserError(f"{issue.ref}: event {e.event_id} removes {e.label!r}, which no earlier "
                            "event added (a gap in the event stream; sync again)")
        if e.event == "labeled" and e.label:
            labels.add(e.label)
        elif e.event == "unlabeled":
            labels.discard(e.label or "")
    if labels != set(issue.labels) - (local - labels):
        missing = sorted(set(issue.labels) ^ labels)
        raise UserError(f"{issue.ref}: its label events do not explain its labels ({missing[:3]}; "
                        "a gap in the event stream; sync again)")
