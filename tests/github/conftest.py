"""Fixtures: a running GitHub stand-in and a client wired to it with a fake clock."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from standin import StandIn  # noqa: E402

from issuetriage.github.client import GitHubClient  # noqa: E402
from issuetriage.github.retry import FakeClock  # noqa: E402

REPO = "acme/widgets"


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
