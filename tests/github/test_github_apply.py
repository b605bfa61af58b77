"""Live triage against the stand-in: every decision kind end to end, call budgets, idempotence,
and a crash between two writes finished by the next run."""

from __future__ import annotations

import pytest
from conftest import REPO, seed

from issuetriage.errors import GitHubServerError
from issuetriage.github import reads
from issuetriage.github.outcome import Outcome
from issuetriage.github.retry import RetryPolicy
from issuetriage.github.triage import triage_live
from standin import Fault

# demo issue → (decision, outcome the check must report)
CASES = {
    102: ("close_question", Outcome.CLOSED),
    103: ("label", Outcome.TRIAGED),
    104: ("request_info", Outcome.WAITING_ON_REPORTER),
    105: ("request_reproduction", Outcome.WAITING_ON_REPORTER),
    108: ("transfer", Outcome.ROUTED),
    112: ("redirect_oncall", Outcome.ROUTED),
    114: ("triage_review", Outcome.REVIEW),
}


def writes_by_kind(standin) -> list[str]:
    kinds = []
    for r in standin.writes:
        if r.path == "/graphql":
            kinds.append("transfer" if "transferIssue" in r.body["query"] else "graphql")
        elif r.path.endswith("/labels"):
            kinds.append("labels")
        elif r.path.endswith("/comments"):
            kinds.append("comment")
        elif "state" in r.body:
            kinds.append("close")
        else:
            kinds.append("body")
    return kinds


@pytest.mark.parametrize("number", sorted(CASES))
def test_each_decision_kind_lands_and_is_verified(standin, client, policy, number):
    seed(standin, number)
    report = triage_live(client, REPO, number, policy, apply=True)
    decision, outcome = CASES[number]
    assert report.result.plan.decision.value == decision
    assert report.verdict is not None and report.verdict.outcome is outcome
    assert report.verdict.missing == () and report.verdict.fixed == ()
    after = report.verdict.issue
    plan = report.result.plan
    if plan.transfer_repo:
        assert after.repo == plan.transfer_repo
        return
    assert set(plan.labels_added) <= set(after.labels)
    bot_comments = [c for c in after.comments if c.author == standin.state.viewer]
    assert len(bot_comments) == (1 if plan.templates else 0)
    for name in plan.templates:
        assert policy.template_marker(name) in bot_comments[0].body
    assert (after.state == "closed") == plan.close
    if plan.body_edit is not None:
        assert after.body == plan.body_edit != report.before.body


@pytest.mark.parametrize("number", sorted(CASES))
def test_call_budget_per_issue(standin, client, policy, number):
    """Reads: issue (+ comments when it has any); writes: one per label set, comment, body edit,
    close; a transfer is two GraphQL calls. Verification re-reads after."""
    seed(standin, number)
    report = triage_live(client, REPO, number, policy, apply=True)
    kinds = [c.kind for c in report.calls]
    cost = sum(2 if k == "transfer" else 1 for k in kinds)  # transfer: id lookup + mutation
    reads_before = 1  # no demo issue has comments yet
    assert report.apply_calls == reads_before + cost
    assert len(standin.writes) == len(kinds)
    if report.result.plan.decision.value in {"label", "redirect_oncall", "triage_review"}:
        assert report.apply_calls <= 3 and kinds == ["labels"]


def test_label_decision_with_comments_costs_three_calls(standin, client, policy):
    seed(standin, 103, comments=("same here on 2.9",))
    report = triage_live(client, REPO, 103, policy, apply=True)
    assert report.result.plan.decision.value == "label"
    assert report.apply_calls == 3
    assert [(r.method, r.path) for r in standin.log[:3]] == [
        ("GET", f"/repos/{REPO}/issues/103"), ("GET", f"/repos/{REPO}/issues/103/comments"),
        ("POST", f"/repos/{REPO}/issues/103/labels")]


def test_labels_use_the_append_endpoint_and_keep_human_labels(standin, client, policy):
    seed(standin, 103, labels=("needs design",))
    triage_live(client, REPO, 103, policy, apply=True)
    assert all(r.method == "POST" for r in standin.writes if r.path.endswith("/labels"))
    assert not any(r.method == "PUT" for r in standin.log)
    assert "needs design" in standin.state.label_names(REPO, 103)


@pytest.mark.parametrize("number", sorted(CASES))
def test_second_run_makes_zero_writes(standin, client, policy, number):
    seed(standin, number)
    first = triage_live(client, REPO, number, policy, apply=True)
    standin.reset_log()
    where = first.verdict.issue
    second = triage_live(client, where.repo, where.number, policy, apply=True)
    assert standin.writes == []
    assert second.calls == ()


def test_dry_run_writes_nothing_and_lists_the_calls(standin, client, policy):
    seed(standin, 102)
    report = triage_live(client, REPO, 102, policy, apply=False)
    assert standin.writes == []
    assert [c.kind for c in report.calls] == ["comment", "close", "labels"]
    assert report.calls[1].payload == {"state": "closed", "state_reason": "not_planned"}


@pytest.mark.parametrize("number,fail_at", [(102, "close"), (102, "labels"), (105, "comment"), (105, "body"),
                                            (104, "labels"), (108, "transfer")])
def test_crash_between_writes_is_finished_not_doubled(standin, clock, policy, number, fail_at):
    from issuetriage.github.client import GitHubClient
    seed(standin, number)
    path = {"close": rf"/repos/{REPO}/issues/{number}", "body": rf"/repos/{REPO}/issues/{number}",
            "labels": rf"/repos/{REPO}/issues/{number}/labels", "transfer": "/graphql",
            "comment": rf"/repos/{REPO}/issues/{number}/comments"}[fail_at]
    method = "PATCH" if fail_at in {"close", "body"} else "POST"
    standin.faults.append(Fault(method, path, status=502, times=99))
    dying = GitHubClient.from_env(standin.env(), clock=clock, policy=RetryPolicy(attempts=2))
    with pytest.raises(GitHubServerError):
        triage_live(dying, REPO, number, policy, apply=True)
    standin.faults.clear()
    if fail_at != "transfer":  # the id lookup of a transfer is a read
        assert writes_by_kind(standin)[-1] == fail_at  # died on that write
    fresh = GitHubClient.from_env(standin.env(), clock=clock)
    report = triage_live(fresh, REPO, number, policy, apply=True)
    assert report.verdict is not None and report.verdict.ok
    assert report.result.plan.decision.value == CASES[number][0]  # the same plan, finished
    issue = report.verdict.issue
    bot = [c for c in issue.comments if c.author == standin.state.viewer]
    posted = "\n".join(c.body for c in bot)
    for name in policy.templates:
        assert posted.count(policy.template_marker(name)) <= 1  # posted once, never twice
    assert len(bot) == (0 if number in {108, 112, 114, 103} else 1)
    assert len(issue.labels) == len(set(issue.labels))
    assert set(report.result.plan.labels_added) <= set(issue.labels)
