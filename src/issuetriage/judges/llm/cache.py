"""On-disk answer cache: one SQLite table keyed by (content hash, prompt version, model).

The content hash covers the issue text as sent together with the policy slice, so an edited issue
or profile misses the cache. Only validated answers are stored, as JSON text (never pickled)."""

from __future__ import annotations

import json
import os
import sqlite3
import sys
import tempfile
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from issuetriage.judges.llm.providers import read_recordings

_SCHEMA = """
CREATE TABLE IF NOT EXISTS answers (
  content_hash TEXT NOT NULL,
  prompt_version TEXT NOT NULL,
  model TEXT NOT NULL,
  answer TEXT NOT NULL,
  tokens_in INTEGER NOT NULL,
  tokens_out INTEGER NOT NULL,
  PRIMARY KEY (content_hash, prompt_version, model)
)"""


@dataclass(frozen=True)
class Cached:
    """A stored answer and what it cost when it was first bought."""

    answer: dict[str, Any]
    tokens_in: int
    tokens_out: int


class AnswerCache:
    """Answers by (content hash, prompt version, model) in `<folder>/answers.sqlite3`."""

    def __init__(self, folder: Path) -> None:
        folder.mkdir(parents=True, exist_ok=True)
        self.path = folder / "answers.sqlite3"
        with self._connect() as db:
            db.execute(_SCHEMA)

    @contextmanager
    def _connect(self) -> Iterator[sqlite3.Connection]:
        db = sqlite3.connect(self.path, timeout=30)
        try:
            with db:
                yield db
        finally:
            db.close()

    def get(self, content_hash: str, prompt_version: str, model: str) -> Cached | None:
        with self._connect() as db:
            row = db.execute(
                "SELECT answer, tokens_in, tokens_out FROM answers "
                "WHERE content_hash = ? AND prompt_version = ? AND model = ?",
                (content_hash, prompt_version, model)).fetchone()
        if row is None:
            return None
        try:
            answer = json.loads(row[0])
        except json.JSONDecodeError:
            return None
        return Cached(answer, row[1], row[2]) if isinstance(answer, dict) else None

    def put(self, content_hash: str, prompt_version: str, model: str, answer: dict[str, Any],
            tokens_in: int, tokens_out: int) -> None:
        with self._connect() as db:
            db.execute("INSERT OR REPLACE INTO answers VALUES (?, ?, ?, ?, ?, ?)",
                       (content_hash, prompt_version, model, json.dumps(answer, sort_keys=True),
                        tokens_in, tokens_out))

    def __len__(self) -> int:
        with self._connect() as db:
            return int(db.execute("SELECT COUNT(*) FROM answers").fetchone()[0])


class Recorder:
    """Writes every validated answer (bought or cached) to a JSONL file the replay provider reads
    (docs/llm.md "Recorded answers"): record once with a real key, re-score after every profile
    or tree change. One line per issue, the newest answer winning; the file is rewritten whole
    through a temporary file, so a reader never sees half of it. `shared` gives every judge of a
    process (one per worker thread) the same recorder for a file; one process at a time."""

    _open: dict[Path, Recorder] = {}
    _open_lock = threading.Lock()

    def __init__(self, path: Path, model: str, repo: str | None = None, profile: str | None = None) -> None:
        self.path, self.model, self.profile = path, model, profile
        self._lock = threading.Lock()
        self._rows = read_recordings(path, repo) if path.exists() else {}

    @classmethod
    def shared(cls, path: Path, model: str, repo: str | None = None, profile: str | None = None) -> Recorder:
        with cls._open_lock:
            key = path.resolve()
            if key not in cls._open:
                cls._open[key] = cls(path, model, repo, profile)
            return cls._open[key]

    def put(self, repo: str, number: int, answer: dict[str, Any], version: str, digest: str) -> None:
        """Record one answer; a file that cannot be written is a warning, never a lost triage."""
        row = {"repo": repo, "number": number, "answer": answer, "model": self.model,
               "prompt_version": version, "prompt_digest": digest}
        if self.profile is not None:  # `history build --answers` refuses another profile's answers
            row["profile"] = self.profile
        with self._lock:
            self._rows[(repo, number)] = row
            text = "".join(json.dumps(r, sort_keys=True) + "\n" for _, r in sorted(self._rows.items()))
            tmp: str | None = None
            try:
                self.path.parent.mkdir(parents=True, exist_ok=True)
                fd, tmp = tempfile.mkstemp(prefix=".recording-", dir=self.path.parent)
                with os.fdopen(fd, "w", encoding="utf-8") as fh:
                    fh.write(text)
                os.replace(tmp, self.path)
            except OSError as exc:
                if tmp is not None:
                    Path(tmp).unlink(missing_ok=True)
                print(f"warning: {self.path}: answer for {repo}#{number} not recorded ({exc})",
                      file=sys.stderr)
