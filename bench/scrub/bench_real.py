"""Bench: scrub on real, fixed bugs of released PyPI packages (bench/scrub/real, see bugs.py).

Per bug, `scrub` runs through the library API (scrub_one.py) with `--versions`-style interpreters
over the bug's range (environments made by uv from PyPI, runs in the sandbox): does the repro fail
as reported on the affected release and not on the fixed one, does bisection name the fixed
release, and what does its minimization give. With `--baseline DIR` (the `src` of a checkout of
the code before a change) the same is done with that code, one after the other on the same
environments, so both minimizations are timed in the same run.

Every minimized script (scrub now, scrub before, pysource-minimize, shrinkray, and the smallest
known script) is then re-run cold in the sandbox: does it fail as reported on the affected
release, pass on the fixed release, and still fail the same way with the package replaced by an
empty stand-in module (standin.py; must be 0)? The competitors run on the script scrub ran, with
bench_minimize.py's oracle and the fixed release as its control (the differential oracle), each
capped at `--cap` seconds. `--single` gives scrub only the affected release (no fix known: the
stand-in check instead of the differential oracle). Needs PyPI (uv) and, for the competitors, the
venvs bench_minimize.py describes; a missing competitor is skipped.

    PYTHONPATH=src nice -n 10 python bench/scrub/bench_real.py --half A --baseline /tmp/base/src \\
        --competitors /tmp/scrub-competitors/bin --psm-bin /tmp/scrub-psm311/bin --cap 30
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
SRC = HERE.parent.parent / "src"
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE / "real"))

import oracle  # noqa: E402
from bench_minimize import competitors, run_competitor  # noqa: E402
from bugs import BUGS  # noqa: E402

from issuetriage.scrub.astedit import count_lines  # noqa: E402
from issuetriage.scrub.expected import parse_failure  # noqa: E402
from issuetriage.scrub.model import Expected, Interpreter, Limits, Outcome  # noqa: E402
from issuetriage.scrub.outcome import classify  # noqa: E402
from issuetriage.scrub.provision import Provisioner  # noqa: E402
from issuetriage.scrub.sandbox import run_script  # noqa: E402
from issuetriage.scrub.standin import forcing_identity, package_under_test, stand_in  # noqa: E402
from issuetriage.scrub.warm import imported_modules  # noqa: E402

TOOLS = ("scrub", "before", "pysource-minimize", "shrinkray", "smallest")


def scrub_side(src: Path, bug: dict, work: Path, timeout: float, workers: int, single: bool) -> dict:
    """scrub_one.py under `src`: its JSON, or {"error": ...}."""
    spec = {"issue": str(HERE / "real" / "issues" / f"{bug['id']}.json"), "package": bug["package"],
            "range": bug["range"], "affected": bug["affected"], "timeout": timeout, "workers": workers,
            "allow": list(bug.get("allow", ())), "single": single}
    path = work / "scrub-spec.json"
    path.write_text(json.dumps(spec))
    env = {**os.environ, "PYTHONPATH": str(src)}
    done = subprocess.run([sys.executable, str(HERE / "scrub_one.py"), str(path)], capture_output=True,
                          text=True, env=env)
    lines = done.stdout.strip().splitlines()
    if done.returncode != 0 or not lines:
        return {"error": done.stderr.strip()[-400:]}
    return json.loads(lines[-1])


class Checks:
    """Cold sandboxed re-runs of a script on the affected and fixed releases and the stand-in."""

    def __init__(self, expected: Expected, affected: Interpreter, fixed: Interpreter, standing: Interpreter | None,
                 timeout: float) -> None:
        self.expected, self.affected, self.fixed, self.standing = expected, affected, fixed, standing
        self.limits = Limits(timeout_s=timeout)

    def outcome(self, code: str, interp: Interpreter) -> Outcome:
        return classify(run_script(code, interp, self.limits), self.expected)

    def __call__(self, code: str | None) -> dict:
        if not code:
            return {}
        return {"fails_affected": self.outcome(code, self.affected) is Outcome.SAME_ERROR,
                "passes_fixed": self.outcome(code, self.fixed) is Outcome.PASSES,
                "standin_same": self.standing is not None
                and self.outcome(forcing_identity(code), self.standing) is Outcome.SAME_ERROR}


def harness_spec(script: str, expected: Expected, python: Path, work: Path, timeout: float, workers: int) -> dict:
    """bench_minimize's oracle spec from scrub's expectation (the same for every competitor)."""
    spec = {"python": str(python), "pythonpath": "", "timeout": timeout, "exception": expected.exception or "-",
            "substring": expected.substring, "hang": expected.hang, "output": expected.output,
            "from_library": False, "assertion": expected.source == "assertion", "counter": str(work / "calls"),
            "best": str(work / "best.py"), "warm": True, "preload": list(imported_modules(script)), "workers": workers}
    if expected.exception:
        _, stderr, _ = oracle.run(script, {**spec, "warm": False})
        failure = parse_failure(stderr, "repro.py")
        spec["from_library"] = bool(failure and failure.innermost_file
                                    and not failure.innermost_file.endswith("repro.py"))
    return spec


def bench_bug(bug: dict, args: argparse.Namespace, provisioner: Provisioner, position: int) -> dict:
    work = args.out / bug["id"]
    work.mkdir(parents=True, exist_ok=True)
    timeout = args.hang_timeout if bug["kind"] == "hang" else args.timeout
    sides = [("scrub", SRC)] + ([("before", args.baseline)] if args.baseline else [])
    if position % 2:
        sides.reverse()  # alternate who runs first: the machine's load drifts
    runs = {name: scrub_side(src, bug, work, timeout, args.workers, args.single) for name, src in sides}
    now = runs["scrub"]
    row: dict = {"id": bug["id"], "half": bug["half"], "kind": bug["kind"], "form": bug["form"],
                 "single": args.single, "scrub_error": now.get("error")}
    if now.get("error") or not now.get("expected"):
        return row | {"note": now.get("stop") or now.get("note")}
    expected = Expected(**{**now["expected"], "chain": tuple(now["expected"].get("chain", ()))})
    make = lambda v: provisioner.ensure(Interpreter(f"{bug['package']}-{v}", provisioner.base_python,  # noqa: E731
                                                    requirements=(f"{bug['package']}=={v}",)))
    affected, fixed = make(bug["affected"]), make(bug["fixed"])
    first = run_script(now["script"], affected, Limits(timeout_s=timeout))
    names = package_under_test(now["script"], parse_failure(first.stderr, "repro.py"), bug["package"])
    standing = stand_in(affected, names, work / "standin") if names else None
    check = Checks(expected, affected, fixed, standing, timeout)
    original = check(now["script"])
    row |= {"expected": expected.source, "stand_in": list(names), "original": count_lines(now["script"]),
            "affected_ok": original["fails_affected"], "fixed_ok": original["passes_fixed"],
            "original_standin_same": original["standin_same"],
            "boundary_ok": now["first_changed"] == f"{bug['package']}-{bug['fixed']}"
                           and now["last_same"] == f"{bug['package']}-{bug['affected']}",
            "probed": now["probed"], "versions": now["versions"]}
    smallest = (HERE / "real" / "smallest" / f"{bug['id']}.py").read_text()
    results = {"smallest": {"code": smallest, "lines": count_lines(smallest)}}
    for name, side in runs.items():
        results[name] = {"code": side.get("minimized"), "lines": side.get("lines"), "calls": side.get("oracle_calls"),
                         "seconds": side.get("minimize_seconds"), "verified": (side.get("verified") or {}).get("how"),
                         "note": side.get("note") or side.get("error", "")[-200:]}
    if original["fails_affected"] and not args.single:
        spec = harness_spec(now["script"], expected, affected.python, work, timeout, args.workers)
        spec["control_python"] = str(fixed.python)
        spec_path = work / "spec.json"
        spec_path.write_text(json.dumps(spec))
        for name, (argv, env) in competitors(args.competitors, args.psm_bin, spec, spec_path,
                                             work / "repro.py").items():
            if name == "pysource-minimize":  # under our Python (3.11, as the oracle's)
                argv = [sys.executable, *argv[1:]]
            (work / "repro.py").write_text(now["script"])
            results[name] = run_competitor(argv, spec, args.cap, work, env)
    for result in results.values():
        result.update(check(result.get("code")))
    row["tools"] = {name: {k: v for k, v in r.items() if k != "code"} | {"code": r.get("code")}
                    for name, r in results.items()}
    return row


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--half", default="all", help="A, B, C, X or all")
    parser.add_argument("--only", default="", help="comma list of bug ids")
    parser.add_argument("--baseline", type=Path, default=None, help="src/ of the code before, run the same way")
    parser.add_argument("--single", action="store_true", help="scrub gets only the affected release")
    parser.add_argument("--competitors", type=Path, default=None)
    parser.add_argument("--psm-bin", type=Path, default=None)
    parser.add_argument("--cap", type=float, default=30.0, help="seconds per competitor run")
    parser.add_argument("--timeout", type=float, default=60.0, help="seconds per run")
    parser.add_argument("--hang-timeout", type=float, default=10.0, help="seconds per run of a hang bug")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--out", type=Path, default=Path(tempfile.gettempdir()) / "scrub-bench-real")
    args = parser.parse_args()
    only = set(filter(None, args.only.split(",")))
    provisioner = Provisioner(max_envs=400)  # the bench's environments stay; runs share them
    rows = []
    chosen = [b for b in BUGS if (args.half == "all" or b["half"] == args.half) and (not only or b["id"] in only)]
    for position, bug in enumerate(chosen):
        rows.append(bench_bug(bug, args, provisioner, position))
        print(_line(rows[-1]), flush=True)
        args.out.mkdir(parents=True, exist_ok=True)
        (args.out / f"results-{args.half}{'-single' if args.single else ''}.json").write_text(
            json.dumps(rows, indent=1, default=str))
    print(summary(rows))
    return 0


def _yes(ok: object) -> str:
    return "yes" if ok else "NO"


def _tool(row: dict, tool: str) -> str:
    r = row.get("tools", {}).get(tool)
    if not r or r.get("lines") is None:
        return "-"
    flags = "".join(("F" if not r.get("fails_affected") else "", "P" if not r.get("passes_fixed") else "",
                     "S" if r.get("standin_same") else ""))
    cap = "*" if r.get("capped") else ""
    calls = f" / {r['calls']} / {r['seconds']}{cap}" if r.get("calls") is not None else ""
    return f"{r['lines']}{calls}{' !' + flags if flags else ''}"


def _line(row: dict) -> str:
    if "tools" not in row:
        return f"| {row['id']} | {row['half']} | not run: {row.get('scrub_error') or row.get('note')} |"
    return (f"| {row['id']} | {row['half']} | {row['kind']} | {row['form']} | {_yes(row['affected_ok'])} | "
            f"{_yes(row['fixed_ok'])} | {_yes(row['boundary_ok'])} ({row['probed']}/{row['versions']}) | "
            f"{row['original']} | {row['tools']['smallest']['lines']} | " + " | ".join(_tool(row, t) for t in TOOLS[:4])
            + f" | {row['tools']['scrub'].get('verified') or 'no'} |")


def summary(rows: list[dict]) -> str:
    """Per half: reproduction, bisection, and per tool the three checks, lines and cost."""
    out = []
    for half in sorted({r["half"] for r in rows}):
        got = [r for r in rows if r["half"] == half and "tools" in r]
        out.append(f"half {half}: {len(got)} bugs | fails on affected {sum(r['affected_ok'] for r in got)} | "
                   f"passes on fixed {sum(r['fixed_ok'] for r in got)} | boundary right {sum(r['boundary_ok'] for r in got)}"
                   f" | environments probed {sum(r['probed'] for r in got)} of {sum(r['versions'] for r in got)}")
        for tool in TOOLS:
            have = [r["tools"][tool] for r in got if r["tools"].get(tool, {}).get("lines") is not None]
            if not have:
                continue
            smallest = [r["tools"]["smallest"]["lines"] for r in got if r["tools"].get(tool, {}).get("lines") is not None]
            line = (f"  {tool}: {len(have)} scripts, {sum(h['lines'] for h in have)} lines; fails on affected "
                    f"{sum(bool(h.get('fails_affected')) for h in have)}, passes on fixed "
                    f"{sum(bool(h.get('passes_fixed')) for h in have)}, still fails with the stand-in "
                    f"{sum(bool(h.get('standin_same')) for h in have)}; at most 2x the smallest known "
                    f"{sum(h['lines'] <= 2 * s for h, s in zip(have, smallest))}")
            if tool in ("scrub", "before"):
                secs = [h["seconds"] for h in have if h.get("seconds") is not None]
                line += (f"; oracle calls {sum(h.get('calls') or 0 for h in have)}, seconds {sum(secs):.0f} "
                         f"(median {statistics.median(secs) if secs else 0:.1f})")
                if tool == "scrub":
                    line += f"; verified {sum(bool(h.get('verified')) for h in have)}"
            out.append(line)
        pairs = [(r["tools"]["scrub"]["seconds"], r["tools"]["before"]["seconds"]) for r in got
                 if r["tools"].get("before", {}).get("seconds") and r["tools"]["scrub"].get("seconds") is not None]
        if pairs:
            ratios = sorted(a / b for a, b in pairs if b)
            out.append(f"  minimization seconds now/before: median {statistics.median(a for a, _ in pairs):.1f} / "
                       f"{statistics.median(b for _, b in pairs):.1f} = "
                       f"{statistics.median(a for a, _ in pairs) / max(0.01, statistics.median(b for _, b in pairs)):.2f}; "
                       f"per-bug ratios {', '.join(f'{x:.2f}' for x in ratios)}")
    return "\n".join(out)


if __name__ == "__main__":
    sys.exit(main())
