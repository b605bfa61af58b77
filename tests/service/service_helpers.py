"""Helpers for service-mode tests: GitHub-shaped webhook payloads, signed deliveries, running
queued jobs one at a time, reading store tables. A module of its own name (not conftest), so test
folders with conftests of their own can be collected together."""

from __future__ import annotations

import hashlib
import hmac
import json
import uuid
from typing import Any

from starlette.testclient import TestClient

from issuetriage.service.jobs import Jobs

REPO = "pytorch/pytorch"
SECRET = b"it's a secret to everybody"


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
