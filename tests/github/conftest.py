"""Fixtures of the GitHub tests: the loopback stand-in, a fake clock and a client pointed at it."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from standin import StandIn

from issuetriage.github.client import GitHubClient
from issuetriage.github.retry import FakeClock


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
