"""Store tables the GitHub side adds: sync cursors (ETag, `since`), repo labels, backlog progress.

A new migration registered with the store; the existing migrations are not touched. The CLI
imports this module at start-up, so every command can open a store that `sync` has touched.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import TYPE_CHECKING

from issuetriage.store import Migration, Store, register_migration

if TYPE_CHECKING:
    from issuetriage.github.client import RepoLabel

MIGRATION = Migration(40, "github sync cursors, repo labels and backlog progress", """
    CREATE TABLE github_sync (
        repo TEXT PRIMARY KEY, since TEXT, etag TEXT, synced_at TEXT NOT NULL);
    CREATE TABLE github_labels (
        repo TEXT NOT NULL, name TEXT NOT NULL, color TEXT NOT NULL, description TEXT NOT NULL,
        PRIMARY KEY (repo, name));
    CREATE TABLE github_backlog (
        repo TEXT NOT NULL, number INTEGER NOT NULL, outcome TEXT NOT NULL, finished_at TEXT NOT NULL,
        PRIMARY KEY (repo, number))
""")
register_migration(MIGRATION)


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
    from issuetriage.github.client import RepoLabel
    rows = store.db.execute("SELECT * FROM github_labels WHERE repo=? ORDER BY name", (repo,))
    return tuple(RepoLabel(r["name"], r["color"], r["description"]) for r in rows)


def finished(store: Store, repo: str) -> set[int]:
    """Issues a backlog sweep already finished (so a resumed sweep skips them)."""
    rows = store.db.execute("SELECT number FROM github_backlog WHERE repo=?", (repo,))
    return {r["number"] for r in rows}


def mark_finished(store: Store, repo: str, number: int, outcome: str) -> None:
    store.db.execute("INSERT OR REPLACE INTO github_backlog VALUES (?,?,?,?)", (repo, number, outcome, now()))
