"""The store as a labelled corpus: its mirror of one repository written as JSON Lines, the shape
`train`, `eval` and `history build --corpus` read (each issue's text as filed, its labels and
state now). Comments stay out: a corpus judges an issue as it was filed."""

from __future__ import annotations

import json
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

from issuetriage.errors import UserError

if TYPE_CHECKING:
    from issuetriage.store.sqlite import Store

FIELDS = ("repo", "number", "title", "body", "author", "author_association", "state", "labels", "created_at")


def write_corpus(store: Store, repo: str, out: Path) -> int:
    """Write `repo`'s issues (no pull requests) from the store to `out`; returns how many. A store
    without any issue of `repo` is a one-line error and writes nothing."""
    rows = [issue for issue in store.issues(repo) if not issue.is_pull_request]
    if not rows:
        raise UserError(f"{store.path}: no issue of {repo} is stored (sync it first: issuetriage sync {repo})")
    with out.open("w", encoding="utf-8") as fh:
        for issue in rows:
            fh.write(json.dumps(issue.model_dump(mode="json", include=set(FIELDS))) + "\n")
    return len(rows)


@contextmanager
def temporary_corpus(store: Store, repo: str) -> Iterator[Path]:
    """`repo`'s issues from the store as a corpus file that goes when the block ends."""
    with tempfile.TemporaryDirectory(prefix="issuetriage-corpus-") as tmp:
        path = Path(tmp) / "store.jsonl"
        write_corpus(store, repo, path)
        yield path


def store_repo(store: Store) -> str | None:
    """The one repository whose issues the store holds (None: none, or several)."""
    repos = [row[0] for row in store.db.execute("SELECT DISTINCT repo FROM issues LIMIT 2")]
    return repos[0] if len(repos) == 1 else None
