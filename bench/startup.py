"""Benchmark: start-up cost of the commands Claude Code and users run most, as ratios.

Each command is a whole process, timed against `python -c 'import json,sys; json.load(sys.stdin)'`
(the least a hook written in Python can cost) in the same run, interleaved A B A B so that drift
hits both. Commands:

- hook, nothing to check: `issuetriage hook pre-tool-use` on a `Read` call;
- hook, Bash read: a read-only pipeline (`gh issue view N --json labels | jq ...`), which the hook
  reads in full (tree-sitter and the tokenizer) and checks against its list of read-only programs;
- hook, label write: a `gh issue edit N --add-label ...` call on the target issue; the hook reads
  the issue once from the loopback GitHub stand-in (importing the GitHub client is most of it);
- hook, label write, without the read: the same call and the same process (`issuetriage hook
  pre-tool-use` as the console script runs it), with the issue handed to the hook in-process
  instead of read from GitHub: the label check itself. (Earlier runs subtracted a read timed in
  another process instead; that misses what the GitHub client costs a process beyond its import,
  such as its teardown, and it ran with the garbage collector on where the hook now has it off.)
- `issuetriage --help`.

Every tree is byte-compiled first (`compileall`), as an installed package is: with
PYTHONDONTWRITEBYTECODE set, a tree without `__pycache__` would otherwise be compiled from source
in every process. Each command's ratio is the median time over the median baseline; "spread" is
the lowest and highest ratio of a single round (the command against the baseline run right
after it); the CPU ratio (user + system time) is given beside the wall ratio because it moves
less when other work shares the machine. The without-the-read driver imports the hook and the
models before `issuetriage.cli.main` turns the collector off, so it slightly overstates what
the console script pays.

    python bench/startup.py [--runs 15] [--src DIR ...]

`--src` names one or more source trees (each holds `issuetriage/`) to compare in the same run,
e.g. a checkout of an older commit; the default is this checkout.
"""

from __future__ import annotations

import argparse
import compileall
import json
import os
import resource
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
READ_PIPELINE_EVENT = json.dumps({"hook_event_name": "PreToolUse", "tool_name": "Bash", "tool_input": {
    "command": "gh issue view 7 --json labels,title | jq -r '.labels[].name' 2>/dev/null | sort | head -5"}})
LABEL_EVENT = json.dumps({"hook_event_name": "PreToolUse", "tool_name": "Bash",
                          "tool_input": {"command": "gh issue edit 7 --add-label 'module: nn'"}})
TITLE, BODY = "nn.Linear gives wrong shape", "body"
# `issuetriage hook pre-tool-use` as the console script runs it, with the issue handed over in-process.
WITHOUT_READ = (
    "import sys\nimport issuetriage.agents.hooks as hooks\nfrom issuetriage.models import Issue\n"
    f"issue = Issue(repo='pytorch/pytorch', number=7, title={TITLE!r}, body={BODY!r})\n"
    "run = hooks.run\nhooks.run = lambda event, stdin, **kw: run(event, stdin, read_issue=lambda repo, n: issue)\n"
    "sys.argv = ['issuetriage', 'hook', 'pre-tool-use']\nfrom issuetriage.cli import main\nmain()\n")


def wall(argv: list[str], stdin: str, env: dict[str, str]) -> tuple[float, float]:
    """The process's wall time and its CPU time (user + system), in seconds."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    proc = subprocess.run(argv, input=stdin, env=env, capture_output=True, text=True, check=False)
    took = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode not in (0, 2):
        raise SystemExit(f"{argv}: exit {proc.returncode}: {proc.stderr.strip()[:300]}")
    return took, after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--src", action="append", type=Path)
    args = parser.parse_args()
    trees = args.src or [ROOT / "src"]
    for tree in trees:
        compileall.compile_dir(str(tree), quiet=1)
    with StandIn() as server:
        server.state.add_issue("pytorch/pytorch", 7, TITLE, BODY)
        base_env = {**os.environ, **server.env(), "GITHUB_REPOSITORY": "pytorch/pytorch",
                    "TRIAGE_ISSUE_NUMBER": "7"}
        cmds = {
            "hook, nothing to check": (["-m", "issuetriage.cli", "hook", "pre-tool-use"], READ_EVENT),
            "hook, Bash read": (["-m", "issuetriage.cli", "hook", "pre-tool-use"], READ_PIPELINE_EVENT),
            "hook, label write": (["-m", "issuetriage.cli", "hook", "pre-tool-use"], LABEL_EVENT),
            "hook, label write, without the read": (["-c", WITHOUT_READ], LABEL_EVENT),
            "issuetriage --help": (["-m", "issuetriage.cli", "--help"], ""),
        }
        times: dict[tuple[str, str], list[float]] = {}
        cpus: dict[tuple[str, str], list[float]] = {}
        ratios: dict[tuple[str, str], list[float]] = {}
        base: list[float] = []
        base_cpu: list[float] = []
        for _ in range(args.runs + 1):  # the first round warms the disk (and profile) cache and is dropped
            for tree in trees:
                env = {**base_env, "PYTHONPATH": str(tree)}
                for name, (argv, stdin) in cmds.items():
                    t, cpu = wall([sys.executable, *argv], stdin, env)
                    b, b_cpu = wall(BASELINE, "{}", base_env)
                    if _ > 0:
                        base.append(b)
                        base_cpu.append(b_cpu)
                        times.setdefault((str(tree), name), []).append(t)
                        cpus.setdefault((str(tree), name), []).append(cpu)
                        ratios.setdefault((str(tree), name), []).append(t / b)
    b, b_cpu = statistics.median(base), statistics.median(base_cpu)
    print(f"baseline python -c 'import json,sys; json.load(sys.stdin)': median {b * 1000:.1f} ms "
          f"(CPU {b_cpu * 1000:.1f} ms) over {len(base)} runs; load average "
          f"{' '.join(f'{x:.1f}' for x in os.getloadavg())}")
    print()
    print(f"{'tree':30} {'command':36} {'median ms':>10} {'ratio':>6} {'spread':>11} {'target':>7} "
          f"{'CPU ratio':>10}")
    targets = {"hook, nothing to check": "6x", "hook, Bash read": "-", "hook, label write": "-",
               "hook, label write, without the read": "10x", "issuetriage --help": "10x"}
    for tree in trees:
        for name in cmds:
            t = statistics.median(times[(str(tree), name)])
            spread = f"{min(ratios[(str(tree), name)]):.1f}-{max(ratios[(str(tree), name)]):.1f}"
            cpu = statistics.median(cpus[(str(tree), name)]) / b_cpu
            print(f"{str(tree)[-30:]:30} {name:36} {t * 1000:10.1f} {t / b:6.1f} {spread:>11} {targets[name]:>7} "
                  f"{cpu:10.1f}")


if __name__ == "__main__":
    main()
