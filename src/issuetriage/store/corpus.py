"""The store as a labelled corpus: its mirror of one repository written as JSON Lines, the shape
`train`, `eval` and `history build --corpus` read (each issue's text as filed, its labels and
state now). Comments stay out: a corpus judges an issue as it was filed."""

from __future__ import annotations

import json
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
