"""Scrub one bench issue through the library API and print what happened as one JSON line.

Run with PYTHONPATH=<a checkout>/src so that checkout's scrub runs (bench_real.py runs this code
and the code before a change, one bug after the other, on the same environments). Only library
entry points both sides have are used; the minimization is timed by wrapping `flow._minimized`.

    python bench/scrub/scrub_one.py SPEC.json     # {"issue", "package", "range", "timeout", ...}
"""

from __future__ import annotations

import json
import sys
import time
from dataclasses import asdict, is_dataclass

from issuetriage.scrub import flow
from issuetriage.scrub.model import Limits
from issuetriage.scrub.provision import Provisioner, version_interpreters
from issuetriage.scrub.source import load_issue


def main() -> int:
    spec = json.load(open(sys.argv[1]))
    provisioner = Provisioner(max_envs=400)  # the bench's environments stay; runs share them
    interps = version_interpreters(f"{spec['package']}{spec['range']}", (), provisioner)
    if spec.get("single"):  # only the affected release: no fix is known to scrub
        interps = [i for i in interps if i.label == f"{spec['package']}-{spec['affected']}"]
    spent: list[float] = []
    inner = flow._minimized

    def timed(*args: object, **kwargs: object) -> object:
        start = time.monotonic()
        try:
            return inner(*args, **kwargs)  # type: ignore[arg-type]
        finally:
            spent.append(time.monotonic() - start)

    flow._minimized = timed  # type: ignore[assignment]
    start = time.monotonic()
    report = flow.scrub(load_issue(spec["issue"]), flow.Options(
        interpreters=tuple(interps), limits=Limits(timeout_s=spec["timeout"]), runs=1,
        workers=spec.get("workers", 2), provisioner=provisioner, allow=frozenset(spec.get("allow", ()))))
    took = time.monotonic() - start
    mini = report.minimized
    bis = report.bisect
    verified = getattr(report, "verified", None)
    print(json.dumps({
        "script": report.script, "expected": asdict(report.expected) if report.expected else None,
        "outcome": str(report.outcome) if report.outcome else None,
        "stop": report.stop.reason if report.stop else None,
        "first_changed": bis.first_changed if bis else None, "last_same": bis.last_same if bis else None,
        "probed": len(bis.outcomes) if bis else 0, "versions": len(interps),
        "minimized": mini.code if mini else None, "lines": mini.lines if mini else None,
        "oracle_calls": mini.oracle_calls if mini else 0, "minimize_seconds": round(sum(spent), 1),
        "calls_by_pass": dict(mini.calls_by_pass) if mini else {}, "passes": list(mini.passes) if mini else [],
        "scrub_seconds": round(took, 1), "note": report.minimize_note,
        "verified": asdict(verified) if is_dataclass(verified) else None,  # type: ignore[arg-type]
        "minimized_on": report.minimized_on}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
