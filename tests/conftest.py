"""Fixtures for every test folder: the shipped policy, the shared dev data (skipped when absent),
and the loopback GitHub stand-in with a fake clock and a client pointed at it."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from standin import StandIn

from builders import SHARED
from issuetriage.github.client import GitHubClient
from issuetriage.github.retry import FakeClock
from issuetriage.policy import Policy, load_profile


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
