"""Where labelled issues come from for `train`, `eval` and `history build`: a corpus file (JSON
Lines, or a `gh issue list --json` array) or the store (`--store DB`), and which repository
they are of (for the profile, when none is named)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from issuetriage.errors import UserError


def corpus_repo(path: Path) -> str | None:
    """The repository of a corpus's first record (its `repo`, or its URL's), None when it names
    none: unreadable files are left for the reader to report."""
    from issuetriage.records import issue_from_record

    try:
        with path.open("rb") as fh:
            head = fh.read(4096).lstrip()
            fh.seek(0)
            if head.startswith(b"["):
                items = json.loads(fh.read())
                first = items[0] if isinstance(items, list) and items else None
            else:
                first = next((json.loads(line) for line in fh if line.strip()), None)
        return issue_from_record(first, "corpus", None).repo if isinstance(first, dict) else None
    except (OSError, ValueError, UserError):  # ValueError: JSON and validation errors alike
        return None


@contextmanager
def labelled_issues(corpus: Path | None, store: str | None, profile: str | None) -> Iterator[tuple[Path, str]]:
    """(a corpus file, the profile) for the command: the file given, else the store's issues of
    the profile's repository written to a temporary corpus that goes when the command ends."""
    from issuetriage.policy import load_profile
    from issuetriage.policy.discover import profile_for

    if corpus is None and store is None:
        raise UserError("give one source of labelled issues: --corpus FILE (JSONL, or a `gh issue list "
                        "--json number,title,body,labels,state` array) or --store DB")
    if corpus is not None:
        yield corpus, profile_for(profile, corpus_repo(corpus))
        return
    from issuetriage.store.corpus import store_repo, temporary_corpus
    from issuetriage.store.sqlite import Store

    assert store is not None
    with Store(store, create=False) as db:
        chosen = profile_for(profile, store_repo(db))
        with temporary_corpus(db, load_profile(chosen).meta.repo) as path:
            yield path, chosen
