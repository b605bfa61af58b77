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
import secrets
import sys
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from multiprocessing import get_context
from pathlib import Path
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data" / "pytorch-issues-dev.jsonl"

from issuetriage.act.flow import act, engine  # noqa: E402
from issuetriage.policy import load_profile  # noqa: E402
from issuetriage.records import read_issues_jsonl  # noqa: E402
from issuetriage.store.applier import StoreApplier  # noqa: E402
from issuetriage.store.sqlite import Store, StoreConflict  # noqa: E402


def worker(url: str, refs: list[tuple[str, int]]) -> dict[str, int]:
    policy, seen = load_profile("pytorch"), {"applied": 0, "skipped": 0, "conflicts": 0}
    with Store(url) as store:
        for repo, number in refs:
            while True:
                try:
                    report = act(StoreApplier(store), repo, number, policy, engine(), apply=True, audit=store)
                except StoreConflict:
                    seen["conflicts"] += 1
                    continue
                seen["applied" if report.applied else "skipped"] += 1
                break
    return seen


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


def schema_url(base: str, schema: str) -> str:
    parts = urlsplit(base)
    return urlunsplit(parts._replace(query=urlencode([*parse_qsl(parts.query),
                                                      ("options", f"-csearch_path={schema}")])))


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
    import psycopg

    issues = read_issues_jsonl(DATA)
    issues = issues[:args.issues] if args.issues else issues
    print(f"{len(issues)} issues from {DATA.name}")
    for workers in (int(w) for w in args.workers.split(",")):
        figures = {}
        with tempfile.TemporaryDirectory() as tmp:
            figures["sqlite"] = run(str(Path(tmp) / "bench.db"), issues, workers)
        schema = f"bench_{secrets.token_hex(6)}"
        with psycopg.connect(args.postgres, autocommit=True) as admin:
            admin.execute(f"CREATE SCHEMA {schema}")
            try:
                figures["postgresql"] = run(schema_url(args.postgres, schema), issues, workers)
            finally:
                admin.execute(f"DROP SCHEMA {schema} CASCADE")
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
