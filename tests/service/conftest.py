"""Fixtures for service mode: a store, the queue (embedded SQLite, or Redis when
ISSUETRIAGE_TEST_REDIS_URL is set), jobs acting as a token on the GitHub stand-in, and the
receiver under Starlette's test client. Jobs run one at a time, by the test (`drain`)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from service_helpers import REPO, SECRET
from standin import StandIn
from starlette.testclient import TestClient

from issuetriage.service.app import open_jobs, receiver_app
from issuetriage.service.jobs import Jobs
from issuetriage.service.receiver import Receiver
from issuetriage.service.resolver import TokenResolver

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
