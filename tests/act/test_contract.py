"""The one flow's contract, held by every applier (GitHub through the stand-in, the local store on
SQLite and on PostgreSQL).

Each case seeds the same demo issue into the applier's home, runs `act` and checks what the issue
shows afterwards, so a new applier (a webhook worker's, say) gets these promises for free.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import nullcontext
from dataclasses import dataclass

import pytest
from ghtest import demo_issues, engine_plans, number_for
from standin import Fault, StandIn

from issuetriage.act.flow import DONE, PULL_REQUEST, Applier, act, engine
from issuetriage.act.hold import Mode
from issuetriage.errors import GitHubServerError, StoreError
from issuetriage.github.apply import GitHubApplier
from issuetriage.github.client import GitHubClient
from issuetriage.github.retry import FakeClock, RetryPolicy
from issuetriage.models import Issue
from issuetriage.records import issue_from_record
from issuetriage.store.applier import StoreApplier
from issuetriage.store.sqlite import Store
from store.stores import postgres_url

REPO = "pytorch/pytorch"


@dataclass
class Home:
    """Where an issue lives, as the contract sees it."""

    applier: Callable[[], Applier]
    seed: Callable[[int, bool], None]  # number, is a pull request
    now: Callable[[int], Issue]  # the issue as it is now (read outside the flow)
    writes: Callable[[], int]  # writes that reached the home so far
    crash_on_labels: Callable[[], object]  # make the next label write fail; returns the error type


def github_home() -> Iterator[Home]:
    with StandIn() as server:
        clock = FakeClock()

        def seed(n: int, pr: bool) -> None:
            data = demo_issues()[n]
            server.state.add_issue(REPO, n, data["title"], data.get("body") or "")
            if pr:
                server.state.issues[(REPO, n)]["pull_request"] = {"url": "x"}

        def crash() -> object:
            server.faults.append(Fault("POST", rf"/repos/{REPO}/issues/\d+/labels", 502, times=2))
            return GitHubServerError

        def applier() -> Applier:
            return GitHubApplier(GitHubClient.from_env(server.env(), clock=clock,
                                                       policy=RetryPolicy(attempts=2)))

        def now(n: int) -> Issue:
            from issuetriage.github.reads import fetch_issue
            return fetch_issue(GitHubClient.from_env(server.env(), clock=clock), REPO, n)

        yield Home(applier, seed, now, lambda: len(server.writes), crash)


def store_home(engine: str) -> Iterator[Home]:
    with (postgres_url() if engine == "postgresql" else nullcontext(":memory:")) as url, Store(url) as store:
        failing = {"on": False}
        real_put = store._put
        count = {"writes": 0}

        def put(issue: Issue, transferred_to: str | None = None) -> None:
            if failing["on"]:
                failing["on"] = False
                raise StoreError("disk full (injected)")
            count["writes"] += 1
            real_put(issue, transferred_to)

        store._put = put  # type: ignore[method-assign]

        def seed(n: int, pr: bool) -> None:
            record = {**demo_issues()[n], "repo": REPO, "is_pull_request": pr}
            store.put_issues([issue_from_record(record, "demo")])
            count["writes"] = 0

        def crash() -> object:
            failing["on"] = True
            return StoreError

        yield Home(lambda: StoreApplier(store), seed, lambda n: store.get_issue(REPO, n),
                   lambda: count["writes"], crash)


@pytest.fixture(params=["github", "store", "store-postgresql"])
def home(request: pytest.FixtureRequest) -> Iterator[Home]:
    yield from (github_home() if request.param == "github" else store_home(request.param.removeprefix("store-")))


@pytest.mark.parametrize("decision", ["label", "request_info", "close_question", "triage_review"])
def test_second_run_writes_nothing(home, policy, decision):
    n = number_for(decision)
    home.seed(n, False)
    first = act(home.applier(), REPO, n, policy, engine(), Mode(apply=True))
    assert first.plan is not None and first.plan.decision.value == decision
    assert first.verdict is not None and first.verdict.ok
    written = home.writes()
    assert written > 0
    second = act(home.applier(), REPO, n, policy, engine(), Mode(apply=True))
    assert second.skipped == DONE and second.judgment is None  # no judge ran
    assert home.writes() == written


def test_pull_requests_are_refused(home, policy):
    n = number_for("label")
    home.seed(n, True)
    report = act(home.applier(), REPO, n, policy, engine(), Mode(apply=True))
    assert report.skipped == PULL_REQUEST and report.plan is None
    assert home.writes() == 0


def test_a_crash_between_writes_is_completed_without_doubling(home, policy):
    n = number_for("request_info")  # a comment, then labels
    home.seed(n, False)
    error = home.crash_on_labels()
    with pytest.raises(error):  # type: ignore[call-overload]
        act(home.applier(), REPO, n, policy, engine(), Mode(apply=True))
    report = act(home.applier(), REPO, n, policy, engine(), Mode(apply=True))
    assert report.verdict is not None and report.verdict.ok
    after = home.now(n)
    planned = engine_plans()[n]  # what the engine decides on the fresh issue
    markers = [policy.template_marker(t) for t in planned.templates]  # type: ignore[attr-defined]
    posted = "\n".join(c.body for c in after.comments)
    assert markers and all(posted.count(m) == 1 for m in markers)  # the comment once, never twice
    assert set(planned.labels_added) <= set(after.labels)  # type: ignore[attr-defined]
    assert len(after.labels) == len(set(after.labels))


def test_dry_run_writes_nothing_but_says_what_it_would(home, policy):
    n = number_for("label")
    home.seed(n, False)
    report = act(home.applier(), REPO, n, policy, engine(), Mode(apply=False))
    assert report.writes and not report.applied and report.verdict is None
    assert home.writes() == 0
