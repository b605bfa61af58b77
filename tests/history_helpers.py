"""A small made-up labelled history (two kinds of report the profile's keywords know nothing of)
and the history folder built from it, for the history tests."""

from __future__ import annotations

import json
from pathlib import Path

from builders import make_issue

NCCL_TITLE = "zorblax frobnicator {i} stalls the quux ring"
DOCS_TITLE = "plimsoll wibble {i} paints the docs page"


def made_up_records(n_each: int = 20, repo: str = "pytorch/pytorch") -> list[dict]:
    """Labelled issues numbered 10.. (oldest first), as corpus records."""
    rows = []
    for i in range(n_each):
        for number, title, label in ((10 + 2 * i, NCCL_TITLE, "module: nccl"), (11 + 2 * i, DOCS_TITLE, "module: docs")):
            text = title.format(i=i)
            rows.append({"repo": repo, "number": number, "title": text, "body": text, "labels": [label]})
    return rows


def write_corpus(path: Path, records: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def new_issue(number: int = 500, title: str = "zorblax frobnicator stalls the quux ring again"):
    """A bug report about the made-up `zorblax` (a traceback, so the tree labels it)."""
    return make_issue(number=number, title=title, body="zorblax frobnicator stalls, it worked before.\n\n```\n"
                      "Traceback (most recent call last):\nRuntimeError: quux ring stalled\n```")


def issue_file(path: Path, number: int = 500) -> Path:
    issue = new_issue(number)
    path.write_text(json.dumps({"repo": issue.repo, "number": issue.number, "title": issue.title,
                                "body": issue.body, "labels": []}), encoding="utf-8")
    return path
