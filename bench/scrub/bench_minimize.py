"""Bench: scrub's minimizer against shrinkray and pysource-minimize on bloated repros.

All three use the same oracle (oracle.py); each competitor run is capped (--cap, default 300 s)
and a capped run reports the smallest interesting candidate it had found. `--runner warm` runs the
candidates of the in-process tools (ours, pysource-minimize) through issuetriage's fork servers
(modules pre-imported) instead of a fresh interpreter each; shrinkray calls a script per candidate,
so it always runs cold. Every tool's final answer is re-checked cold. Competitors are not project
dependencies; a missing one is skipped. Install shrinkray in a Python >= 3.12 venv, and
pysource-minimize in a venv of the oracle's Python version (it runs under the oracle's Python with
that venv's site-packages on PYTHONPATH, so its unparse emits code that Python accepts):

    /root/.pyenv/versions/3.12.1/bin/python -m venv /tmp/scrub-competitors
    /tmp/scrub-competitors/bin/pip install shrinkray
    python3.11 -m venv /tmp/scrub-psm311 && /tmp/scrub-psm311/bin/pip install pysource-minimize

Run (2 shared cores: be nice):
    PYTHONPATH=src nice -n 10 /work/venv/bin/python bench/scrub/bench_minimize.py \\
        --competitors /tmp/scrub-competitors/bin --psm-bin /tmp/scrub-psm311/bin --cap 150 --runner warm
Torch cases need torch in the oracle's Python (--python); they are skipped without it.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import oracle  # noqa: E402

from issuetriage.scrub.astedit import count_lines  # noqa: E402
from issuetriage.scrub.expected import distinctive, parse_failure  # noqa: E402
from issuetriage.scrub.minimize import minimize  # noqa: E402
from issuetriage.scrub.model import Budget, RunResult  # noqa: E402
from issuetriage.scrub.outcome import Oracle, environmental  # noqa: E402
from issuetriage.scrub.warm import imported_modules  # noqa: E402


def make_spec(case: Path, python: str, work: Path, warm: bool, workers: int) -> dict | None:
    """Expected failure from one cold run of the original, the same way scrub learns it."""
    code = case.read_text()
    spec = {"python": python, "pythonpath": str(HERE / "lib"), "timeout": 60}
    start = time.monotonic()
    returncode, stderr, _ = oracle.run(code, spec)
    took = time.monotonic() - start
    failure = parse_failure(stderr, "repro.py")
    if returncode in (None, 0) or failure is None or environmental(failure):  # e.g. torch missing
        return None
    spec.update(exception=failure.exception, substring=distinctive(failure.message),
                from_library=bool(failure.innermost_file and not failure.innermost_file.endswith("repro.py")),
                timeout=max(10.0, 5 * took), counter=str(work / "calls"), best=str(work / "best.py"),
                warm=warm, preload=list(imported_modules(code)), workers=workers)
    return spec


class BenchOracle(Oracle):
    """Our minimizer's oracle, deciding with the bench oracle's verdict."""

    def __init__(self, spec: dict) -> None:
        self.spec = spec
        super().__init__(run=self._run, expected=None, from_library=False)  # type: ignore[arg-type]

    def _run(self, code: str) -> RunResult:
        returncode, stderr, stdout = oracle.run(code, self.spec)
        return RunResult(returncode, None, 0.0, stdout, stderr, returncode is None)

    def _judge(self, code: str) -> bool:
        try:
            compile(code, "repro.py", "exec")
        except (SyntaxError, ValueError):
            return False
        with self._lock:
            self.calls += 1
        result = self._run(code)
        ok = oracle.verdict(code, result.stderr, result.exit_code, self.spec, result.stdout)
        ok = ok and not oracle.on_control(code, self.spec)
        if ok:
            self._failures[code] = parse_failure(result.stderr, "repro.py")
        return ok


def run_ours(case: Path, spec: dict, workers: int, budget: int = Budget().oracle_calls) -> dict:
    judge = BenchOracle(spec)
    start = time.monotonic()
    result = minimize(case.read_text(), judge, Budget(oracle_calls=budget), workers=workers)
    took = time.monotonic() - start
    code = result.code if result else case.read_text()
    start = time.monotonic()
    verified = oracle.interesting(code, {**spec, "warm": False})  # as scrub does after warm runs
    took += time.monotonic() - start if spec["warm"] else 0.0
    return {"lines": count_lines(code), "calls": judge.calls + spec["warm"], "seconds": round(took, 1),
            "capped": False, "code": code, "verified": verified,
            "calls_by_pass": dict(result.calls_by_pass) if result else {}}


def run_competitor(argv: list[str], spec: dict, cap: float, cwd: Path, env: dict | None) -> dict:
    for key in ("counter", "best"):
        Path(spec[key]).unlink(missing_ok=True)
    Path(spec["counter"]).touch()
    start = time.monotonic()
    proc = subprocess.Popen(argv, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True, env=env)
    capped = False
    try:
        proc.wait(timeout=cap)
    except subprocess.TimeoutExpired:
        capped = True
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
    took = time.monotonic() - start
    best = Path(spec["best"]).read_text() if Path(spec["best"]).exists() else None
    calls = Path(spec["counter"]).stat().st_size
    verified = bool(best) and oracle.interesting(best, {**spec, "warm": False})
    return {"lines": count_lines(best) if best else None, "calls": calls, "seconds": round(took, 1),
            "capped": capped, "code": best, "verified": verified}


def competitors(bindir: Path | None, psm_bin: Path | None, spec: dict, spec_path: Path,
                case_copy: Path) -> dict[str, tuple[list[str], dict | None]]:
    """(command line, environment) of each installed competitor; a missing one is left out."""
    found: dict[str, tuple[list[str], dict | None]] = {}
    site = _site_packages(psm_bin or bindir) if (psm_bin or bindir) else None
    if site:  # under the oracle's Python, with issuetriage importable for warm runs
        env = {**os.environ, "PYTHONPATH": os.pathsep.join([site, str(HERE.parent.parent / "src")])}
        found["pysource-minimize"] = ([spec["python"], str(HERE / "run_pysource_minimize.py"), str(spec_path),
                                       str(case_copy)], env)
    if bindir and (bindir / "shrinkray").exists():  # a script per candidate: always cold
        cold_spec = spec_path.with_name("spec-cold.json")
        cold_spec.write_text(json.dumps({**spec, "warm": False}))
        test = case_copy.parent / "interesting.sh"
        test.write_text(f"#!/bin/sh\nexec {sys.executable} -I -S {HERE / 'oracle.py'} {cold_spec} \"$1\"\n")
        test.chmod(0o755)
        found["shrinkray"] = ([str(bindir / "shrinkray"), "--no-llm", "--ui", "basic", "--parallelism", "2",
                               "--input-type", "arg", "--no-history", "--formatter", "none",
                               "--trivial-is-not-error", "--timeout", str(spec["timeout"]),
                               str(test), str(case_copy)], None)
    return found


def _site_packages(bindir: Path) -> str | None:
    """The folder holding pysource_minimize in that venv, if it has it."""
    probe = "import os, pysource_minimize as m; print(os.path.dirname(os.path.dirname(m.__file__)))"
    done = subprocess.run([str(bindir / "python"), "-c", probe], capture_output=True, text=True)
    return done.stdout.strip() if done.returncode == 0 else None


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", default="*.py", help="glob in bench/scrub/cases")
    parser.add_argument("--python", default=sys.executable, help="Python that runs the candidates")
    parser.add_argument("--competitors", type=Path, default=None, help="bin/ of the competitors' venv")
    parser.add_argument("--psm-bin", type=Path, default=None,
                        help="bin/ of a venv with pysource-minimize on the oracle's Python version "
                             "(its unparse must emit code that Python accepts)")
    parser.add_argument("--tools", default="ours,pysource-minimize,shrinkray",
                        help="comma list; ours-cold adds ours with cold runs when --runner warm")
    parser.add_argument("--cap", type=float, default=300.0, help="seconds per competitor run")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--budget", type=int, default=Budget().oracle_calls,
                        help="our oracle-call budget (we stop at a fixpoint or when it is spent)")
    parser.add_argument("--runner", choices=("cold", "warm"), default="cold",
                        help="how ours and pysource-minimize run candidates (shrinkray: always cold)")
    parser.add_argument("--out", type=Path, default=Path(tempfile.gettempdir()) / "scrub-bench")
    args = parser.parse_args()
    tools = args.tools.split(",")
    print(f"competitor runs capped at {args.cap:.0f} s; oracle Python {args.python}; {args.runner} runs "
          f"for ours and pysource-minimize; ours: {args.workers} workers, budget {args.budget} calls", flush=True)
    rows = []
    for case in sorted((HERE / "cases").glob(args.cases)):
        work = args.out / case.stem
        work.mkdir(parents=True, exist_ok=True)
        spec = make_spec(case, args.python, work, args.runner == "warm", args.workers)
        if spec is None:
            print(f"{case.name}: skipped (original does not fail here, e.g. torch missing)", flush=True)
            continue
        spec_path = work / "spec.json"
        spec_path.write_text(json.dumps(spec))
        row = {"case": case.name, "original": count_lines(case.read_text()), "expected":
               f"{spec['exception']}: {spec['substring']}"}
        if "ours" in tools:
            row["ours"] = run_ours(case, spec, args.workers, args.budget)
            (work / "ours.py").write_text(row["ours"]["code"])
        if "ours-cold" in tools and spec["warm"]:  # the same minimizer, a fresh interpreter per candidate
            row["ours-cold"] = run_ours(case, {**spec, "warm": False}, args.workers, args.budget)
        for name, (argv, env) in competitors(args.competitors, args.psm_bin, spec, spec_path,
                                             work / "repro.py").items():
            if name not in tools:
                continue
            (work / "repro.py").write_text(case.read_text())
            row[name] = run_competitor(argv, spec, args.cap, work, env)
            if row[name]["code"]:
                (work / f"{name}.py").write_text(row[name]["code"])
        rows.append(row)
        print(_line(row), flush=True)
    print(_summary(rows, tools))
    (args.out / "results.json").write_text(json.dumps(rows, indent=2))
    return 0


def _line(row: dict) -> str:
    parts = [f"{row['case']:<28} orig {row['original']:>3}"]
    for tool in ("ours", "ours-cold", "pysource-minimize", "shrinkray"):
        if tool in row:
            r = row[tool]
            cap = "*" if r["capped"] else ""
            bad = "" if r["verified"] else " (NOT interesting when re-run cold)"
            parts.append(f"{tool} {r['lines']} lines {r['calls']} calls {r['seconds']}s{cap}{bad}")
    return " | ".join(parts)


def _summary(rows: list[dict], tools: list[str]) -> str:
    out = ["", "tool                 total_lines  total_calls  total_seconds  capped_runs"]
    for tool in ("ours", "ours-cold", "pysource-minimize", "shrinkray"):
        got = [r[tool] for r in rows if tool in r and r[tool]["lines"] is not None]
        if got:
            out.append(f"{tool:<20} {sum(g['lines'] for g in got):>11}  {sum(g['calls'] for g in got):>11}  "
                       f"{sum(g['seconds'] for g in got):>13.1f}  {sum(g['capped'] for g in got):>11}")
    others = [t for t in ("pysource-minimize", "shrinkray") if any(t in r for r in rows)]
    if "ours" in tools and others:
        not_larger = sum(1 for r in rows if all(r["ours"]["lines"] <= r[t]["lines"] for t in others
                                                if t in r and r[t]["lines"] is not None))
        out.append(f"ours no larger than the best competitor on {not_larger}/{len(rows)} scripts")
        if any("ours-cold" in r for r in rows):
            cold = sum(r["ours-cold"]["seconds"] for r in rows if "ours-cold" in r)
            warm = sum(r["ours"]["seconds"] for r in rows if "ours-cold" in r)
            out.append(f"ours warm/cold: wall time {warm:.0f}/{cold:.0f} s = {warm / max(1, cold):.2f}")
        for t in others:
            calls = sum(r[t]["calls"] for r in rows if t in r)
            secs = sum(r[t]["seconds"] for r in rows if t in r)
            ours_calls = sum(r["ours"]["calls"] for r in rows if t in r)
            ours_secs = sum(r["ours"]["seconds"] for r in rows if t in r)
            out.append(f"ours/{t}: oracle calls {ours_calls}/{calls} = {ours_calls / max(1, calls):.2f}, "
                       f"wall time {ours_secs:.0f}/{secs:.0f} s = {ours_secs / max(1, secs):.2f}")
        out.append("(* = capped run; its time is the cap and its size the best it had found)")
    return "\n".join(out)


if __name__ == "__main__":
    sys.exit(main())
