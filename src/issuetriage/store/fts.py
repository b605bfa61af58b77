"""The store's own full-text index of its issues, so history retrieval reads the live mirror.

Whatever reaches the store (a synced or imported issue, a label event, a correction, an approved
plan) is what the next issue's similar past issues are drawn from: the labels are read from the
`issues` table at query time, and the index follows the text in the same transaction as the
write (SQLite: an FTS5 table kept by triggers; PostgreSQL: a generated `tsvector` column with a
GIN index). Nothing is rebuilt. The word statistics and the learned parts still come from the
built history folder (`judges/history_folder.py`), which the store also remembers per repository
(`history_folders`), so `serve`, `worker`, `run`, `backlog`, `triage --store` and `mcp --store`
find it without a setting.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from contextlib import AbstractContextManager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Protocol

from issuetriage.evidence.history import BODY_CHARS, LIMIT


class Store(Protocol):
    """What this module reads of `store.sqlite.Store` (which imports this module for its schema)."""

    engine: Any
    db: Any

    def transaction(self) -> AbstractContextManager[Any]: ...

_BODY = f"substr({{0}}.body, 1, {BODY_CHARS})"
_NEW, _OLD = _BODY.format("new"), _BODY.format("old")
FOLDERS = """
CREATE TABLE history_folders (
    repo TEXT PRIMARY KEY, path TEXT NOT NULL, built_at TEXT NOT NULL, remembered_at TEXT NOT NULL);
CREATE TABLE history_status (repo TEXT PRIMARY KEY, problem TEXT NOT NULL, checked_at TEXT NOT NULL)"""
SQLITE = FOLDERS + f""";
CREATE VIRTUAL TABLE issue_fts USING fts5(title, body, content='', tokenize="unicode61 tokenchars '_'");
CREATE TRIGGER issue_fts_insert AFTER INSERT ON issues BEGIN
    INSERT INTO issue_fts (rowid, title, body) VALUES (new.rowid, new.title, {_NEW}); END;
CREATE TRIGGER issue_fts_delete AFTER DELETE ON issues BEGIN
    INSERT INTO issue_fts (issue_fts, rowid, title, body) VALUES ('delete', old.rowid, old.title, {_OLD}); END;
CREATE TRIGGER issue_fts_update AFTER UPDATE OF title, body ON issues BEGIN
    INSERT INTO issue_fts (issue_fts, rowid, title, body) VALUES ('delete', old.rowid, old.title, {_OLD});
    INSERT INTO issue_fts (rowid, title, body) VALUES (new.rowid, new.title, {_NEW}); END;
INSERT INTO issue_fts (rowid, title, body) SELECT rowid, title, {_BODY.format('issues')} FROM issues
"""
POSTGRES = FOLDERS + f""";
ALTER TABLE issues ADD COLUMN search tsvector GENERATED ALWAYS AS (
    setweight(to_tsvector('simple', title), 'A') || setweight(to_tsvector('simple', left(body, {BODY_CHARS})), 'B')
) STORED;
CREATE INDEX issues_search ON issues USING GIN (search)
"""


class StoreIndex:
    """The store's issues of one repository as a search index (`evidence.history.SearchIndex`)."""

    def __init__(self, store: Store) -> None:
        self.store = store

    def matches(self, repo: str, phrases: Sequence[str], before: int) -> list[int]:
        if not phrases:
            return []
        if self.store.engine.dialect == "postgresql":
            query = " | ".join("(" + " <-> ".join(p.strip('"').split()) + ")" for p in phrases)
            rows = self.store.db.execute(
                "SELECT number FROM issues WHERE search @@ to_tsquery('simple', ?) AND repo=? AND number<? "
                "AND labels <> '[]' AND is_pull_request=0 LIMIT ?", (query, repo, before, LIMIT))
        else:
            rows = self.store.db.execute(
                "SELECT i.number FROM issue_fts JOIN issues AS i ON i.rowid = issue_fts.rowid "
                "WHERE issue_fts MATCH ? AND i.repo=? AND i.number<? AND i.labels <> '[]' "
                "AND i.is_pull_request=0 LIMIT ?", (" OR ".join(phrases), repo, before, LIMIT))
        return [int(row[0]) for row in rows]

    def labels(self, repo: str, numbers: Sequence[int]) -> dict[int, tuple[str, ...]]:
        return {n: tuple(json.loads(labels)) for n, labels in self._rows("labels", repo, numbers)}

    def texts(self, repo: str, numbers: Sequence[int]) -> dict[int, tuple[str, str]]:
        return {n: (title, body[:BODY_CHARS]) for n, title, body in self._rows("title, body", repo, numbers)}

    def _rows(self, columns: str, repo: str, numbers: Sequence[int]) -> list[Any]:
        wanted, out = list(numbers), []
        for start in range(0, len(wanted), 500):
            part = wanted[start:start + 500]
            out += [(int(row[0]), *row[1:]) for row in self.store.db.execute(
                f"SELECT number, {columns} FROM issues WHERE repo=? AND number IN ({','.join('?' * len(part))})",
                (repo, *part))]
        return out

    def count(self, repo: str) -> int:
        return int(self.store.db.execute("SELECT COUNT(*) FROM issues WHERE repo=? AND labels <> '[]'",
                                         (repo,)).fetchone()[0])


def remember_folder(store: Store, repo: str, folder: Path, manifest: dict[str, Any]) -> None:
    """The store remembers the history folder built for `repo` (its absolute path)."""
    with store.transaction():
        store.db.execute("INSERT OR REPLACE INTO history_folders VALUES (?,?,?,?)",
                         (repo, str(folder.resolve()), str(manifest.get("built_at", "")),
                          datetime.now(UTC).isoformat(timespec="seconds")))


def remembered_folder(store: Store, repo: str) -> Path | None:
    """The history folder the store remembers for `repo`, or None."""
    row = store.db.execute("SELECT path FROM history_folders WHERE repo=?", (repo,)).fetchone()
    return Path(row[0]) if row else None


def record_history_status(store: Store, repo: str, problem: str) -> None:
    """What a worker found when it last loaded `repo`'s history ("" when it loaded or none is set)."""
    with store.transaction():
        store.db.execute("INSERT OR REPLACE INTO history_status VALUES (?,?,?)",
                         (repo, problem, datetime.now(UTC).isoformat(timespec="seconds")))


def history_problems(store: Store) -> dict[str, str]:
    """Each repository's history status as the workers last recorded it (`/metrics`)."""
    return {r[0]: r[1] for r in store.db.execute("SELECT repo, problem FROM history_status ORDER BY repo")}
