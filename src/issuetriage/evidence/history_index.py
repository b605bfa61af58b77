"""The index of a built history (a folder's `index.sqlite3` and `vectors_*.npy`, or in memory).

- SQLite: `past` (each labelled issue's title, the start of its body, its gold labels), its FTS5
  index `past_fts` (the candidates' engine), `terms` (word → id, document frequency) and `meta`
  (repository, how many issues, the stop words).
- Arrays (CSR rows, one per issue, sorted by number): each issue's word ids, counts and TF-IDF
  weights, frozen at build; read memory-mapped from a folder (`allow_pickle=False`), so a query
  touches only its candidates' rows.

`update` brings an index to a new set of issues: only new or changed issues are tokenised and
indexed again; the statistics are then refrozen with array operations (linear in the history).
"""

from __future__ import annotations

import json
import sqlite3
from collections import Counter
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from scipy.sparse import csr_matrix

from issuetriage.evidence.history import (
    BODY_CHARS,
    LIMIT,
    Filed,
    History,
    cosines,
    document,
    english_stop_words,
    idf,
    words,
)
from issuetriage.models import Issue

SCHEMA = """
CREATE TABLE past (number INTEGER PRIMARY KEY, title TEXT NOT NULL, body TEXT NOT NULL, labels TEXT NOT NULL);
CREATE VIRTUAL TABLE past_fts USING fts5(title, body, content='past', content_rowid='number',
                                         tokenize="unicode61 tokenchars '_'");
CREATE TABLE terms (term TEXT PRIMARY KEY, id INTEGER NOT NULL, df INTEGER NOT NULL) WITHOUT ROWID;
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;
"""
ARRAYS = ("numbers", "indptr", "indices", "counts", "data")
Row = tuple[int, np.ndarray, np.ndarray]  # issue number, word ids, counts


class FolderIndex:
    """Past issues, their FTS5 index, the frozen word statistics and vectors."""

    def __init__(self, db: sqlite3.Connection, arrays: dict[str, np.ndarray]) -> None:
        self.db = db
        self.arrays = arrays
        self._matrix: Any = None
        meta = dict(db.execute("SELECT key, value FROM meta").fetchall())
        self.repo = meta["repo"]
        self.issues = int(meta["issues"])
        self.stop = frozenset(json.loads(meta["stop"]))

    @classmethod
    def create(cls, path: Path | None, repo: str, rows: Iterable[tuple[Filed | Issue, Sequence[str]]],
               stop: frozenset[str]) -> FolderIndex:
        """Index labelled issues (labels already the gold ones) into a new database (None: in memory)."""
        db = sqlite3.connect(":memory:" if path is None else path, check_same_thread=False)
        db.executescript(SCHEMA)
        with db:
            db.executemany("INSERT INTO meta VALUES (?,?)",
                           [("repo", repo), ("issues", "0"), ("stop", json.dumps(sorted(stop)))])
        empty: dict[str, np.ndarray] = {"numbers": np.zeros(0, np.int64), "indptr": np.zeros(1, np.int64),
                 "indices": np.zeros(0, np.int32), "counts": np.zeros(0, np.uint16),
                 "data": np.zeros(0, np.float64)}
        index = cls(db, empty)
        index.update(rows, replace_all=False)
        return index

    @classmethod
    def open(cls, db: sqlite3.Connection, folder: Path) -> FolderIndex:
        """A built folder's index, its arrays memory-mapped."""
        arrays = {name: np.load(folder / f"vectors_{name}.npy", mmap_mode="r", allow_pickle=False)
                  for name in ARRAYS}
        return cls(db, arrays)

    def save_arrays(self, folder: Path) -> None:
        for name in ARRAYS:
            np.save(folder / f"vectors_{name}.npy", np.ascontiguousarray(self.arrays[name]))

    # -- queries (evidence.history.Vocabulary and SearchIndex) -------------------------------------

    def lookup(self, terms: Iterable[str]) -> dict[str, tuple[int, int]]:
        wanted = list(terms)
        out: dict[str, tuple[int, int]] = {}
        for start in range(0, len(wanted), 500):
            part = wanted[start:start + 500]
            for term, i, df in self.db.execute(
                    f"SELECT term, id, df FROM terms WHERE term IN ({','.join('?' * len(part))})", part):
                out[term] = (i, df)
        return out

    def cosines(self, numbers: Sequence[int], query: dict[int, float]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        if self._matrix is None:
            a = self.arrays
            terms = int(a["indices"].max()) + 1 if len(a["indices"]) else 0
            self._matrix = csr_matrix((a["data"], a["indices"], a["indptr"]),
                                      shape=(len(a["numbers"]), terms), copy=False)
        return cosines(self._matrix, self.arrays["numbers"], numbers, query)

    def matches(self, repo: str, phrases: Sequence[str], before: int) -> list[int]:
        if repo != self.repo or not phrases:
            return []
        return [n for (n,) in self.db.execute("SELECT rowid FROM past_fts WHERE past_fts MATCH ? AND rowid < ? LIMIT ?",
                                              (" OR ".join(phrases), before, LIMIT))]

    def labels(self, repo: str, numbers: Sequence[int]) -> dict[int, tuple[str, ...]]:
        if repo != self.repo or not numbers:
            return {}
        wanted = list(numbers)
        return {n: tuple(json.loads(labels)) for n, labels in self.db.execute(
            f"SELECT number, labels FROM past WHERE number IN ({','.join('?' * len(wanted))})", wanted)}

    def texts(self, repo: str, numbers: Sequence[int]) -> dict[int, tuple[str, str]]:
        if repo != self.repo or not numbers:
            return {}
        wanted = list(numbers)
        return {n: (t, b) for n, t, b in self.db.execute(
            f"SELECT number, title, body FROM past WHERE number IN ({','.join('?' * len(wanted))})", wanted)}

    def count(self, repo: str) -> int:
        return self.issues if repo == self.repo else 0

    # -- building and updating ---------------------------------------------------------------------

    def update(self, rows: Iterable[tuple[Filed | Issue, Sequence[str]]], replace_all: bool = True) -> int:
        """Bring the index to `rows` (with `replace_all`, issues not among them leave it); returns
        how many issues were added, changed or removed."""
        db = self.db
        ids = {term: i for term, i in db.execute("SELECT term, id FROM terms")}
        old = {n: (t, b, labels) for n, t, b, labels in db.execute("SELECT number, title, body, labels FROM past")}
        kept = self._rows()
        fresh: list[Row] = []
        with db:
            for issue, labels in rows:
                body, label_json = issue.body[:BODY_CHARS], json.dumps(list(labels))
                before = old.pop(issue.number, None)
                if before == (issue.title, body, label_json):
                    continue
                if before is not None:
                    self._forget(issue.number, before[0], before[1])
                    kept.pop(issue.number, None)
                db.execute("INSERT INTO past VALUES (?,?,?,?)", (issue.number, issue.title, body, label_json))
                db.execute("INSERT INTO past_fts (rowid, title, body) VALUES (?,?,?)", (issue.number, issue.title, body))
                fresh.append(self._vectorise(issue.number, document(issue.title, body), ids))
            for number, (title, body, _) in old.items() if replace_all else ():
                self._forget(number, title, body)
                kept.pop(number, None)
            self._freeze([*kept.values(), *fresh], ids)
        return len(fresh) + (len(old) if replace_all else 0)

    def _rows(self) -> dict[int, Row]:
        a = self.arrays
        return {int(n): (int(n), a["indices"][a["indptr"][r]:a["indptr"][r + 1]],
                         a["counts"][a["indptr"][r]:a["indptr"][r + 1]]) for r, n in enumerate(a["numbers"])}

    def _vectorise(self, number: int, text: str, ids: dict[str, int]) -> Row:
        counts = Counter(words(text, self.stop))
        for term in counts:
            ids.setdefault(term, len(ids))
        order = sorted(counts, key=ids.__getitem__)
        return (number, np.array([ids[t] for t in order], dtype=np.int32),
                np.array([min(counts[t], 65535) for t in order], dtype=np.uint16))

    def _forget(self, number: int, title: str, body: str) -> None:
        self.db.execute("INSERT INTO past_fts (past_fts, rowid, title, body) VALUES ('delete',?,?,?)",
                        (number, title, body))
        self.db.execute("DELETE FROM past WHERE number=?", (number,))

    def _freeze(self, rows: list[Row], ids: dict[str, int]) -> None:
        """Document frequencies, idf and each vector's normalised weights, from the word counts."""
        rows.sort(key=lambda row: row[0])
        n = len(rows)
        lengths = np.array([len(r[1]) for r in rows], dtype=np.int64)
        indptr = np.concatenate(([0], np.cumsum(lengths))).astype(np.int64)
        indices = np.concatenate([r[1] for r in rows]) if rows else np.zeros(0, np.int32)
        counts = np.concatenate([r[2] for r in rows]) if rows else np.zeros(0, np.uint16)
        df = np.bincount(indices, minlength=len(ids))
        term_idf = np.array([idf(int(d), n) for d in df], dtype=np.float64)
        raw = (1.0 + np.log(counts.astype(np.float64))) * term_idf[indices] if len(counts) else np.zeros(0)
        row_of = np.repeat(np.arange(n), lengths)
        norms = np.sqrt(np.bincount(row_of, weights=raw * raw, minlength=n))
        norms[norms == 0] = 1.0
        self._matrix = None
        self.arrays = {"numbers": np.array([r[0] for r in rows], dtype=np.int64), "indptr": indptr,
                       "indices": indices.astype(np.int32), "counts": counts.astype(np.uint16),
                       "data": (raw / norms[row_of]).astype(np.float64)}
        self.issues = n
        by_id = sorted(ids.items(), key=lambda item: item[1])
        self.db.execute("DELETE FROM terms")
        self.db.executemany("INSERT INTO terms VALUES (?,?,?)",
                            ((term, i, int(df[i])) for term, i in by_id))
        self.db.execute("UPDATE meta SET value=? WHERE key='issues'", (str(n),))


def memory_history(repo: str, past: Iterable[tuple[Filed | Issue, Sequence[str]]]) -> History:
    """A history held in memory (an in-memory SQLite FTS5 index): `eval` folds, JSONL files."""
    rows = sorted(((i, tuple(sorted(labels))) for i, labels in past if i.repo == repo and labels),
                  key=lambda row: row[0].number)
    index = FolderIndex.create(None, repo, rows, english_stop_words())
    return History(repo, index, index)
