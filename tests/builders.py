"""Builders for tests: issues and judgments with sensible defaults (import from any test folder)."""

from __future__ import annotations

from functools import partial
from pathlib import Path
from typing import Any

from issuetriage.cli.app import main
from issuetriage.judges.base import Judgment, Kind, LabelScore, MissingRepro
from issuetriage.models import Comment, Issue

SHARED = Path(__file__).resolve().parents[1].parent / "shared"


def make_issue(body: str = "Something fails.", title: str = "A bug", *, labels: list[str] | tuple = (),
               number: int = 7, repo: str = "pytorch/pytorch", author: str = "",
               comments: list | tuple = (), **extra: Any) -> Issue:
    """The one issue builder: sensible defaults, pass only what the test is about. A comment is
    an (author, body) pair, or a mapping of Comment fields when its time or association matter."""
    made = tuple(Comment(**c) if isinstance(c, dict) else Comment(author=c[0], body=c[1]) for c in comments)
    return Issue(repo=repo, number=number, title=title, body=body, author=author, labels=tuple(labels),
                 comments=made, **extra)


# The same builder with another folder's usual issue; a caller still overrides any keyword.
# The LLM tests' report: a CUDA svd crash with a repro and a traceback, filed by `reporter`.
svd_issue = partial(make_issue, title="Crash in torch.linalg.svd on CUDA", number=101, author="reporter", body=(
    "Calling torch.linalg.svd on a CUDA tensor raises an error.\n\n```python\nimport torch\n"
    "torch.linalg.svd(torch.randn(3, 3, device='cuda'))\n```\n\n```\nTraceback (most recent call last):\n"
    "  File \"x.py\", line 2\nRuntimeError: cusolver error\n```"))
# The scrub tests' report: a made-up project's, filed by `op` (the body comes first, positionally).
scrub_issue = partial(make_issue, title="something breaks", repo="acme/widgets", number=1, author="op")


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


def apply_plan(store: Any, plan: Any, policy: Any, judgment: Judgment | None = None) -> Any:
    """Apply a plan decided elsewhere to the stored issue through the one flow (guard, apply by
    difference, verify, audit); returns its effects."""
    from issuetriage.act.flow import act, given
    from issuetriage.act.hold import Mode
    from issuetriage.store.applier import StoreApplier

    report = act(StoreApplier(store), plan.repo, plan.number, policy, given(plan, judgment), Mode(apply=True),
                 audit=store, respect_marker=False)
    return report.effects
