"""Builders for tests: issues and judgments with sensible defaults (import from any test folder)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from issuetriage.cli.app import main
from issuetriage.judges.base import Judgment, Kind, LabelScore, MissingRepro
from issuetriage.models import Comment, Issue

SHARED = Path(__file__).resolve().parents[1].parent / "shared"


def make_issue(title: str = "A bug", body: str = "Something fails.", *, labels: list[str] | tuple = (),
               number: int = 7, repo: str = "pytorch/pytorch", comments: list[dict] | tuple = (),
               **extra: Any) -> Issue:
    """An issue with sensible defaults; pass only what the test is about."""
    return Issue(repo=repo, number=number, title=title, body=body, labels=tuple(labels),
                 comments=tuple(Comment(**c) for c in comments), **extra)


def make_judgment(kind: Kind = Kind.BUG, kind_confidence: float = 0.9,
                  labels: dict[str, float] | None = None, *, transfer: str | None = None,
                  transfer_confidence: float = 0.9, missing: MissingRepro | None = None,
                  escalate: tuple[str, ...] = (), high_priority: bool = False) -> Judgment:
    """A judgment as a judge would return it."""
    return Judgment(judge="test", kind=kind, kind_confidence=kind_confidence,
                    labels=tuple(LabelScore(name=n, confidence=c) for n, c in (labels or {}).items()),
                    transfer_repo=transfer, transfer_confidence=transfer_confidence if transfer else 0.0,
                    missing_repro=missing, escalate_reasons=escalate, high_priority=high_priority)


def run_cli(capsys: Any, *args: str) -> tuple[int, str, str]:
    """Run the CLI in-process: (exit code, stdout, stderr)."""
    import pytest

    with pytest.raises(SystemExit) as exc:
        main(list(args))
        raise SystemExit(0)
    out = capsys.readouterr()
    return exc.value.code or 0, out.out, out.err
