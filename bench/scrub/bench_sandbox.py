"""Bench: what one scrub run costs, cold (`run_script`) and warm (`WarmRunner`), sandboxed and not,
this checkout against a baseline checkout of issuetriage on the same machine.

Each round runs every case in a fresh subprocess per version (PYTHONPATH=<src>), alternating the
versions so load drift hits both, and times `--calls` calls; the report is the median seconds per
call over rounds and the ratio this/baseline.

    git worktree add --detach /tmp/base 2ea7557
    PYTHONPATH=src nice -n 10 python bench/scrub/bench_sandbox.py --baseline /tmp/base/src
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

SRC = Path(__file__).resolve().parents[2] / "src"
CODE = "import json\nvalue = json.loads('[1, 2]')\nraise ValueError(f'length mismatch {len(value)}')\n"
CASES = [("cold", "auto"), ("cold", None), ("warm", "auto"), ("warm", None)]


def worker(runner: str, isolation: str | None, calls: int) -> float:
    """Seconds per call (after one warm-up call) in this process, with whatever issuetriage is on the path."""
    from issuetriage.scrub.model import Interpreter, Limits
    from issuetriage.scrub.sandbox import run_script
    from issuetriage.scrub.warm import WarmRunner

    interp = Interpreter("py", Path(sys.executable))
    limits = Limits(timeout_s=30)
    if runner == "cold":
        run = lambda: run_script(CODE, interp, limits, isolation=isolation)  # noqa: E731
        run()
        start = time.perf_counter()
        results = [run() for _ in range(calls)]
    else:
        with WarmRunner(interp, limits, isolation=isolation, preload=("json",)) as warm:
            warm(CODE)
            start = time.perf_counter()
            results = [warm(CODE) for _ in range(calls)]
            assert warm.cold_runs == 0, "a warm run fell back cold"
    took = (time.perf_counter() - start) / calls
    assert all(r.exit_code == 1 and "length mismatch 2" in r.stderr for r in results), results[0]
    return took


def measure(src: str, runner: str, isolation: str | None, calls: int) -> float:
    argv = [sys.executable, __file__, "--worker", runner, str(isolation), "--calls", str(calls)]
    done = subprocess.run(argv, capture_output=True, text=True, env={"PYTHONPATH": src, "PATH": "/usr/bin:/bin"},
                          timeout=600)
    if done.returncode != 0:
        raise SystemExit(f"error: {src} {runner} {isolation}: {done.stderr.strip().splitlines()[-1:]}")
    return float(done.stdout.strip().splitlines()[-1])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--baseline", help="src/ folder of the baseline checkout")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--calls", type=int, default=20)
    parser.add_argument("--worker", nargs=2, metavar=("RUNNER", "ISOLATION"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        runner, isolation = args.worker
        print(worker(runner, None if isolation == "None" else isolation, args.calls))
        return 0
    if not args.baseline:
        parser.error("--baseline is required")
    times: dict[tuple[str, str, str | None], list[float]] = {}
    for _ in range(args.rounds):
        for runner, isolation in CASES:
            for name, src in (("baseline", args.baseline), ("this", str(SRC))):
                times.setdefault((name, runner, isolation), []).append(measure(src, runner, isolation, args.calls))
    print(f"{'runner':6} {'isolation':9} {'baseline s/call':>16} {'this s/call':>12} {'ratio':>6}")
    rows = []
    for runner, isolation in CASES:
        base = statistics.median(times[("baseline", runner, isolation)])
        this = statistics.median(times[("this", runner, isolation)])
        rows.append({"runner": runner, "isolation": isolation or "none", "baseline": base, "this": this})
        print(f"{runner:6} {isolation or 'none':9} {base:16.4f} {this:12.4f} {this / base:6.2f}")
    print(json.dumps(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
