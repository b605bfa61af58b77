"""Where a history is built from: a labelled corpus (JSON Lines, or a `gh issue list --json`
array) or the store's mirror of the repository. Either way: the profile's repository only, each
issue as filed (title and body), with its gold labels (the catalog's content labels)."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path

from issuetriage.errors import UserError
from issuetriage.evidence.history import Filed, Past, filed
from issuetriage.judges.learned.corpus import Example, gold_labels, scan_corpus
from issuetriage.policy import Policy


@dataclass(frozen=True)
class Source:
    """The issues a history is built from, and where they came from."""

    kind: str  # "corpus" or "store"
    name: str  # the file, or the store (never a password)
    sha256: str  # of the file, or of the rows read from the store
    issues: int  # issues of the repository read (labelled or not)
    past: Past  # the labelled ones, oldest first, with their gold labels
    skipped: tuple[str, ...] = ()  # corpus lines left out, and why

    def manifest(self) -> dict[str, object]:
        return {"kind": self.kind, "name": self.name, "sha256": self.sha256}


def from_corpus(path: Path, policy: Policy) -> Source:
    """A labelled corpus file, read a record at a time (only each labelled issue's title, start
    of the body and gold labels are kept); an issue of another repository is an error."""
    past: Past = []
    count = 0

    def keep(example: Example) -> None:
        nonlocal count
        count += 1
        issue = example.issue
        if issue.repo != policy.meta.repo:
            raise UserError(f"{path}: issue {issue.ref} is not from the profile's repository "
                            f"{policy.meta.repo} (profile {policy.name})")
        if example.gold:
            past.append((filed(issue), tuple(sorted(example.gold))))

    problems, sha256 = scan_corpus(path, policy, keep)
    past.sort(key=lambda row: row[0].number)
    if not past:
        raise UserError(f"{path}: no issue carries a label of the profile's catalog "
                        f"({count} issues read); nothing to build a history from")
    return Source("corpus", str(path), sha256, count, past, tuple(str(p) for p in problems))


def from_store(store: object, policy: Policy) -> Source:
    """The store's mirror of the profile's repository (issues, not pull requests)."""
    repo = policy.meta.repo
    digest = hashlib.sha256()
    past: Past = []
    count = 0
    rows = store.db.execute(  # type: ignore[attr-defined]
        "SELECT number, title, body, labels FROM issues WHERE repo=? AND is_pull_request=0 ORDER BY number",
        (repo,))
    for number, title, body, labels in rows:
        count += 1
        digest.update(json.dumps([number, title, body, labels]).encode())
        gold = tuple(sorted(gold_labels(json.loads(labels), policy)))
        if gold:
            past.append((Filed(repo, number, title, body), gold))
    if not past:
        raise UserError(f"{store.path}: no issue of {repo} carries a label of the profile's "  # type: ignore[attr-defined]
                        f"catalog ({count} issues stored); nothing to build a history from "
                        "(sync or import labelled issues first)")
    return Source("store", str(store.path), digest.hexdigest(), count, past)  # type: ignore[attr-defined]
