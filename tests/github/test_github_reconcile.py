"""Reconcile after an outage: failed deliveries redelivered (once per delivery, 4xx refusals left
alone), issues opened since the last event seen without the bot's marker enqueued, marked ones not."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from ghtest import REPO, app_env

from issuetriage.github.installations import GitHubApp
from issuetriage.service.app_mode import AppResolver, ProfileMap
from issuetriage.service.reconcile import SWEEP_REASON, reconcile, to_redeliver

NOW = datetime(2026, 2, 3, 12, 0, tzinfo=UTC)
VISION = "pytorch/vision"


def iso(hours_ago: float) -> str:
    return (NOW - timedelta(hours=hours_ago)).strftime("%Y-%m-%dT%H:%M:%SZ")


def delivery(id: int, guid: str, hours_ago: float, status: int, redelivery: bool = False) -> dict:
    """One delivery as GitHub lists it."""
    return {"id": id, "guid": guid, "delivered_at": iso(hours_ago), "redelivery": redelivery,
            "duration": 0.1, "status": "OK" if 200 <= status < 300 else f"Invalid HTTP Response: {status}",
            "status_code": status, "event": "issues", "action": "opened", "installation_id": 4242,
            "repository_id": 1}


def issue(standin, repo: str, number: int, hours_ago: float, labels: tuple[str, ...] = (), pr: bool = False):
    standin.state.add_issue(repo, number, f"issue {number}", "body", labels=labels)
    data = standin.state.issues[(repo, number)]
    data["created_at"] = data["updated_at"] = iso(hours_ago)
    if pr:
        data["pull_request"] = {"url": "x"}


@pytest.fixture
def resolver(standin, clock) -> AppResolver:
    standin.state.installations = {REPO: 4242, VISION: 4242}
    app = GitHubApp.from_env(app_env(standin, clock), clock=clock)
    return AppResolver(app, ProfileMap(default="pytorch"))


@pytest.fixture
def queue() -> list[tuple]:
    return []


def run(resolver, queue, **kw):
    return reconcile(resolver, lambda *job: queue.append(job), NOW - timedelta(days=3), **kw)


def test_failed_deliveries_are_redelivered_once(resolver, standin, queue):
    standin.state.deliveries = [  # newest first, as GitHub lists them
        delivery(9, "g-ok-after-retry", 1, 200, redelivery=True),
        delivery(8, "g-timeout", 2, 0),
        delivery(7, "g-down-twice", 3, 503, redelivery=True),
        delivery(6, "g-down-twice", 4, 502),
        delivery(5, "g-ok-after-retry", 5, 500),
        delivery(4, "g-refused", 6, 401),  # our receiver said no (a bad signature): stays refused
        delivery(3, "g-fine", 7, 202),
        delivery(2, "g-too-old", 24 * 4, 500),  # past the window: GitHub no longer redelivers it
    ]
    done = run(resolver, queue, repos=[])
    assert sorted(standin.state.redelivered) == [7, 8]  # the latest attempt of each still-failed one
    assert sorted(done.redelivered) == ["g-down-twice", "g-timeout"]
    assert done.deliveries == 7


def test_deliveries_are_followed_across_pages(resolver, standin, queue):
    standin.state.deliveries = [delivery(1000 - i, f"g{i}", i * 0.1, 500 if i % 50 == 0 else 200)
                                for i in range(250)]
    done = run(resolver, queue, repos=[])
    pages = [r for r in standin.log if r.path == "/app/hook/deliveries"]
    assert len(pages) == 3 and done.deliveries == 250
    assert sorted(standin.state.redelivered) == [800, 850, 900, 950, 1000]


def test_sweep_enqueues_unmarked_issues_since_the_last_event(resolver, standin, queue, policy):
    marker = policy.bot.bot_triaged
    issue(standin, REPO, 1, 30)  # before the last event seen on this repository: it was handled then
    issue(standin, REPO, 2, 10)  # missed in the outage
    issue(standin, REPO, 3, 9, labels=(marker,))  # triaged already (a redelivery got there)
    issue(standin, REPO, 4, 8, pr=True)  # a pull request
    issue(standin, REPO, 5, 1)
    issue(standin, REPO, 6, 2, labels=(policy.bot.triaged,))  # a maintainer triaged it by hand
    issue(standin, REPO, 9, 3)  # its delivery was recorded: the queue has it
    issue(standin, VISION, 7, 60)  # no event seen there: swept back to the window's start
    issue(standin, VISION, 8, 24 * 5)  # older than the window
    seen = {REPO: NOW - timedelta(hours=12)}
    done = run(resolver, queue, last_seen=seen.get, seen=lambda repo, n: (repo, n) == (REPO, 9))
    assert sorted(queue) == [(REPO, 2, 4242, SWEEP_REASON), (REPO, 5, 4242, SWEEP_REASON),
                             (VISION, 7, 4242, SWEEP_REASON)]
    assert sorted(done.enqueued) == [(REPO, 2), (REPO, 5), (VISION, 7)] and done.skipped == []


def test_a_repository_without_a_usable_profile_is_skipped_with_its_reason(standin, clock, queue):
    standin.state.installations = {REPO: 4242, "other/repo": 4242}
    issue(standin, REPO, 2, 1)
    issue(standin, "other/repo", 3, 1)
    app = GitHubApp.from_env(app_env(standin, clock), clock=clock)
    resolver = AppResolver(app, ProfileMap(repos={REPO: "pytorch"}))
    done = run(resolver, queue)
    assert queue == [(REPO, 2, 4242, SWEEP_REASON)]
    assert done.skipped == [("other/repo", "other/repo: no profile: not in the server's mapping "
                                           "((no mapping file))")]


def test_to_redeliver_keeps_only_unanswered_or_failed():
    items = [delivery(1, "a", 1, 200), delivery(2, "b", 1, 422), delivery(3, "c", 1, 0),
             delivery(4, "d", 2, 500), delivery(5, "d", 1, 200)]
    assert [d["id"] for d in to_redeliver(items)] == [3]


def test_reconcile_command_dry_run_changes_nothing(standin, clock, monkeypatch, capsys):
    import json

    from test_github_cli import run
    now = datetime.now(UTC)
    standin.state.installations = {REPO: 4242}
    standin.state.deliveries = [{**delivery(5, "g-lost", 0, 503), "delivered_at": f"{now:%Y-%m-%dT%H:%M:%SZ}"}]
    issue(standin, REPO, 2, 0)
    standin.state.issues[(REPO, 2)]["created_at"] = f"{now:%Y-%m-%dT%H:%M:%SZ}"
    for key, value in app_env(standin, clock).items():
        monkeypatch.setenv(key, value)
    monkeypatch.setenv("ISSUETRIAGE_PROFILE", "pytorch")
    assert run(["reconcile", "--since", "1d", "--dry-run", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert (out["redelivered"], out["enqueued"], out["skipped"]) == (["g-lost"], [f"{REPO}#2"], [])
    assert standin.state.redelivered == [] and standin.writes == []


@pytest.mark.parametrize("argv,env,message", [
    (["reconcile", "--since", "soon"], True, "error: --since 'soon': use a number and h, d, w, m or y"),
    (["reconcile", "--repo", "nope"], True, "error: 'nope': expected OWNER/REPO"),
    (["reconcile"], False, "error: App mode needs GITHUB_APP_ID"),
])
def test_reconcile_command_bad_input_is_one_line(standin, clock, monkeypatch, capsys, argv, env, message):
    from test_github_cli import run
    monkeypatch.delenv("GITHUB_APP_ID", raising=False)
    monkeypatch.setenv("GITHUB_TOKEN", "ghp_" + "x" * 36)
    if env:
        for key, value in app_env(standin, clock).items():
            monkeypatch.setenv(key, value)
    assert run(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith(message) and err.count("\n") == 1
    assert standin.log == []
