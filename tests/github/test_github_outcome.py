"""The outcome check believes GitHub's answers, not the apply step's intentions."""

from __future__ import annotations

from functools import partial

import pytest
from ghtest import REPO, live, number_for, seed
from standin import Fault

from builders import make_issue
from issuetriage.act.verify import Outcome, classify, verify
from issuetriage.github import reads
from issuetriage.github.apply import GitHubApplier
from issuetriage.models import Decision, Plan
from issuetriage.policy import load_profile

BLOCKED_LABEL = "bot-triage-blocked"


make = partial(make_issue, title="t", body="b", number=5, repo=REPO)
ASKED = load_profile("pytorch").render_template("request_more_info")


@pytest.mark.parametrize("issue,expected", [
    (make(state="closed", labels=("bot-triaged",)), Outcome.CLOSED),
    (make(labels=("oncall: distributed", "bot-triaged")), Outcome.ROUTED),
    (make(repo="pytorch/vision"), Outcome.ROUTED),
    (make(labels=("triage review", "bot-triaged")), Outcome.REVIEW),
    (make(labels=("bot-triaged",), comments=({"author": "bot", "body": ASKED, "by_bot": True},)),
     Outcome.WAITING_ON_REPORTER),
    (make(labels=("bot-triaged",), comments=({"author": "someone", "body": ASKED},)), Outcome.TRIAGED),
    (make(labels=("module: docs", "bot-triaged", "triaged")), Outcome.TRIAGED),
    (make(labels=("module: docs",)), Outcome.NO_ACTION),
    (make(), Outcome.NO_ACTION),
])
def test_classify(policy, issue, expected):
    assert classify(issue, REPO, policy) is expected


def test_missing_bot_triaged_is_re_added(standin, client, policy):
    standin.state.add_issue(REPO, 5, "t", "b", labels=("module: docs",))
    plan = Plan(repo=REPO, number=5, decision=Decision.LABEL, labels_added=("module: docs", "bot-triaged"))
    verdict = verify(GitHubApplier(client), plan, reads.fetch_issue(client, REPO, 5), policy)
    assert verdict.fixed == ("bot-triaged",)
    assert standin.state.label_names(REPO, 5) == ["module: docs", "bot-triaged"]
    assert verdict.outcome is Outcome.TRIAGED and verdict.ok


def test_guard_blocking_everything_leaves_a_marker(standin, client, policy):
    standin.state.add_issue(REPO, 5, "t", "b")
    plan = Plan(repo=REPO, number=5, decision=Decision.TRIAGE_REVIEW)
    verdict = verify(GitHubApplier(client), plan, reads.fetch_issue(client, REPO, 5), policy, blocked=True)
    assert verdict.fixed == (BLOCKED_LABEL, "bot-triaged")  # the marker is a change: the guard adds bot-triaged
    assert BLOCKED_LABEL in standin.state.label_names(REPO, 5)


def test_a_write_whose_answer_does_not_show_the_change_is_caught(standin, client, policy):
    """GitHub answers 200 to the label append but its answer lacks the labels: the check says
    no_action and lists what is missing, without a second read."""
    n = number_for("label", comment=False)
    seed(standin, n)
    standin.faults.append(Fault("POST", rf"/repos/{REPO}/issues/{n}/labels", 200, body=[], times=99))
    report = live(client, n, policy)
    assert report.verdict.outcome is Outcome.NO_ACTION
    assert not report.verdict.ok
    assert any(item.startswith("label") for item in report.verdict.missing)
