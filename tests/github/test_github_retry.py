"""Rate limits are waited out, 5xx and dropped connections retried with backoff, 4xx never;
all through a fake clock that records the waits (no test sleeps)."""

from __future__ import annotations

import pytest
from ghtest import REPO
from standin import Fault, sample

from issuetriage.errors import GitHubClientError, GitHubServerError
from issuetriage.github import reads, writes
from issuetriage.github.retry import Failure, RetryPolicy, wait_for

NOW = 1_700_000_000.0
POLICY = RetryPolicy()


@pytest.mark.parametrize("failure,attempt,expected", [
    (Failure(403, {"Retry-After": "30"}), 1, 30.0),
    (Failure(429, {"x-ratelimit-remaining": "0", "x-ratelimit-reset": str(int(NOW) + 120)}), 1, 120.0),
    (Failure(403, {"x-ratelimit-remaining": "0"}), 1, 60.0),
    (Failure(403, {}, "You have exceeded a secondary rate limit"), 2, 60.0),
    (Failure(403, {"x-ratelimit-remaining": "0", "x-ratelimit-reset": str(int(NOW) - 5)}), 1, 0.0),
    (Failure(403, {}, "Resource not accessible by integration"), 1, None),
    (Failure(404), 1, None),
    (Failure(422), 1, None),
    (Failure(500), 1, 1.0),
    (Failure(502), 3, 4.0),
    (Failure(0), 2, 2.0),
    (Failure(503), 5, None),
    (Failure(403, {"Retry-After": "7200"}), 1, None),
])
def test_wait_for(failure, attempt, expected):
    assert wait_for(failure, attempt, NOW, POLICY) == expected


def test_secondary_rate_limit_403_is_waited_out(standin, client, clock):
    standin.state.add_issue(REPO, 1, "t", "b")
    standin.faults.append(Fault("GET", rf"/repos/{REPO}/issues/1", 403, {"Retry-After": "7"},
                                sample("error_rate_limit")))
    assert reads.issue_json(client, REPO, 1)["number"] == 1
    assert clock.waits == [7.0]
    assert [r.path for r in standin.log] == [f"/repos/{REPO}/issues/1"] * 2


def test_primary_rate_limit_429_waits_until_reset(standin, client, clock):
    standin.state.add_issue(REPO, 1, "t", "b")
    reset = str(int(clock.now()) + 42)
    standin.faults.append(Fault("POST", rf"/repos/{REPO}/issues/1/labels", 429,
                                {"x-ratelimit-remaining": "0", "x-ratelimit-reset": reset},
                                {"message": "API rate limit exceeded"}))
    assert writes.add_labels(client, REPO, 1, ("bug",)) == ("bug",)
    assert clock.waits == [42.0]
    assert len(standin.writes) == 2 and standin.state.label_names(REPO, 1) == ["bug"]


def test_server_errors_are_retried_with_backoff(standin, client, clock):
    standin.state.add_issue(REPO, 1, "t", "b")
    standin.faults.append(Fault("GET", rf"/repos/{REPO}/issues/1", 500, times=2))
    assert reads.issue_json(client, REPO, 1)["title"] == "t"
    assert clock.waits == [1.0, 2.0]


def test_dropped_connection_is_retried(standin, client, clock):
    standin.state.add_issue(REPO, 1, "t", "b")
    standin.faults.append(Fault("GET", rf"/repos/{REPO}/issues/1", drop=True))
    assert reads.issue_json(client, REPO, 1)["number"] == 1
    assert clock.waits == [1.0]


@pytest.mark.parametrize("status", [401, 404, 410, 422])
def test_client_errors_are_never_retried(standin, client, clock, status):
    standin.state.add_issue(REPO, 1, "t", "b")
    standin.faults.append(Fault("PATCH", rf"/repos/{REPO}/issues/1", status, body={"message": "nope"}))
    with pytest.raises(GitHubClientError) as info:
        writes.edit_issue(client, REPO, 1, body="x")
    assert info.value.status == status and f"HTTP {status}" in str(info.value)
    assert clock.waits == [] and len(standin.writes) == 1


def test_persistent_5xx_gives_up_after_the_policy(standin, client, clock):
    standin.state.add_issue(REPO, 1, "t", "b")
    standin.faults.append(Fault("GET", rf"/repos/{REPO}/issues/1", 503, times=99))
    with pytest.raises(GitHubServerError, match="HTTP 503.*after 5 attempt"):
        reads.issue_json(client, REPO, 1)
    assert clock.waits == [1.0, 2.0, 4.0, 8.0]


def test_graphql_rate_limit_is_waited_out(standin, client, clock):
    from standin_routes import graphql as real_graphql

    standin.state.add_issue(REPO, 1, "t", "b")
    calls = []

    def limited(s, req):
        calls.append(1)
        if len(calls) == 1:
            return 200, {"Retry-After": "11"}, {"data": None, "errors": [
                {"type": "RATE_LIMITED", "message": "API rate limit exceeded"}]}
        return real_graphql(s, req)
    import standin_routes
    standin_routes.ROUTES[-1] = ("POST", "/graphql", limited)
    try:
        assert writes.subscription(client, REPO, 1)[1] == "UNSUBSCRIBED"
    finally:
        standin_routes.ROUTES[-1] = ("POST", "/graphql", real_graphql)
    assert clock.waits == [11.0]


def test_graphql_errors_are_client_errors(standin, client, clock):
    with pytest.raises(GitHubClientError, match="Could not resolve"):
        writes.subscription(client, REPO, 404)
    assert clock.waits == []
