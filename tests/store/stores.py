"""The store's engines as tests meet them: a SQLite file, or a fresh schema in the PostgreSQL that
`ISSUETRIAGE_TEST_POSTGRES_URL` points at (`.ci/run` starts one); skipped when it is unset."""

from __future__ import annotations

import os
import secrets
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

import pytest

POSTGRES_ENV = "ISSUETRIAGE_TEST_POSTGRES_URL"
ENGINES = ["sqlite", "postgresql"]


@contextmanager
def postgres_url(base: str | None = None) -> Iterator[str]:
    """A URL whose tables live in a schema of their own, dropped afterwards."""
    base = base or os.environ.get(POSTGRES_ENV)
    if not base:
        pytest.skip(f"{POSTGRES_ENV} is not set (.ci/run starts a PostgreSQL server)")
    import psycopg

    schema = f"test_{secrets.token_hex(6)}"
    with psycopg.connect(base, autocommit=True) as admin:
        admin.execute(f"CREATE SCHEMA {schema}")
        try:
            parts = urlsplit(base)
            query = urlencode([*parse_qsl(parts.query), ("options", f"-csearch_path={schema}")])
            yield urlunsplit(parts._replace(query=query))
        finally:
            admin.execute(f"DROP SCHEMA {schema} CASCADE")


@contextmanager
def store_url(engine: str, tmp_path: Path) -> Iterator[str]:
    """Where a test's store lives on `engine`: several connections (workers) may open it."""
    if engine == "sqlite":
        yield str(tmp_path / "store.db")
    else:
        with postgres_url() as url:
            yield url


def raw(url: str, sql: str, params: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Run SQL on the engine directly, not through the store (as another program would)."""
    if url.startswith("postgresql://"):
        import psycopg

        with psycopg.connect(url, autocommit=True) as db:
            cur = db.execute(sql.replace("?", "%s"), params)
            return cur.fetchall() if cur.description else []
    import sqlite3

    db = sqlite3.connect(url, isolation_level=None)
    try:
        return db.execute(sql, params).fetchall()
    finally:
        db.close()


def worker(url: str, refs: list[tuple[str, int]]) -> dict[str, int]:
    """One worker process: triage `refs` through the one flow, retrying an issue on a conflict."""
    from issuetriage.act.flow import act, engine
    from issuetriage.act.hold import Mode
    from issuetriage.policy import load_profile
    from issuetriage.store.applier import StoreApplier
    from issuetriage.store.sqlite import Store, StoreConflict

    policy, seen = load_profile("pytorch"), {"applied": 0, "skipped": 0, "conflicts": 0}
    with Store(url) as store:
        for repo, number in refs:
            while True:
                try:
                    report = act(StoreApplier(store), repo, number, policy, engine(), Mode(apply=True), audit=store)
                except StoreConflict:
                    seen["conflicts"] += 1
                    continue
                seen["applied" if report.applied else "skipped"] += 1
                break
    return seen
