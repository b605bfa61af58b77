"""Benchmark: start-up cost of the commands Claude Code and users run most, as ratios.

Each command is a whole process, timed against `python -c 'import json,sys; json.load(sys.stdin)'`
(the least a hook written in Python can cost) in the same run, interleaved A B A B so that drift
hits both. Commands:

- hook, nothing to check: `issuetriage hook pre-tool-use` on a `Read` call;
- hook, label write: a `gh issue edit N --add-label ...` call on the target issue. The hook reads
  the issue once from the loopback GitHub stand-in; that read is timed on its own in this process
  (same client, same request) and reported, and the ratio is given with and without it;
- `issuetriage --help`.

    python bench/startup.py [--runs 15] [--src DIR ...]

`--src` names one or more source trees (each holds `issuetriage/`) to compare in the same run,
e.g. a checkout of an older commit; the default is this checkout.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "github"))

from standin import StandIn  # noqa: E402

BASELINE = [sys.executable, "-c", "import json,sys; json.load(sys.stdin)"]
READ_EVENT = json.dumps({"hook_event_name": "PreToolUse", "tool_name": "Read",
                         "tool_input": {"file_path": "/tmp/x.py"}})
LABEL_EVENT = json.dumps({"hook_event_name": "PreToolUse", "tool_name": "Bash",
                          "tool_input": {"command": "gh issue edit 7 --add-label 'module: nn'"}})


def wall(argv: list[str], stdin: str, env: dict[str, str]) -> float:
    start = time.perf_counter()
    proc = subprocess.run(argv, input=stdin, env=env, capture_output=True, text=True, check=False)
    took = time.perf_counter() - start
    if proc.returncode not in (0, 2):
        raise SystemExit(f"{argv}: exit {proc.returncode}: {proc.stderr.strip()[:300]}")
    return took


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--src", action="append", type=Path)
    args = parser.parse_args()
    trees = args.src or [ROOT / "src"]
    with StandIn() as server:
        server.state.add_issue("pytorch/pytorch", 7, "nn.Linear gives wrong shape", "body")
        base_env = {**os.environ, **server.env(), "GITHUB_REPOSITORY": "pytorch/pytorch",
                    "TRIAGE_ISSUE_NUMBER": "7"}
        cmds = {
            "hook, nothing to check": (["-m", "issuetriage.cli", "hook", "pre-tool-use"], READ_EVENT),
            "hook, label write": (["-m", "issuetriage.cli", "hook", "pre-tool-use"], LABEL_EVENT),
            "issuetriage --help": (["-m", "issuetriage.cli", "--help"], ""),
        }
        times: dict[tuple[str, str], list[float]] = {}
        base: list[float] = []
        for _ in range(args.runs + 1):  # the first round warms the disk cache and is dropped
            round_times = {}
            for tree in trees:
                env = {**base_env, "PYTHONPATH": str(tree)}
                for name, (argv, stdin) in cmds.items():
                    round_times[(str(tree), name)] = wall([sys.executable, *argv], stdin, env)
            b = wall(BASELINE, "{}", base_env)
            if _ > 0:
                base.append(b)
                for key, t in round_times.items():
                    times.setdefault(key, []).append(t)
        reads_before = len(server.log)
        # the GitHub read the label-write hook makes, timed in this process (client already warm)
        sys.path.insert(0, str(trees[0]))
        read_times = []
        try:
            from issuetriage.github import reads
            from issuetriage.github.client import GitHubClient

            client = GitHubClient.from_env(server.env(), "pytorch/pytorch")
            for _ in range(args.runs):
                start = time.perf_counter()
                reads.fetch_issue(client, "pytorch/pytorch", 7)
                read_times.append(time.perf_counter() - start)
        finally:
            sys.path.pop(0)
        del reads_before
    b = statistics.median(base)
    read = statistics.median(read_times)
    print(f"baseline python -c 'import json,sys; json.load(sys.stdin)': median {b * 1000:.1f} ms "
          f"over {args.runs} runs")
    print(f"GitHub read of one issue (in process, loopback stand-in): median {read * 1000:.1f} ms\n")
    print(f"{'tree':40} {'command':26} {'median ms':>10} {'ratio':>7} {'ratio w/o read':>15} {'target':>7}")
    targets = {"hook, nothing to check": 6, "hook, label write": 10, "issuetriage --help": 10}
    for tree in trees:
        for name in cmds:
            t = statistics.median(times[(str(tree), name)])
            no_read = (t - read) / b if name == "hook, label write" else t / b
            print(f"{str(tree)[-40:]:40} {name:26} {t * 1000:10.1f} {t / b:7.1f} {no_read:15.1f} "
                  f"{targets[name]:6d}x")


if __name__ == "__main__":
    main()
