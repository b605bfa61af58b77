"""Fixtures for every test folder: the shipped policy, the shared dev data (skipped when absent),
and the loopback GitHub stand-in with a fake clock and a client pointed at it."""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from standin import StandIn

from builders import SHARED
from issuetriage.github.client import GitHubClient
from issuetriage.github.retry import FakeClock
from issuetriage.policy import Policy, load_profile
from issuetriage.policy.compiled import CACHE_ENV


def pytest_configure(config: pytest.Config) -> None:
    """Profiles compiled in this run go to a folder of its own, which the processes tests start
    inherit: never the developer's cache, and no cache from elsewhere is read."""
    os.environ[CACHE_ENV] = tempfile.mkdtemp(prefix="issuetriage-policy-cache-")


def own_redis_database() -> None:
    """Under pytest-xdist (`.ci/run` uses `-n auto`) each worker process takes a Redis database of
    its own (1, 2, ...), so one worker's queue flush never empties another's queue. PostgreSQL
    tests already get a fresh schema each."""
    worker = os.environ.get("PYTEST_XDIST_WORKER", "")
    url = os.environ.get("ISSUETRIAGE_TEST_REDIS_URL")
    if url and worker.startswith("gw") and worker[2:].isdigit():
        base, _, last = url.rpartition("/")
        root = base if last.isdigit() and "//" in base else url.rstrip("/")
        os.environ["ISSUETRIAGE_TEST_REDIS_URL"] = f"{root}/{1 + int(worker[2:]) % 15}"


own_redis_database()  # at import, before any other conftest reads the URL (`pytest tests/service`
# loads that folder's conftest before pytest_configure runs)


def pytest_unconfigure(config: pytest.Config) -> None:
    shutil.rmtree(os.environ.pop(CACHE_ENV, ""), ignore_errors=True)


@pytest.fixture(scope="session")
def policy() -> Policy:
    return load_profile("pytorch")


@pytest.fixture(scope="session")
def dev_data() -> Path:
    path = SHARED / "data" / "pytorch-issues-dev.jsonl"
    if not path.exists():
        pytest.skip("../shared/data is not present")
    return path


@pytest.fixture
def standin() -> Iterator[StandIn]:
    with StandIn() as server:
        yield server


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def client(standin: StandIn, clock: FakeClock) -> GitHubClient:
    return GitHubClient.from_env(standin.env(), clock=clock)
