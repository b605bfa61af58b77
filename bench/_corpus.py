"""Shared by the benches: the dev corpus, repeated with fresh issue numbers to a target size."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

DEV = Path(__file__).resolve().parents[1] / ".." / "shared" / "data" / "pytorch-issues-dev.jsonl"


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
