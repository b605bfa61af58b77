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

REPO = "pytorch/pytorch"


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


SAMPLES = Path(__file__).resolve().parents[2] / "src" / "issuetriage" / "samples" / "demo_issues.jsonl"


def demo_issues() -> dict[int, dict]:
    """The engine's demo issues (written for this project) by number."""
    import json
    return {d["number"]: d for d in map(json.loads, SAMPLES.read_text().splitlines()) if d}


def seed(standin: StandIn, number: int, repo: str = REPO, **extra: object) -> None:
    """Put one demo issue into the stand-in as `repo#number`."""
    data = demo_issues()[number]
    standin.state.add_issue(repo, number, data["title"], data.get("body") or "",
                            labels=tuple(extra.pop("labels", data.get("labels") or ())), **extra)  # type: ignore[arg-type]


@pytest.fixture
def policy():
    from issuetriage.policy import load_profile
    return load_profile("pytorch")


def engine_plans() -> dict[int, object]:
    """What the engine decides today for each demo issue (computed, so tests follow the engine)."""
    from issuetriage.engine import triage
    from issuetriage.policy import load_profile
    from issuetriage.store import issue_from_record
    policy = load_profile("pytorch")
    return {n: triage(issue_from_record({**d, "repo": REPO}, "demo"), policy) for n, d in demo_issues().items()}


def number_for(decision: str, comment: bool | None = None) -> int:
    """The first demo issue the engine gives `decision` (with or without a comment when asked);
    skips the test when none does."""
    for number, plan in sorted(engine_plans().items()):
        if plan.decision.value == decision and (  # type: ignore[attr-defined]
                comment is None or bool(plan.templates) == comment):  # type: ignore[attr-defined]
            return number
    pytest.skip(f"no demo issue gets {decision} from today's engine")
    raise AssertionError  # unreachable
