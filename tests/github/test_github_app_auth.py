"""GitHub App auth at scale: installation tokens per installation (cached, refreshed early, shared
across jobs and threads) and each installation's rate budget (waiting for the reset when low)."""

from __future__ import annotations

import threading

import pytest
from ghtest import REPO, app_env
from standin import Fault, RateWindow

from issuetriage.errors import GitHubClientError
from issuetriage.github import reads
from issuetriage.github.installations import REFRESH_EARLY, GitHubApp


@pytest.fixture
def app(standin, clock) -> GitHubApp:
    standin.state.add_issue(REPO, 1, "t", "b")
    standin.state.add_issue("pytorch/vision", 2, "t", "b")
    standin.state.installations = {REPO: 4242, "pytorch/vision": 77}
    return GitHubApp.from_env(app_env(standin, clock), clock=clock, low=2)


def mints(standin) -> list[str]:
    return [r.path for r in standin.log if r.path.endswith("/access_tokens")]


def test_a_token_is_minted_once_per_installation_and_shared_by_jobs(app, standin):
    for _ in range(3):  # three jobs, each with its own client
        reads.issue_json(app.client(app.installation_for(REPO)), REPO, 1)
    reads.issue_json(app.client(app.installation_for("pytorch/vision")), "pytorch/vision", 2)
    assert mints(standin) == ["/app/installations/4242/access_tokens", "/app/installations/77/access_tokens"]
    used = {r.headers["authorization"] for r in standin.log if r.path.startswith("/repos/") and "issues" in r.path}
    assert len(used) == 2 and all(value.startswith("token ghs_") for value in used)
    # the repository → installation lookups were made once each
    assert [r.path for r in standin.log].count(f"/repos/{REPO}/installation") == 1


def test_a_token_is_refreshed_early_not_at_expiry(app, standin, clock):
    client = app.client(4242)
    reads.issue_json(client, REPO, 1)
    clock.sleep(standin.token_ttl - REFRESH_EARLY - 1)
    reads.issue_json(client, REPO, 1)
    assert len(mints(standin)) == 1  # still well inside its life
    clock.sleep(2)  # now within 5 minutes of expiry: replaced before it can lapse mid-job
    reads.issue_json(client, REPO, 1)
    assert len(mints(standin)) == 2
    tokens = [r.headers["authorization"] for r in standin.log if r.path == f"/repos/{REPO}/issues/1"]
    assert tokens[0] == tokens[1] != tokens[2]


def test_threads_share_one_mint(app, standin):
    out: list[str] = []
    threads = [threading.Thread(target=lambda: out.append(app.tokens.token(4242))) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(set(out)) == 1 and len(mints(standin)) == 1


def test_a_revoked_token_is_replaced_once(app, standin):
    client = app.client(4242)
    reads.issue_json(client, REPO, 1)
    standin.accepted_tokens.clear()  # revoked before its expiry
    reads.issue_json(client, REPO, 1)  # 401, a fresh token, the same call again
    assert len(mints(standin)) == 2
    standin.faults.append(Fault("GET", f"/repos/{REPO}/issues/1", 401, times=5, body={"message": "Bad credentials"}))
    with pytest.raises(GitHubClientError, match="HTTP 401"):
        reads.issue_json(client, REPO, 1)  # refused again with the fresh token: a clean error, no loop
    assert len(mints(standin)) == 3


def test_not_installed_is_a_clean_error_and_remembered(app, standin):
    for _ in range(2):
        with pytest.raises(GitHubClientError, match="not installed on someone/else"):
            app.installation_for("someone/else")
    assert [r.path for r in standin.log].count("/repos/someone/else/installation") == 1
    assert app.is_known_absent("someone/else")


def test_a_low_budget_waits_until_reset_instead_of_failing(app, standin, clock):
    reset = clock.now() + 600
    standin.rates[4242] = RateWindow(remaining=4, reset=reset, refills=[(5000, reset + 3600)])
    client = app.client(4242)
    for _ in range(4):
        reads.issue_json(client, REPO, 1)
    assert clock.waits == [600.0]  # the third call found 2 left (= low) and waited for the reset
    assert not [r for r in standin.log if r.rate is None and r.path.startswith("/repos/")]
    row = next(r for r in app.budgets.rows() if r.installation == "4242" and r.resource == "core")
    assert (row.calls, row.remaining, row.waits, row.reset) == (4, 4998, 1, reset + 3600)


def test_budgets_are_per_installation(app, standin, clock):
    standin.rates[4242] = RateWindow(remaining=4, reset=clock.now() + 600)
    standin.rates[77] = RateWindow(remaining=100, reset=clock.now() + 600)
    reads.issue_json(app.client(4242), REPO, 1)
    reads.issue_json(app.client(4242), REPO, 1)  # 4242 is at the threshold now
    reads.issue_json(app.client(77), "pytorch/vision", 2)
    assert clock.waits == []  # 77's budget is its own
    reads.issue_json(app.client(4242), REPO, 1)
    assert clock.waits == [600.0]


def test_an_exhausted_budget_is_waited_out_by_the_retry(app, standin, clock):
    """GitHub's primary limit (403, remaining 0) on a budget we had not seen yet: retry.py waits."""
    standin.rates[4242] = RateWindow(remaining=0, reset=clock.now() + 120)
    reads.issue_json(app.client(4242), REPO, 1)
    assert clock.waits == [120.0]


def test_a_secondary_limit_honours_retry_after(app, standin, clock):
    standin.faults.append(Fault("GET", f"/repos/{REPO}/issues/1", 403, {"Retry-After": "7"},
                                {"message": "You have exceeded a secondary rate limit."}))
    reads.issue_json(app.client(4242), REPO, 1)
    assert clock.waits == [7.0]
    assert [r.path for r in standin.log].count(f"/repos/{REPO}/issues/1") == 2


def test_graphql_spends_its_own_budget(app, standin, clock):
    standin.rates[4242] = RateWindow(remaining=50, reset=clock.now() + 600)
    reads.read_issue(app.client(4242), REPO, 1)
    resources = {r.resource for r in app.budgets.rows() if r.installation == "4242"}
    assert resources == {"graphql"}


def test_metrics_show_calls_budget_and_waits_per_installation(app, standin, clock):
    from issuetriage.service.app_mode import AppResolver, ProfileMap
    reset = clock.now() + 600
    standin.rates[4242] = RateWindow(remaining=3, reset=reset)
    for _ in range(2):
        reads.issue_json(app.client(4242), REPO, 1)
    found = {name: dict(samples) for name, _, _, samples in AppResolver(app, ProfileMap()).metrics()}
    key = '{installation="4242",resource="core"}'
    assert found["github_app_calls_total"][key] == 2
    assert found["github_rate_remaining"][key] == 4999  # the second call waited for the refill
    assert found["github_rate_reset_timestamp_seconds"][key] == int(reset) + 3600
    assert found["github_rate_waits_total"][key] == 1 and found["github_rate_waited_seconds_total"][key] == 600
    assert found["github_tokens_minted_total"][""] == 1


def test_a_refused_app_key_is_one_clean_error_not_retried(app, standin, clock):
    from ghtest import app_key
    standin.jwt_check = lambda token: False  # the App's key was rotated away
    with pytest.raises(GitHubClientError, match="POST /app/installations/4242/access_tokens: HTTP 401") as info:
        reads.issue_json(app.client(4242), REPO, 1)
    assert clock.waits == [] and len(mints(standin)) == 1
    pem = app_key()[0]
    assert "PRIVATE KEY" not in str(info.value) and pem[100:140] not in str(info.value)
    assert not [r for r in standin.log if r.path.startswith("/repos/")]  # nothing sent without a token


def test_a_reset_beyond_max_wait_hands_the_job_back(standin, clock):
    from issuetriage.github.installations import BudgetExhausted
    standin.state.add_issue(REPO, 1, "t", "b")
    app = GitHubApp.from_env(app_env(standin, clock), clock=clock, low=2, max_wait=300)
    reset = clock.now() + 1800
    standin.rates[4242] = RateWindow(remaining=3, reset=reset)
    reads.issue_json(app.client(4242), REPO, 1)  # leaves 2: the threshold
    sent = len(standin.log)
    with pytest.raises(BudgetExhausted) as info:
        reads.issue_json(app.client(4242), REPO, 1)
    assert info.value.until == int(reset) and clock.waits == [] and len(standin.log) == sent
