"""The GitHub side's store tables: sync cursors (ETag, `since`), repo labels, backlog progress.

The tables themselves are created by the store's migration 2, so any store opens everywhere.
"""

from __future__ import annotations

from datetime import UTC, datetime

from issuetriage.github.client import RepoLabel
from issuetriage.store.sqlite import Store


def now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def cursor(store: Store, repo: str) -> tuple[str | None, str | None]:
    """(since, etag) from the last sync of `repo`."""
    row = store.db.execute("SELECT since, etag FROM github_sync WHERE repo=?", (repo,)).fetchone()
    return (row["since"], row["etag"]) if row else (None, None)


def save_cursor(store: Store, repo: str, since: str | None, etag: str | None) -> None:
    store.db.execute("INSERT OR REPLACE INTO github_sync VALUES (?,?,?,?)", (repo, since, etag, now()))


def save_labels(store: Store, repo: str, labels: tuple[RepoLabel, ...]) -> None:
    with store.transaction():
        store.db.execute("DELETE FROM github_labels WHERE repo=?", (repo,))
        store.db.executemany("INSERT INTO github_labels VALUES (?,?,?,?)",
                             [(repo, x.name, x.color, x.description) for x in labels])


def stored_labels(store: Store, repo: str) -> tuple[RepoLabel, ...]:
    rows = store.db.execute("SELECT * FROM github_labels WHERE repo=? ORDER BY name", (repo,))
    return tuple(RepoLabel(r["name"], r["color"], r["description"]) for r in rows)


def finished(store: Store, repo: str) -> set[int]:
    """Issues a backlog sweep already finished (so a resumed sweep skips them)."""
    rows = store.db.execute("SELECT number FROM github_backlog WHERE repo=?", (repo,))
    return {r["number"] for r in rows}


def mark_finished(store: Store, repo: str, number: int, outcome: str) -> None:
    store.db.execute("INSERT OR REPLACE INTO github_backlog VALUES (?,?,?,?)", (repo, number, outcome, now()))
