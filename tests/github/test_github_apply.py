"""Live triage against the stand-in: every decision kind end to end, call budgets, idempotence,
and a crash between two writes finished by the next run."""

from __future__ import annotations

import pytest
from ghtest import REPO, live, number_for, seed, standin, clock, client, policy  # noqa: F401  (fixtures)

from issuetriage.errors import GitHubServerError
from issuetriage.act.verify import Outcome
from issuetriage.github.retry import RetryPolicy
from standin import Fault

DECISIONS = ["close_question", "close_expected_behavior", "label", "request_info", "request_reproduction",
             "transfer", "redirect_oncall", "triage_review"]


def expected_outcome(plan, policy) -> Outcome:
    """The outcome a plan should leave on GitHub, read off the plan (the check reads GitHub)."""
    labels = set(plan.labels_added)
    pt2 = policy.queues.pt2.label if policy.queues.pt2 else None
    waits = {n for n, t in policy.templates.items() if "wait" in t.action.lower()}
    if plan.close:
        return Outcome.CLOSED
    if plan.transfer_repo or labels & (policy.redirect_labels | {pt2}):
        return Outcome.ROUTED
    if policy.bot.triage_review in labels:
        return Outcome.REVIEW
    if set(plan.templates) & waits:
        return Outcome.WAITING_ON_REPORTER
    return Outcome.TRIAGED


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


@pytest.mark.parametrize("decision", DECISIONS)
def test_each_decision_kind_lands_and_is_verified(standin, client, policy, decision):
    number = number_for(decision)
    seed(standin, number)
    report = live(client, number, policy)
    assert report.plan.decision.value == decision
    assert report.verdict is not None
    assert report.verdict.outcome is expected_outcome(report.plan, policy)
    assert report.verdict.missing == () and report.verdict.fixed == ()
    after = report.verdict.issue
    plan = report.plan
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


@pytest.mark.parametrize("decision", DECISIONS)
def test_call_budget_per_issue(standin, client, policy, decision):
    """One read (issue, labels, state, comments and release in one GraphQL call); writes: one per
    label set, comment, body edit, close; a transfer is two GraphQL calls and the marker on the
    moved issue. The outcome check reads the write answers: no second read."""
    number = number_for(decision)
    seed(standin, number)
    report = live(client, number, policy)
    kinds = writes_by_kind(standin)
    cost = sum(2 if k == "transfer" else 1 for k in kinds)  # transfer: id lookup + mutation
    assert len(standin.log) == 1 + cost
    assert report.extra["api_calls"] == 1 + cost
    assert len(report.writes) == len(kinds)
    if not report.plan.templates and decision in {"label", "redirect_oncall", "triage_review"}:
        assert len(standin.log) == 2 and kinds == ["labels"]  # a label decision: 2 calls, verified


def test_label_decision_with_comments_costs_two_calls(standin, client, policy):
    n = number_for("label", comment=False)
    seed(standin, n, comments=("same here on the latest release",))
    report = live(client, n, policy)
    assert report.plan.decision.value == "label" and report.verdict.ok
    assert [(r.method, r.path) for r in standin.log] == [
        ("POST", "/graphql"), ("POST", f"/repos/{REPO}/issues/{n}/labels")]


def test_a_repeat_run_reads_once_and_writes_nothing(standin, client, policy):
    n = number_for("label", comment=False)
    seed(standin, n)
    live(client, n, policy)
    standin.reset_log()
    again = live(client, n, policy)
    assert again.done_before and len(standin.log) == 1 and standin.writes == []


def test_labels_use_the_append_endpoint_and_keep_human_labels(standin, client, policy):
    n = number_for("label")
    seed(standin, n, labels=("needs design",))
    live(client, n, policy)
    assert all(r.method == "POST" for r in standin.writes if r.path.endswith("/labels"))
    assert not any(r.method == "PUT" for r in standin.log)
    assert "needs design" in standin.state.label_names(REPO, n)


@pytest.mark.parametrize("decision", DECISIONS)
def test_second_run_makes_zero_writes(standin, client, policy, decision):
    number = number_for(decision)
    seed(standin, number)
    first = live(client, number, policy)
    standin.reset_log()
    where = first.verdict.issue
    second = live(client, where.number, policy, repo=where.repo)
    assert standin.writes == []
    assert second.writes == ()


def test_dry_run_writes_nothing_and_lists_the_calls(standin, client, policy):
    n = number_for("close_question")
    seed(standin, n)
    report = live(client, n, policy, apply=False)
    assert standin.writes == []
    assert [w.split()[:2] for w in report.writes] == [
        ["POST", f"/repos/{REPO}/issues/{n}/comments"], ["PATCH", f"/repos/{REPO}/issues/{n}"],
        ["POST", f"/repos/{REPO}/issues/{n}/labels"]]
    assert '{"state": "closed", "state_reason": "not_planned"}' in report.writes[1]


@pytest.mark.parametrize("decision,fail_at", [
    ("close_question", "close"), ("close_question", "labels"), ("request_reproduction", "comment"),
    ("request_reproduction", "body"), ("request_info", "labels"), ("transfer", "transfer")])
def test_crash_between_writes_is_finished_not_doubled(standin, clock, policy, decision, fail_at):
    from issuetriage.github.client import GitHubClient
    number = number_for(decision)
    seed(standin, number)
    path = {"close": rf"/repos/{REPO}/issues/{number}", "body": rf"/repos/{REPO}/issues/{number}",
            "labels": rf"/repos/{REPO}/issues/{number}/labels", "transfer": "/graphql",
            "comment": rf"/repos/{REPO}/issues/{number}/comments"}[fail_at]
    method = "PATCH" if fail_at in {"close", "body"} else "POST"
    standin.faults.append(Fault(method, path, status=502, times=99))
    dying = GitHubClient.from_env(standin.env(), clock=clock, policy=RetryPolicy(attempts=2))
    with pytest.raises(GitHubServerError):
        live(dying, number, policy)
    standin.faults.clear()
    if fail_at != "transfer":  # the id lookup of a transfer is a read
        assert writes_by_kind(standin)[-1] == fail_at  # died on that write
    fresh = GitHubClient.from_env(standin.env(), clock=clock)
    report = live(fresh, number, policy)
    assert report.verdict is not None and report.verdict.ok
    assert report.plan.decision.value == decision  # the same plan, finished
    issue = report.verdict.issue
    bot = [c for c in issue.comments if c.author == standin.state.viewer]
    posted = "\n".join(c.body for c in bot)
    for name in policy.templates:
        assert posted.count(policy.template_marker(name)) <= 1  # posted once, never twice
    assert len(bot) == (1 if decision != "transfer" else 0)
    assert len(issue.labels) == len(set(issue.labels))
    assert set(report.plan.labels_added) <= set(issue.labels)


def test_pull_requests_are_refused_before_any_write(standin, client, policy):
    standin.state.add_issue(REPO, 9, "Fix sort", "diff")
    standin.state.issues[(REPO, 9)]["pull_request"] = {"url": f"https://api.github.com/repos/{REPO}/pulls/9"}
    report = live(client, 9, policy)
    assert report.plan is None and "pull request" in report.skipped
    assert standin.writes == []
