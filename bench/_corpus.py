"""Shared by the benches: the dev corpus, repeated with fresh issue numbers to a target size."""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any

# the shared dev corpus beside the checkout; ISSUETRIAGE_DEV_CORPUS names it from a worktree elsewhere
DEV = Path(os.environ.get("ISSUETRIAGE_DEV_CORPUS") or
           Path(__file__).resolve().parents[1] / ".." / "shared" / "data" / "pytorch-issues-dev.jsonl")


def repeated_corpus(size: int, source: Path = DEV) -> Path | None:
    """A temporary JSONL file of `size` issues cycling through `source` (None when absent)."""
    if not source.exists():
        return None
    records = [json.loads(line) for line in source.read_text(encoding="utf-8").splitlines()
               if line.strip()]
    out = Path(tempfile.mkstemp(prefix="issuetriage-bench-", suffix=".jsonl")[1])
    with out.open("w", encoding="utf-8") as fh:
        for i in range(size):
            record = dict(records[i % len(records)])
            record["number"] = int(record["number"]) + 1_000_000 * (i // len(records))
            fh.write(json.dumps(record) + "\n")
    return out


def halves(source: Path = DEV) -> tuple[Path, Path] | None:
    """The tuning half and the held-out half of `source` as temporary JSONL files (None when
    absent): its lines after a `random.Random(0)` shuffle, first half to tune on, the rest
    measured once at the end (docs/evaluation.md "Held-out half")."""
    import random

    if not source.exists():
        return None
    lines = [line for line in source.read_text(encoding="utf-8").splitlines() if line.strip()]
    random.Random(0).shuffle(lines)
    cut = len(lines) // 2
    out = []
    for name, part in (("tune", lines[:cut]), ("held", lines[cut:])):
        path = Path(tempfile.mkstemp(prefix=f"issuetriage-{name}-", suffix=".jsonl")[1])
        path.write_text("".join(line + "\n" for line in part), encoding="utf-8")
        out.append(path)
    return out[0], out[1]


def plan_labels(result: Any) -> list[str]:
    """The content labels a replayed plan adds (an `IssueResult`), all of them: no filtering that
    depends on gold, so a blind reviewer sees what the bot would write."""
    from issuetriage.judges.learned.corpus import content_labels
    from issuetriage.policy import load_profile

    allowed = content_labels(load_profile("pytorch"))
    return sorted(label for label in result.plan_labels if label in allowed)


def write_label_sets(path: Path, results: Any) -> None:
    """One JSON line per replayed issue, `{"number", "labels"}` (`plan_labels`), by number: the
    label sets a blind adjudication reads."""
    path.write_text("".join(json.dumps({"number": r.number, "labels": plan_labels(r)}) + "\n"
                            for r in sorted(results, key=lambda r: r.number)), encoding="utf-8")
