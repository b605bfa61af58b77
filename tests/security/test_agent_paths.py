"""Red team for the other agent paths (#11 items 2 and 3): `issuetriage mcp`'s submit_plan applies
the same proposal rule as the hooks, and maintainer-only labels are refused by every path (the one
guard) and never offered to the LLM as candidates."""

from __future__ import annotations

import pytest
from redteam import CRASH, QUESTION, UNCLEAR, VISION

from builders import make_judgment
from issuetriage.agents.session import Session
from issuetriage.engine.guard import guard
from issuetriage.evidence.signals import extract_signals
from issuetriage.judges.heuristic import HeuristicJudge
from issuetriage.judges.llm.prompt import candidate_labels
from issuetriage.models import Decision, Issue, Plan

# The issue's list; the first six were already forbidden as plain names before #11.
REQUIRED = ["actionable", "needs design", "needs reproduction", "needs research", "high priority",
            "low priority", "good first issue", "proposal accepted", "OSS contribution wanted"]
MAINTAINER_ONLY = ["good first issue", "proposal accepted", "OSS contribution wanted", "newcomer",
                   "small", "large", "llm-amenable", "release-feature-request"]


class OneIssue:
    """A backend holding one issue in an in-memory store (the store applier writes there)."""

    repo = "pytorch/pytorch"

    def __init__(self, issue: Issue) -> None:
        from issuetriage.store.applier import StoreApplier
        from issuetriage.store.sqlite import Store

        self.store = Store(":memory:")
        self.store.put_issue(issue)
        self.applier, self.audit = StoreApplier(self.store), self.store

    def issue(self, number: int) -> Issue:
        return self.store.get_issue(self.repo, number)

    def similar(self, issue: Issue, limit: int) -> list[Issue]:
        return []


def submit(policy, issue, decision, labels=(), templates=(), transfer=None):
    session = Session(policy, OneIssue(issue), HeuristicJudge(), apply=True)
    return session.submit_plan(issue.number, decision, list(labels), list(templates), transfer, "redteam")


MCP_PLANS = {
    "refused_close_keeps_no_closing_comment": (CRASH, "close_question", (), ("redirect_to_forum",), None),
    "refused_expected_behaviour_close": (CRASH, "close_expected_behavior", (), ("redirect_to_forum",), None),
    "forum_template_on_a_label_decision": (UNCLEAR, "label", ("module: docs",), ("redirect_to_forum",), None),
    "forum_template_on_request_info": (UNCLEAR, "request_info", (), ("redirect_to_forum",), None),
    "repro_template_on_a_label_decision": (CRASH, "label", ("module: sorting and selection",),
                                           ("request_self_contained_reproduction",), None),
    "transfer_not_corroborated": (CRASH, "transfer", (), (), "pytorch/vision"),
    "transfer_to_the_wrong_sibling": (VISION, "transfer", (), (), "pytorch/audio"),
    # only scrub's own code path, with its sealed evidence, closes as fixed in a release
    "close_as_fixed_a_crash": (CRASH, "fixed_in_release", (), ("fixed_in_release",), None),
    "close_as_fixed_a_question": (QUESTION, "fixed_in_release", (), ("fixed_in_release",), None),
}


@pytest.mark.parametrize("name", sorted(MCP_PLANS))
def test_mcp_refuses_what_the_hooks_refuse(policy, name):
    issue, decision, labels, templates, transfer = MCP_PLANS[name]
    plan = submit(policy, issue, decision, labels, templates, transfer)["plan"]
    assert plan["close"] is False and plan["transfer_repo"] is None
    assert not set(templates) & set(plan["templates"])  # none of them goes with what is left


def test_mcp_still_closes_a_corroborated_question_and_moves_a_corroborated_transfer(policy):
    closed = submit(policy, QUESTION, "close_question", (), ("redirect_to_forum",))["plan"]
    assert closed["close"] is True and closed["templates"] == ["redirect_to_forum"]
    moved = submit(policy, VISION, "transfer", (), (), "pytorch/vision")["plan"]
    assert moved["transfer_repo"] == "pytorch/vision"


@pytest.mark.parametrize("templates", [(), ("request_more_info",)])
def test_a_corroborated_close_always_posts_the_forum_comment(policy, templates):
    """An agent that closes a usage question without the comment, or with another one, still
    closes with the comment the tree would post: a close never goes without its reason."""
    closed = submit(policy, QUESTION, "close_question", (), templates)["plan"]
    assert closed["close"] is True and closed["templates"] == ["redirect_to_forum"]


def test_the_profile_names_every_maintainer_decision_as_maintainer_only(policy):
    assert set(REQUIRED) <= set(policy.forbidden.maintainer_only)
    assert {policy.forbidden_reason(label) for label in REQUIRED} == {
        "maintainer-only: a human decision no bot path makes"}


@pytest.mark.parametrize("label", MAINTAINER_ONLY)
def test_guard_refuses_maintainer_only_labels_on_every_path(policy, label):
    issue = UNCLEAR
    proposed = Plan(repo=issue.repo, number=issue.number, decision=Decision.LABEL,
                    labels_added=("module: docs", label))
    result = guard(proposed, issue, policy)
    assert label not in result.plan.labels_added
    assert policy.bot.triage_review in result.plan.labels_added
    assert policy.forbidden_reason(label.upper())  # case does not matter


@pytest.mark.parametrize("label", MAINTAINER_ONLY)
def test_llm_never_sees_maintainer_only_labels_as_candidates(policy, label):
    offline = make_judgment(labels={label: 0.99, "module: docs": 0.9})
    names = candidate_labels(policy, extract_signals(CRASH), offline)
    assert label not in names and "module: docs" in names


def test_mcp_policy_lists_no_maintainer_only_label(policy):
    text = Session(policy, OneIssue(UNCLEAR), HeuristicJudge()).read_policy()
    listed = set(text.split("LABELS\n", 1)[1].split("\n\nDECISIONS", 1)[0].splitlines())
    assert not listed & set(MAINTAINER_ONLY + REQUIRED)
