"""The outcome check believes GitHub, not the apply step."""

from __future__ import annotations

import pytest
from ghtest import REPO, seed, standin, clock, client, policy  # noqa: F401  (fixtures)

from issuetriage.github.outcome import Outcome, classify, verify

BLOCKED_LABEL = "bot-triage-blocked"
from issuetriage.github.triage import triage_live
from issuetriage.models import Comment, Decision, Issue, Plan


def make(labels=(), state="open", comments=(), repo=REPO) -> Issue:
    return Issue(repo=repo, number=5, title="t", body="b", labels=labels, state=state,
                 comments=tuple(Comment(author="bot", body=c) for c in comments))


@pytest.mark.parametrize("issue,expected", [
    (make(state="closed", labels=("bot-triaged",)), Outcome.CLOSED),
    (make(labels=("oncall: distributed", "bot-triaged")), Outcome.ROUTED),
    (make(repo="pytorch/vision"), Outcome.ROUTED),
    (make(labels=("triage review", "bot-triaged")), Outcome.REVIEW),
    (make(labels=("bot-triaged",), comments=("<!-- issuetriage:template=request_more_info -->",)),
     Outcome.WAITING_ON_REPORTER),
    (make(labels=("module: docs", "bot-triaged", "triaged")), Outcome.TRIAGED),
    (make(labels=("module: docs",)), Outcome.NO_ACTION),
    (make(), Outcome.NO_ACTION),
])
def test_classify(policy, issue, expected):
    assert classify(issue, REPO, policy) is expected


def test_missing_bot_triaged_is_re_added(standin, client, policy):
    standin.state.add_issue(REPO, 5, "t", "b", labels=("module: docs",))
    plan = Plan(repo=REPO, number=5, decision=Decision.LABEL, labels_added=("module: docs", "bot-triaged"))
    verdict = verify(client, plan, REPO, 5, policy)
    assert verdict.fixed == ("bot-triaged",)
    assert standin.state.label_names(REPO, 5) == ["module: docs", "bot-triaged"]
    assert verdict.outcome is Outcome.TRIAGED and verdict.ok


def test_guard_blocking_everything_leaves_a_marker(standin, client, policy):
    standin.state.add_issue(REPO, 5, "t", "b")
    plan = Plan(repo=REPO, number=5, decision=Decision.TRIAGE_REVIEW)
    verdict = verify(client, plan, REPO, 5, policy, blocked=True)
    assert verdict.fixed == (BLOCKED_LABEL, "bot-triaged")  # the marker is a change: the guard adds bot-triaged
    assert BLOCKED_LABEL in standin.state.label_names(REPO, 5)


def test_success_reported_by_a_lying_api_is_caught(standin, client, policy):
    """Every write answers 200 but changes nothing: the check says no_action and lists what is missing."""
    seed(standin, 104)
    standin.ignore_writes = True
    report = triage_live(client, REPO, 104, policy, apply=True)
    assert report.verdict.outcome is Outcome.NO_ACTION
    assert not report.verdict.ok
    assert "comment" in report.verdict.missing
