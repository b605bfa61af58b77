"""Benchmark: hostile issue text plans in linear time, on every shipped profile, and the hook answers.

Issue bodies of GitHub's limit (65,536 characters): blank lines, long runs of one character,
unclosed fences, and bait for each shipped profile pattern (its words, and its first word
repeated, at random gaps). Each is planned in process (the heuristic judge, CPU time, median of
`--runs`), against a plain issue of the same size (dev-corpus bodies read at run time, so a linear
cost per character is the same for both) and a typical short one. The target: every hostile body
within 5x the plain one. The hook (`issuetriage hook pre-tool-use` on `gh issue close`, which it
checks against a plan of the issue read from the loopback GitHub stand-in) runs as a process on the
slowest bodies; its wall time is compared with `--deadline` (the hook's own default, 20 s).

Each source tree (`--src`, default this checkout's) runs in its own process, so an older commit is
measured in the same run: `git worktree add /tmp/base 2b79182` then
`python bench/hostile_text.py --src /tmp/base/src --src src`. A case that runs past `--timeout`
CPU-seconds is stopped and shown as `>T`.

    python bench/hostile_text.py [--src DIR ...] [--runs 3] [--timeout 20] [--hook 4] [--data FILE]
"""

from __future__ import annotations

import argparse
import functools
import importlib.util
import json
import os
import random
import re
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import tomllib
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data" / "pytorch-issues-dev.jsonl"
SIZE = 65_536
TARGET = 5.0
CLOSE_EVENT = json.dumps({"hook_event_name": "PreToolUse", "tool_name": "Bash",
                          "tool_input": {"command": "gh issue close 7"}})


def _fill(piece: str, size: int = SIZE) -> str:
    return (piece * (size // max(len(piece), 1) + 1))[:size]


def _scatter(words: list[str], seed: str, size: int = SIZE) -> str:
    """`words` in random order at random gaps (spaces, a newline, nothing), `size` characters."""
    rnd = random.Random(seed)
    gaps = ["", " ", " ", "  ", "\n", " \n"]
    out, total = [], 0
    while total < size:
        part = rnd.choice(words) + rnd.choice(gaps)
        out.append(part)
        total += len(part)
    return "".join(out)[:size]


def _patterns(profile: Path) -> list[str]:
    """Every pattern of a profile folder (any key ending in `patterns`, in any file)."""
    found: list[str] = []

    def walk(data: Any, key: str = "") -> None:
        if isinstance(data, dict):
            for k, v in data.items():
                walk(v, k)
        elif isinstance(data, list):
            for item in data:
                if isinstance(item, str) and key.endswith("patterns"):
                    found.append(item)
                else:
                    walk(item, key)

    for path in sorted(profile.glob("*.toml")):
        walk(tomllib.loads(path.read_text(encoding="utf-8")))
    return found


def bodies(patterns: list[str]) -> dict[str, str]:
    """The hostile bodies: generic shapes, then bait for each pattern."""
    out = {
        "blank lines": _fill("\n"),
        "blank lines, then an error": _fill("\n")[:-12] + "ValueError:\n",
        "lines of spaces": _fill(" \n"),
        "spaces": _fill(" "),
        "one letter": _fill("a"),
        "one capital": _fill("A"),
        "digits": _fill("1"),
        "dots": _fill("."),
        "non-ASCII letter": _fill("\u00e9"),
        "dashes on lines": _fill("\n-"),
        "hashes": _fill("#"),
        "unclosed fences": _fill("```a\n"),
        "alternating fences": _fill("```\n~~~\n"),
        "torch then blanks": "torch" + _fill(" ")[5:],
        "torch: then blanks": "torch:" + _fill(" ")[6:],
        "error lines": _fill("ValueError:\n"),
        "link of one letter": "https://" + _fill("a")[8:],
        "dotted name": _fill("a."),
    }
    for i, pattern in enumerate(patterns):
        # the pattern's words and punctuation, without its flags and escapes
        words = re.findall(r"[A-Za-z_][A-Za-z_0-9]+|\d+|[^\w\s\\()\[\]{}?*+|^$]",
                           re.sub(r"\(\?[a-zA-Z]+\)|\\[a-zA-Z]", " ", pattern)) or [pattern]
        short = pattern[:40]
        out[f"bait {i}: words of {short!r}"] = _scatter(words, pattern)
        out[f"bait {i}: first word of {short!r}"] = _scatter(words[:1] * 3 + [" ", "\n"], pattern + "1")
        # a long run the pattern may start on at every character, then its words, then no match
        for run in ("\n", " ", "a"):
            for glue in (" ", ""):
                tail = glue.join(words) + "a"
                out[f"bait {i}: {run!r} run, then {short!r}{' glued' if not glue else ''}"] = (
                    _fill(run)[:SIZE - len(tail)] + tail)
    return out


def plain(data: Path) -> tuple[str, str]:
    """A typical dev-corpus body, and dev-corpus bodies joined to SIZE characters."""
    records = [json.loads(line) for line in data.read_text(encoding="utf-8").splitlines() if line.strip()]
    text = "\n\n".join(r.get("body") or "" for r in records)
    return records[0].get("body") or "", text[:SIZE]


class _Stop(Exception):
    pass


def _stop(*_: object) -> None:
    raise _Stop


def _cpu_per_plan(plan: Any, timeout: float) -> float:
    """CPU seconds one call of `plan` takes: calls repeated to at least 0.1 s (the process clock
    may advance in ticks), stopped at `timeout` (then inf)."""
    calls, start = 0, time.process_time()
    signal.setitimer(signal.ITIMER_PROF, timeout)
    try:
        while calls == 0 or time.process_time() - start < 0.1:
            plan()
            calls += 1
    except _Stop:
        return float("inf")
    finally:
        signal.setitimer(signal.ITIMER_PROF, 0)
    return (time.process_time() - start) / calls


def worker(data: Path, cases_file: Path, runs: int, timeout: float) -> None:
    """In the tree on PYTHONPATH: plan every body for its shipped profile; one JSON line each."""
    from issuetriage.engine.pipeline import triage_with
    from issuetriage.judges.factory import get_judge
    from issuetriage.models import Issue
    from issuetriage.policy import PROFILES_DIR, load_profile

    judge = get_judge("heuristic", None)
    short, long = plain(data)
    signal.signal(signal.SIGPROF, _stop)
    hostile = json.loads(cases_file.read_text())
    for profile in sorted(p for p in PROFILES_DIR.iterdir() if p.is_dir()):
        policy = load_profile(profile.name)
        cases = {"typical issue": short, "plain 64 KB": long, **hostile[profile.name]}
        triage_with(Issue(repo=policy.meta.repo, number=7, title="warm-up", body=short), policy, judge)
        plain_seconds = float("inf")
        for name, body in cases.items():
            plan = functools.partial(triage_with, Issue(repo=policy.meta.repo, number=7, title="Something fails",
                                                        body=body), policy, judge)
            seconds = _cpu_per_plan(plan, timeout)
            # the two baselines, and a body over the target (noise or real), are measured `runs` times
            if name in ("typical issue", "plain 64 KB") or seconds > TARGET * plain_seconds:
                seconds = statistics.median([seconds] + [_cpu_per_plan(plan, timeout) for _ in range(runs - 1)])
            if name == "plain 64 KB":
                plain_seconds = seconds
            print(json.dumps({"profile": profile.name, "case": name, "seconds": seconds}), flush=True)


def worst_profile(timeout: float) -> None:
    """In a tree with RE2 bounds: a repository's own profile filled to them with patterns RE2's
    automaton cache cannot keep up with, on 64 KB of text made for them; prints CPU per plan."""
    sys.path[:0] = [str(ROOT / "tests"), str(ROOT / "tests" / "security")]
    from test_repo_profiles import REPO, profile

    from issuetriage.engine.pipeline import triage
    from issuetriage.github.repo_profile import load_texts
    from issuetriage.models import Issue
    from issuetriage.text import MAX_PROFILE_PATTERNS, MAX_PROFILE_PROGRAM, compile_linear

    rnd = random.Random(0)
    body = "c" + "".join(rnd.choice("ab") for _ in range(SIZE - 1))
    for pattern in ("[ab]*a[ab]{20}c", "[ab]*a[ab]{60}c", "(?s)a.{0,300}c", "(?s)a.{0,800}c"):
        count = min(MAX_PROFILE_PATTERNS, MAX_PROFILE_PROGRAM // compile_linear(pattern, re.I | re.M).programsize)
        policy = load_texts(REPO, profile(*[pattern] * count))
        seconds = _cpu_per_plan(functools.partial(triage, Issue(repo=REPO, number=7, title="t", body=body),
                                                  policy), timeout)
        print(json.dumps({"profile": f"repo-local: {count} x {pattern}", "case": "its bait", "seconds": seconds}),
              flush=True)


def hook_time(src: Path, body: str, deadline: float, cache: Path) -> float:
    """Wall seconds `issuetriage hook pre-tool-use` takes on a close of an issue with `body`."""
    sys.path.insert(0, str(ROOT / "tests" / "github"))
    from standin import StandIn

    with StandIn() as server:
        server.state.add_issue("pytorch/pytorch", 7, "Something fails", body)
        env = {**os.environ, **server.env(), "GITHUB_REPOSITORY": "pytorch/pytorch", "TRIAGE_ISSUE_NUMBER": "7",
               "PYTHONPATH": str(src), "ISSUETRIAGE_POLICY_CACHE_DIR": str(cache)}
        start = time.perf_counter()
        try:
            subprocess.run([sys.executable, "-m", "issuetriage.cli", "hook", "pre-tool-use"], input=CLOSE_EVENT,
                           env=env, capture_output=True, text=True, timeout=3 * deadline, check=False)
        except subprocess.TimeoutExpired:
            return float("inf")
        return time.perf_counter() - start


def _show(seconds: float, timeout: float) -> str:
    return f">{timeout:.0f} s" if seconds == float("inf") else f"{seconds * 1000:.1f} ms"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--src", action="append", type=Path)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--timeout", type=float, default=20.0, help="CPU-seconds before a plan is stopped")
    parser.add_argument("--hook", type=int, default=4, help="hook runs on this many of the slowest bodies")
    parser.add_argument("--deadline", type=float, default=20.0)
    parser.add_argument("--data", type=Path, default=DATA)
    parser.add_argument("--worker", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if not args.data.exists():
        print(f"skipped: {args.data} not found")
        return
    if args.worker:
        worker(args.data, args.worker, args.runs, args.timeout)
        if importlib.util.find_spec("issuetriage.text"):
            worst_profile(args.timeout)
        return
    trees = [t.resolve() for t in (args.src or [ROOT / "src"])]
    # the same bodies for every tree: bait for the patterns of each tree's version of each profile
    profiles = sorted({p.name for t in trees for p in (t / "issuetriage/policy/profiles").iterdir() if p.is_dir()})
    cases = {name: bodies(list(dict.fromkeys(
        pattern for t in trees if (t / "issuetriage/policy/profiles" / name).is_dir()
        for pattern in _patterns(t / "issuetriage/policy/profiles" / name)))) for name in profiles}
    cases_file = Path(tempfile.mkstemp(prefix="issuetriage-hostile-", suffix=".json")[1])
    cases_file.write_text(json.dumps(cases))
    results: dict[Path, list[dict[str, Any]]] = {}
    for tree in trees:
        env = {**os.environ, "PYTHONPATH": str(tree), "ISSUETRIAGE_POLICY_CACHE_DIR": ""}
        proc = subprocess.run([sys.executable, __file__, "--worker", str(cases_file), "--runs", str(args.runs),
                               "--timeout", str(args.timeout), "--data", str(args.data)], env=env,
                              capture_output=True, text=True, check=False)
        if proc.returncode:
            raise SystemExit(f"{tree}: exit {proc.returncode}: {proc.stderr.strip()[-500:]}")
        results[tree] = [json.loads(line) for line in proc.stdout.splitlines()]
    print(f"python={sys.version.split()[0]} size={SIZE} runs={args.runs} load average "
          f"{os.getloadavg()[0]:.1f}; CPU time per plan, median; x = over the plain 64 KB issue")
    for tree, rows in results.items():
        worst_rows = [r for r in rows if r["profile"].startswith("repo-local")]
        rows = [r for r in rows if r not in worst_rows]
        for profile in dict.fromkeys(r["profile"] for r in rows):
            mine = {r["case"]: r["seconds"] for r in rows if r["profile"] == profile}
            base = mine["plain 64 KB"]
            hostile = {k: v for k, v in mine.items() if k not in ("typical issue", "plain 64 KB")}
            worst = sorted(hostile.items(), key=lambda kv: -kv[1])
            over = [k for k, v in hostile.items() if v > TARGET * base]
            print(f"\n{tree}  profile {profile}: typical issue {_show(mine['typical issue'], args.timeout)}, "
                  f"plain 64 KB {_show(base, args.timeout)}; {len(hostile)} hostile bodies, median "
                  f"{statistics.median(hostile.values()) / base:.2f}x, {len(over)} over {TARGET:.0f}x")
            for name, seconds in worst[:8]:
                ratio = "" if seconds == float("inf") else f"{seconds / base:6.2f}x"
                print(f"  {_show(seconds, args.timeout):>10} {ratio:>8}  {name}")
            if args.hook and profile == "pytorch":  # the hook's stand-in issue is pytorch/pytorch#7
                cache = Path(tempfile.mkdtemp(prefix="issuetriage-hostile-cache-"))  # compiled once, as in use
                long = plain(args.data)[1]
                hook_time(tree, long, args.deadline, cache)
                print(f"  hook on the plain 64 KB issue: {_show(hook_time(tree, long, args.deadline, cache), 0)} wall")
                for name, _ in worst[:args.hook]:
                    took = hook_time(tree, cases[profile][name], args.deadline, cache)
                    verdict = "within" if took <= args.deadline else "PAST"
                    print(f"  hook on {name!r}: {_show(took, 3 * args.deadline)} wall, {verdict} the "
                          f"{args.deadline:.0f} s deadline")
        if worst_rows:
            print(f"\n{tree}  a repository's own profile at the RE2 bounds, patterns made to defeat RE2's cache:")
        for row in worst_rows:
            print(f"  {_show(row['seconds'], args.timeout):>10} CPU per plan  {row['profile']}")


if __name__ == "__main__":
    main()
