"""Benchmark: start-up cost of the commands Claude Code and users run most, as ratios.

Each command is a whole process, timed against `python -c 'import json,sys; json.load(sys.stdin)'`
(the least a hook written in Python can cost) in the same run, interleaved A B A B so that drift
hits both. Commands:

- hook, nothing to check: `issuetriage hook pre-tool-use` on a `Read` call;
- hook, label write: a `gh issue edit N --add-label ...` call on the target issue. The hook reads
  the issue once from the loopback GitHub stand-in; that read's marginal cost (importing the
  GitHub client and the call, in a process that already holds the models and policy) is timed on
  its own and the ratio is given with and without it;
- hook, label write, read in-process: the same call and the same process (`python -m
  issuetriage.cli hook pre-tool-use`), with the issue handed to the hook instead of read from
  GitHub: the label check without the GitHub read, measured directly rather than by subtraction
  (the subtraction misses what the GitHub client costs a process beyond its import: starting
  up its modules' state, tearing them down at exit);
- `issuetriage --help`.

Each command's ratio is the median time over the median baseline; "spread" is the lowest and
highest ratio of a single round (the command against the baseline run right after it).

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
TITLE, BODY = "nn.Linear gives wrong shape", "body"
# `issuetriage hook pre-tool-use` as the console script runs it, with the issue handed over in-process.
READ_IN_PROCESS = (
    "import sys\nimport issuetriage.agents.hooks as hooks\nfrom issuetriage.models import Issue\n"
    f"issue = Issue(repo='pytorch/pytorch', number=7, title={TITLE!r}, body={BODY!r})\n"
    "run = hooks.run\nhooks.run = lambda event, stdin, **kw: run(event, stdin, read_issue=lambda repo, n: issue)\n"
    "sys.argv = ['issuetriage', 'hook', 'pre-tool-use']\nfrom issuetriage.cli import main\nmain()\n")


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
        server.state.add_issue("pytorch/pytorch", 7, TITLE, BODY)
        base_env = {**os.environ, **server.env(), "GITHUB_REPOSITORY": "pytorch/pytorch",
                    "TRIAGE_ISSUE_NUMBER": "7"}
        cmds = {
            "hook, nothing to check": (["-m", "issuetriage.cli", "hook", "pre-tool-use"], READ_EVENT),
            "hook, label write": (["-m", "issuetriage.cli", "hook", "pre-tool-use"], LABEL_EVENT),
            "hook, label write, read in-process": (["-c", READ_IN_PROCESS], LABEL_EVENT),
            "issuetriage --help": (["-m", "issuetriage.cli", "--help"], ""),
        }
        times: dict[tuple[str, str], list[float]] = {}
        ratios: dict[tuple[str, str], list[float]] = {}
        base: list[float] = []
        for _ in range(args.runs + 1):  # the first round warms the disk (and profile) cache and is dropped
            for tree in trees:
                env = {**base_env, "PYTHONPATH": str(tree)}
                for name, (argv, stdin) in cmds.items():
                    t = wall([sys.executable, *argv], stdin, env)
                    b = wall(BASELINE, "{}", base_env)
                    if _ > 0:
                        base.append(b)
                        times.setdefault((str(tree), name), []).append(t)
                        ratios.setdefault((str(tree), name), []).append(t / b)
        # The GitHub read the label-write hook makes, as its marginal cost in a fresh process that
        # has already imported what the hook needs anyway (models, policy): importing the GitHub
        # client (githubkit) and the one GraphQL call. "w/o read" subtracts this from the hook.
        probe = ("import sys, time; import issuetriage.models, issuetriage.policy; "
                 "issuetriage.policy.load_profile('pytorch'); "
                 "t = time.perf_counter(); from issuetriage.github.client import GitHubClient; "
                 "from issuetriage.github import reads; "
                 "reads.fetch_issue(GitHubClient.from_env(repo='pytorch/pytorch'), 'pytorch/pytorch', 7); "
                 "print(time.perf_counter() - t)")
        read_times = {str(tree): [float(subprocess.run([sys.executable, "-c", probe], capture_output=True,
                                                      text=True, check=True,
                                                      env={**base_env, "PYTHONPATH": str(tree)}).stdout)
                                  for _ in range(args.runs)] for tree in trees}
    b = statistics.median(base)
    print(f"baseline python -c 'import json,sys; json.load(sys.stdin)': median {b * 1000:.1f} ms "
          f"over {args.runs} runs")
    for tree in trees:
        print(f"GitHub read in the hook ({str(tree)[-30:]}): client import + one read, median "
              f"{statistics.median(read_times[str(tree)]) * 1000:.1f} ms")
    print()
    print(f"{'tree':30} {'command':36} {'median ms':>10} {'ratio':>6} {'spread':>12} "
          f"{'w/o read':>9} {'target':>7}")
    targets = {"hook, nothing to check": 6, "hook, label write": 10, "hook, label write, read in-process": 10,
               "issuetriage --help": 10}
    for tree in trees:
        for name in cmds:
            t = statistics.median(times[(str(tree), name)])
            read = statistics.median(read_times[str(tree)])
            no_read = f"{(t - read) / b:9.1f}" if name == "hook, label write" else " " * 9
            spread = f"{min(ratios[(str(tree), name)]):.1f}-{max(ratios[(str(tree), name)]):.1f}"
            print(f"{str(tree)[-30:]:30} {name:36} {t * 1000:10.1f} {t / b:6.1f} {spread:>12} {no_read} "
                  f"{targets[name]:6d}x")


if __name__ == "__main__":
    main()
