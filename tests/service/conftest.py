"""Fixtures for service mode: a store, the queue (embedded SQLite, or Redis when
ISSUETRIAGE_TEST_REDIS_URL is set), jobs acting as a token on the GitHub stand-in, and the
receiver under Starlette's test client. Jobs run one at a time, by the test (`drain`)."""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from standin import StandIn
from starlette.testclient import TestClient

from issuetriage.service.app import open_jobs, receiver_app
from issuetriage.service.jobs import Jobs
from issuetriage.service.receiver import Receiver
from issuetriage.service.resolver import TokenResolver

REPO = "pytorch/pytorch"
SECRET = b"it's a secret to everybody"
REDIS_ENV = "ISSUETRIAGE_TEST_REDIS_URL"


def queues() -> list[Any]:
    redis_url = os.environ.get(REDIS_ENV)
    return [None, pytest.param(redis_url, marks=pytest.mark.skipif(
        not redis_url, reason=f"{REDIS_ENV} is not set (no Redis server for the Redis queue)"), id="redis")]


@pytest.fixture(params=queues(), ids=lambda q: "redis" if q else "sqlite")
def jobs(request, tmp_path: Path, standin: StandIn) -> Iterator[Jobs]:
    queue = request.param
    made = open_jobs(tmp_path / "t.db", queue, TokenResolver(REPO, "pytorch", standin.env()), "heuristic")
    made.huey.flush()
    yield made
    made.huey.flush()


@pytest.fixture
def sqlite_jobs(tmp_path: Path, standin: StandIn) -> Jobs:
    return open_jobs(tmp_path / "t.db", None, TokenResolver(REPO, "pytorch", standin.env()), "heuristic")


@pytest.fixture
def client(jobs: Jobs) -> TestClient:
    return TestClient(receiver_app(Receiver((SECRET,), jobs)))


def payload(event: str, action: str, number: int = 1, repo: str = REPO, sender: str = "reporter",
            **extra: Any) -> dict[str, Any]:
    """A webhook payload shaped like GitHub's (only the fields issuetriage reads)."""
    data: dict[str, Any] = {"action": action, "sender": {"login": sender, "type": "User"},
                            "repository": {"full_name": repo},
                            "installation": {"id": 4242}}
    if event in {"issues", "issue_comment"}:
        data["issue"] = {"number": number, "user": {"login": "reporter"}, "updated_at": "2026-02-01T00:00:00Z"}
    return {**data, **extra}


def sign(body: bytes, secret: bytes = SECRET) -> str:
    return "sha256=" + hmac.new(secret, body, hashlib.sha256).hexdigest()


def deliver(client: TestClient, event: str, data: Any, delivery: str | None = None,
            signature: str | None = "good", body: bytes | None = None) -> Any:
    raw = body if body is not None else json.dumps(data).encode()
    headers = {"X-GitHub-Event": event, "X-GitHub-Delivery": delivery or str(uuid.uuid4()),
               "Content-Type": "application/json"}
    if signature == "good":
        headers["X-Hub-Signature-256"] = sign(raw)
    elif signature is not None:
        headers["X-Hub-Signature-256"] = signature
    return client.post("/webhook", content=raw, headers=headers)


def drain(jobs: Jobs, limit: int = 50) -> int:
    """Run queued jobs (and retries that are due, whatever their time) until none is left."""
    import datetime as dt

    ran = 0
    while ran < limit:
        # Redis's dequeue blocks up to a second on an empty queue: ask for the depth first
        task = jobs.huey.dequeue() if jobs.huey.pending_count() else None
        if task is None:
            due = jobs.huey.read_schedule(dt.datetime.now(dt.UTC).replace(tzinfo=None) + dt.timedelta(days=1))
            if not due:
                return ran
            for item in due:
                item.eta = None  # due now: the test stands in for the clock
                jobs.huey.enqueue(item)
            continue
        jobs.huey.execute(task)
        ran += 1
    raise AssertionError("jobs keep coming")


def rows(jobs: Jobs, table: str) -> list[dict[str, Any]]:
    return [dict(r) for r in jobs.store().db.execute(f"SELECT * FROM {table}")]
