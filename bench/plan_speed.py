"""Benchmark: plan N issues from ../shared/data (repeated) in one process; issues/s and peak memory.

Prints the figures for N and for N/10 in the same process, so the ratios show whether the
throughput holds and whether memory stays flat as the number of issues grows.

    python bench/plan_speed.py [--issues 10000] [--judge heuristic] [--model DIR] [--data FILE]
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import sys
import time
import tracemalloc
from pathlib import Path

from issuetriage.engine.pipeline import triage_with
from issuetriage.judges.factory import get_judge
from issuetriage.policy import load_profile
from issuetriage.records import parse_issue_record

DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "pytorch-issues-dev.jsonl"


def run(lines: list[str], n: int, judge, policy) -> tuple[float, float]:
    """Plan n issues streamed from `lines` (cycled); returns (issues/s, peak MiB traced)."""
    tracemalloc.start()
    start = time.perf_counter()
    for i, line in enumerate(itertools.islice(itertools.cycle(lines), n)):
        issue = parse_issue_record(line, f"line {i}")
        issue = issue.model_copy(update={"number": i + 1, "labels": ()})
        json.dumps(triage_with(issue, policy, judge).plan.to_json())
    elapsed = time.perf_counter() - start
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return n / elapsed, peak / 2**20


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--issues", type=int, default=10_000)
    parser.add_argument("--judge", default="heuristic")
    parser.add_argument("--model", default=None)
    parser.add_argument("--data", type=Path, default=DATA, help="the dev corpus (from a worktree outside the repo)")
    args = parser.parse_args()
    if not args.data.exists():
        print(f"skipped: {args.data} not found")
        return
    lines = [l for l in args.data.read_text().splitlines() if l.strip()]
    policy = load_profile("pytorch")
    judge = get_judge(args.judge, args.model)
    run(lines, 200, judge, policy)  # warm caches (matchers, regexes) outside the measurement
    small = max(1, args.issues // 10)
    rate_small, mem_small = run(lines, small, judge, policy)
    rate, mem = run(lines, args.issues, judge, policy)
    # tracemalloc slows Python down; measure raw speed once more without it, in wall time and in
    # this process's CPU time (issues per CPU-second = on one core, whatever else the machine runs)
    start, cpu = time.perf_counter(), time.process_time()
    for i, line in enumerate(itertools.islice(itertools.cycle(lines), args.issues)):
        issue = parse_issue_record(line, f"line {i}").model_copy(update={"number": i + 1, "labels": ()})
        json.dumps(triage_with(issue, policy, judge).plan.to_json())
    raw = args.issues / (time.perf_counter() - start)
    per_cpu = args.issues / (time.process_time() - cpu)
    print(f"judge={judge.name} data={args.data.name} ({len(lines)} distinct issues, cycled) python={sys.version.split()[0]}")
    print(f"baseline  {small:>6} issues: {rate_small:8.0f} issues/s (traced)  peak {mem_small:6.2f} MiB")
    print(f"measured  {args.issues:>6} issues: {rate:8.0f} issues/s (traced)  peak {mem:6.2f} MiB")
    print(f"untraced  {args.issues:>6} issues: {raw:8.0f} issues/s wall, {per_cpu:8.0f} issues per CPU-second "
          f"(load average {os.getloadavg()[0]:.1f})")
    print(f"ratios: throughput {rate / rate_small:.2f}x of baseline; peak memory {mem / mem_small:.2f}x "
          f"for {args.issues / small:.0f}x the issues (flat = ~1.0)")


if __name__ == "__main__":
    main()
