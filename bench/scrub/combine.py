"""Combine results.json files of separate bench runs (e.g. competitors once, ours after a change).

    python bench/scrub/combine.py OURS_DIR/results.json COMPETITOR_DIR/results.json ...
Rows are joined by case; for each tool the last file that has it wins.
"""

from __future__ import annotations

import json
import sys

from bench_minimize import _line, _summary

TOOLS = ("ours", "pysource-minimize", "shrinkray")


def main(paths: list[str]) -> int:
    rows: dict[str, dict] = {}
    for path in paths:
        for row in json.load(open(path)):
            merged = rows.setdefault(row["case"], {k: row[k] for k in ("case", "original", "expected")})
            merged.update({tool: row[tool] for tool in TOOLS if tool in row})
    ordered = [rows[name] for name in sorted(rows)]
    for row in ordered:
        print(_line(row))
    print(_summary(ordered, list(TOOLS)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
