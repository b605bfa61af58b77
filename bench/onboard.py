"""Benchmark: the onboarding path's wall time, `issuetriage init OWNER/REPO` on a made-up
repository of N labelled issues served by the loopback GitHub stand-in (tests/github), against
`issuetriage sync` of the same repository in the same run (the part every path has to pay).

    python bench/onboard.py [--issues 220] [--folds 5] [--runs 3]

Prints each run's seconds and the medians, and init/sync as a ratio; the stand-in answers on
loopback, so GitHub's own latency is not in these figures (count the API calls instead).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "tests" / "service"), str(ROOT / "tests" / "github"), str(ROOT / "tests")]


def timed(argv: list[str], cwd: Path, env: dict[str, str]) -> float:
    """Seconds one `issuetriage ARGV` process takes, start to exit."""
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "issuetriage", *argv], cwd=cwd, env=env,
                          capture_output=True, text=True, check=False)
    if done.returncode:
        raise SystemExit(f"{argv[0]} failed: {done.stderr.strip()}")
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--issues", type=int, default=220)
    parser.add_argument("--folds", type=int, default=5)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    from standin import StandIn
    from test_onboard import SCHEMES, seed

    SCHEMES["acme/widgets"]["issues"] = args.issues
    init, sync = [], []
    for _ in range(args.runs):
        with StandIn() as standin, tempfile.TemporaryDirectory() as tmp:
            seed(standin, "acme/widgets")
            env = {**os.environ, **standin.env(), "PYTHONPATH": str(ROOT / "src")}
            (Path(tmp) / "a" / ".git").mkdir(parents=True)
            (Path(tmp) / "b").mkdir()
            sync.append(timed(["sync", "acme/widgets", "--store", "s.db"], Path(tmp) / "b", env))
            init.append(timed(["init", "acme/widgets", "--folds", str(args.folds)], Path(tmp) / "a", env))
    for name, runs in (("sync", sync), ("init", init)):
        print(f"{name}: {' '.join(f'{s:.2f}' for s in runs)} s; median {statistics.median(runs):.2f} s")
    print(f"init/sync: {statistics.median(init) / statistics.median(sync):.2f} "
          f"({args.issues} labelled issues, {args.folds} folds; load average {os.getloadavg()[0]:.1f})")


if __name__ == "__main__":
    main()
