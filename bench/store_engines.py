"""Benchmark: the store on PostgreSQL against SQLite (the baseline, same process, same data).

The dev corpus (../shared/data) is imported into a fresh store on each engine, then W worker
processes triage every issue through the one flow (`act` with the store applier, the heuristic
judge, `--apply` to the store), each worker walking all issues in its own order, so most issues
are raced for: a worker that loses a race gets `StoreConflict`, retries, and skips the issue
once it carries the done marker. It checks what must hold on both engines (one applied audit row
per issue that was written to, no label twice) and reports import time, issues/s and conflicts, and
PostgreSQL's figures as ratios of SQLite's.

    python bench/store_engines.py [--postgres URL] [--workers 1,2] [--issues N]

The URL defaults to ISSUETRIAGE_TEST_POSTGRES_URL (`.ci/with-servers` starts a server); the run
uses a schema of its own and drops it.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from multiprocessing import get_context
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data" / "pytorch-issues-dev.jsonl"
sys.path.insert(0, str(ROOT / "tests"))

from issuetriage.records import read_issues_jsonl  # noqa: E402
from issuetriage.store.sqlite import Store  # noqa: E402
from store.stores import postgres_url, worker  # noqa: E402


def run(url: str, issues: list, workers: int) -> dict[str, float]:
    with Store(url) as store:  # migrated first: the import is timed alone
        start = time.perf_counter()
        store.put_issues(issues)
        imported = time.perf_counter() - start
    refs = [(i.repo, i.number) for i in issues]
    orders = [refs[k * len(refs) // workers:] + refs[:k * len(refs) // workers] for k in range(workers)]
    start = time.perf_counter()
    with ProcessPoolExecutor(workers, mp_context=get_context("spawn")) as pool:
        results = list(pool.map(worker, [url] * workers, orders))
    took = time.perf_counter() - start
    with Store(url) as store:
        rows = store.audit()
        # an issue the tree leaves alone (already routed) is audited by each worker with no effects
        changed = [(r["repo"], r["number"]) for r in rows if r["applied"] and any(r["effects"].values())]
        assert len(changed) == len(set(changed)), "an issue written to twice"
        assert all(len(i.labels) == len(set(i.labels)) for i in store.issues()), "a label written twice"
    return {"import_s": imported, "triaged": len(changed), "audit_rows": len(rows),
            "issues_per_s": len(refs) / took, "conflicts": sum(r["conflicts"] for r in results)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--postgres", default=os.environ.get("ISSUETRIAGE_TEST_POSTGRES_URL"))
    parser.add_argument("--workers", default="1,2")
    parser.add_argument("--issues", type=int, default=0, help="only the first N issues (default: all)")
    args = parser.parse_args()
    if not DATA.exists():
        print(f"skip: {DATA} is not present")
        return 0
    if not args.postgres:
        print("skip: no PostgreSQL (--postgres URL or ISSUETRIAGE_TEST_POSTGRES_URL)")
        return 0
    issues = read_issues_jsonl(DATA)
    issues = issues[:args.issues] if args.issues else issues
    print(f"{len(issues)} issues from {DATA.name}")
    for workers in (int(w) for w in args.workers.split(",")):
        figures = {}
        with tempfile.TemporaryDirectory() as tmp:
            figures["sqlite"] = run(str(Path(tmp) / "bench.db"), issues, workers)
        with postgres_url(args.postgres) as url:
            figures["postgresql"] = run(url, issues, workers)
        base, pg = figures["sqlite"], figures["postgresql"]
        assert base["triaged"] == pg["triaged"], "the engines triaged different numbers of issues"
        for name, f in figures.items():
            print(f"workers={workers} {name:10} import {f['import_s']:.2f}s  triage {f['issues_per_s']:.0f} issues/s"
                  f"  triaged {f['triaged']:.0f}  audit rows {f['audit_rows']:.0f}  conflicts {f['conflicts']:.0f}")
        print(f"workers={workers} postgresql/sqlite: import time x{pg['import_s'] / base['import_s']:.2f}, "
              f"issues/s x{pg['issues_per_s'] / base['issues_per_s']:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
