"""Bench: scrub on real, fixed bugs of released PyPI packages (bench/scrub/real, see bugs.py).

Per bug, through the library API (`scrub` with `--versions`-style interpreters, environments
provisioned by uv from PyPI, runs in the sandbox): does the repro fail as reported on the
affected release and not on the fixed one, does bisection over the version range name the fixed
release, how many environments it made, and scrub's own minimization (re-checked cold). Then the
minimizer comparison of bench_minimize.py on the script scrub ran (with the expectation scrub
derived), on the affected release, one oracle for all: ours, pysource-minimize, shrinkray, every
final answer re-checked cold. Needs network to PyPI (uv) and the competitors as bench_minimize.py
describes; a missing competitor is skipped.

    PYTHONPATH=src nice -n 10 python bench/scrub/bench_real.py --half A \\
        --competitors /tmp/scrub-competitors/bin --psm-bin /tmp/scrub-psm311/bin --cap 60
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE / "real"))

import oracle  # noqa: E402
from bench_minimize import competitors, run_competitor, run_ours  # noqa: E402
from bugs import BUGS  # noqa: E402

from issuetriage.scrub.astedit import count_lines  # noqa: E402
from issuetriage.scrub.expected import parse_failure  # noqa: E402
from issuetriage.scrub.flow import Options, scrub  # noqa: E402
from issuetriage.scrub.model import Interpreter, Limits, Outcome  # noqa: E402
from issuetriage.scrub.outcome import classify  # noqa: E402
from issuetriage.scrub.provision import Provisioner, version_interpreters  # noqa: E402
from issuetriage.scrub.sandbox import run_script  # noqa: E402
from issuetriage.scrub.source import load_issue  # noqa: E402
from issuetriage.scrub.warm import imported_modules  # noqa: E402


def scrub_bug(bug: dict, provisioner: Provisioner, timeout: float,
              workers: int) -> tuple[dict, object, Interpreter, Interpreter]:
    """Scrub the issue over the bug's version range; check both named releases cold."""
    issue = load_issue(str(HERE / "real" / "issues" / f"{bug['id']}.json"))
    interps = version_interpreters(f"{bug['package']}{bug['range']}", (), provisioner)
    start = time.monotonic()
    report = scrub(issue, Options(interpreters=tuple(interps), limits=Limits(timeout_s=timeout), runs=1,
                                  workers=workers, provisioner=provisioner))
    took = time.monotonic() - start
    by_version = {i.label: i for i in interps}
    affected = provisioner.ensure(by_version[f"{bug['package']}-{bug['affected']}"])
    fixed = provisioner.ensure(by_version[f"{bug['package']}-{bug['fixed']}"])
    limits = Limits(timeout_s=timeout)
    on = {name: classify(run_script(report.script, interp, limits), report.expected)
          for name, interp in (("affected", affected), ("fixed", fixed))}
    mini = report.minimized
    mini_ok = bool(mini) and classify(run_script(mini.code, affected, limits), report.expected) is Outcome.SAME_ERROR
    bis = report.bisect
    row = {"id": bug["id"], "half": bug["half"], "kind": bug["kind"], "package": bug["package"],
           "expected": report.expected.source if report.expected else None,
           "affected_outcome": str(on["affected"]), "fixed_outcome": str(on["fixed"]),
           "first_changed": bis.first_changed if bis else None,
           "boundary_ok": bool(bis) and bis.first_changed == f"{bug['package']}-{bug['fixed']}"
                          and bis.last_same == f"{bug['package']}-{bug['affected']}",
           "versions": len(interps), "probed": len(bis.outcomes) if bis else 0,
           "scrub_seconds": round(took, 1), "original": count_lines(report.script),
           "scrub_lines": mini.lines if mini else None, "scrub_calls": mini.oracle_calls if mini else 0,
           "scrub_recheck": mini_ok, "minimize_note": report.minimize_note}
    return row, report, affected, fixed


def harness_spec(report, python: Path, work: Path, timeout: float, warm: bool, workers: int) -> dict:
    """bench_minimize's oracle spec from scrub's expectation (the same for every tool)."""
    exp = report.expected
    spec = {"python": str(python), "pythonpath": "", "timeout": timeout, "exception": exp.exception or "",
            "substring": exp.substring, "hang": exp.hang, "output": exp.output, "from_library": False,
            "assertion": exp.source == "assertion",
            "counter": str(work / "calls"), "best": str(work / "best.py"), "warm": warm,
            "preload": list(imported_modules(report.script)), "workers": workers}
    if exp.exception:
        _, stderr, _ = oracle.run(report.script, {**spec, "warm": False})
        failure = parse_failure(stderr, "repro.py")
        spec["from_library"] = bool(failure and failure.innermost_file
                                    and not failure.innermost_file.endswith("repro.py"))
    else:
        spec["exception"] = "-"  # unused: hang and output specs decide before looking at a traceback
    return spec


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--half", choices=("A", "B", "all"), default="all")
    parser.add_argument("--only", default="", help="comma list of bug ids")
    parser.add_argument("--competitors", type=Path, default=None)
    parser.add_argument("--psm-bin", type=Path, default=None)
    parser.add_argument("--tools", default="ours,pysource-minimize,shrinkray")
    parser.add_argument("--cap", type=float, default=60.0, help="seconds per competitor run")
    parser.add_argument("--uncapped", default="", help="comma list of bug ids whose competitor runs are not capped")
    parser.add_argument("--timeout", type=float, default=60.0, help="seconds per run")
    parser.add_argument("--hang-timeout", type=float, default=10.0, help="seconds per run of a hang bug")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--out", type=Path, default=Path(tempfile.gettempdir()) / "scrub-bench-real")
    args = parser.parse_args()
    tools = args.tools.split(",")
    only = set(filter(None, args.only.split(",")))
    uncapped = set(filter(None, args.uncapped.split(",")))
    provisioner = Provisioner()
    rows = []
    for bug in BUGS:
        if (args.half != "all" and bug["half"] != args.half) or (only and bug["id"] not in only):
            continue
        work = args.out / bug["id"]
        work.mkdir(parents=True, exist_ok=True)
        timeout = args.hang_timeout if bug["kind"] == "hang" else args.timeout
        row, report, affected, fixed = scrub_bug(bug, provisioner, timeout, args.workers)
        if report.expected is not None and row["affected_outcome"] == "same_error":
            case = work / "case.py"
            case.write_text(report.script)
            spec = harness_spec(report, affected.python, work, timeout, True, args.workers)
            spec["control_python"] = str(fixed.python)  # same oracle for all: must not fail on the fix
            spec_path = work / "spec.json"
            spec_path.write_text(json.dumps(spec))
            if "ours" in tools:
                row["ours"] = run_ours(case, spec, args.workers, 20)
            cap = 1e9 if bug["id"] in uncapped else args.cap
            for name, (argv, env) in competitors(args.competitors, args.psm_bin, spec, spec_path,
                                                 work / "repro.py").items():
                if name == "pysource-minimize":  # it runs under our Python (3.11, as the oracle's);
                    argv = [sys.executable, *argv[1:]]  # its candidates run on spec.json's release
                if name in tools:
                    (work / "repro.py").write_text(report.script)
                    row[name] = run_competitor(argv, spec, cap, work, env)
        rows.append(row)
        print(_line(row), flush=True)
        (args.out / f"results-{args.half}.json").write_text(json.dumps(rows, indent=1, default=str))
    print(_summary(rows))
    return 0


def _tool(row: dict, tool: str) -> str:
    r = row.get(tool)
    if not r:
        return "-"
    cap = "*" if r["capped"] else ""
    bad = "" if r["verified"] else "!"
    return f"{r['lines']} / {r['calls']} / {r['seconds']}{cap}{bad}"


def _line(row: dict) -> str:
    yes = lambda ok: "yes" if ok else "NO"  # noqa: E731
    return (f"| {row['id']} | {row['half']} | {row['kind']} | {row['expected']} | "
            f"{yes(row['affected_outcome'] == 'same_error')} | {yes(row['fixed_outcome'] != 'same_error')} | "
            f"{yes(row['boundary_ok'])} ({row['probed']}/{row['versions']}) | {row['original']} | "
            f"{row['scrub_lines']} / {row['scrub_calls']}{'' if row['scrub_recheck'] or not row['scrub_lines'] else '!'} | "
            f"{_tool(row, 'ours')} | {_tool(row, 'pysource-minimize')} | {_tool(row, 'shrinkray')} |")


def _summary(rows: list[dict]) -> str:
    out = []
    for half in sorted({r["half"] for r in rows}):
        got = [r for r in rows if r["half"] == half]
        line = (f"half {half}: {len(got)} bugs; reproduced on affected {sum(r['affected_outcome'] == 'same_error' for r in got)}, "
                f"not on fixed {sum(r['fixed_outcome'] != 'same_error' for r in got)}, "
                f"boundary right {sum(r['boundary_ok'] for r in got)}; environments probed "
                f"{sum(r['probed'] for r in got)} of {sum(r['versions'] for r in got)} versions")
        for tool in ("ours", "pysource-minimize", "shrinkray"):
            have = [r for r in got if r.get(tool) and r[tool]["lines"] is not None]
            if have:
                line += (f"; {tool}: {sum(r[tool]['lines'] for r in have)} lines / {sum(r[tool]['calls'] for r in have)} "
                         f"calls / {sum(r[tool]['seconds'] for r in have):.0f} s on {len(have)}, "
                         f"{sum(not r[tool]['verified'] for r in have)} failed the cold re-check")
        out.append(line)
    return "\n".join(out)


if __name__ == "__main__":
    sys.exit(main())
