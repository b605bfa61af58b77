"""Reads beyond the issue itself, and the scrub flow's etiquette (subscription, collaborators)."""

from __future__ import annotations

import pytest
from ghtest import REPO, apply_plan, seed, standin, clock, client, policy  # noqa: F401  (fixtures)

from issuetriage.errors import UserError

from issuetriage.github import reads, writes
from issuetriage.github.client import PER_PAGE
from issuetriage.models import Decision, Plan


def test_comments_are_paginated_without_an_extra_empty_page(standin, client):
    standin.state.add_issue(REPO, 1, "t", "b", comments=tuple(f"c{i}" for i in range(PER_PAGE + 3)))
    issue = reads.fetch_issue(client, REPO, 1)
    assert [c.body for c in issue.comments][-1] == f"c{PER_PAGE + 2}" and len(issue.comments) == PER_PAGE + 3
    assert [r.body["variables"]["after"] for r in standin.log] == [None, str(PER_PAGE)]  # one page more


def test_issue_with_labels_comments_and_release_costs_one_read(standin, client):
    standin.state.add_issue(REPO, 1, "t", "b", labels=("module: nn",), comments=("same here",))
    standin.state.releases[REPO] = "v2.10.1"
    snapshot = reads.read_issue(client, REPO, 1)
    assert len(standin.log) == 1 and standin.log[0].path == "/graphql"
    issue = snapshot.issue
    assert (issue.title, issue.body, issue.state, issue.labels) == ("t", "b", "open", ("module: nn",))
    assert [(c.author, c.body) for c in issue.comments] == [("commenter", "same here")]
    assert reads.minor_of(snapshot.latest_release) == "2.10"


def test_a_missing_issue_is_a_404(standin, client):
    from issuetriage.errors import GitHubClientError
    with pytest.raises(GitHubClientError) as failed:
        reads.fetch_issue(client, REPO, 404)
    assert failed.value.status == 404


def test_latest_release_and_similar_issues(standin, client):
    standin.state.releases[REPO] = "v2.10.1"
    assert reads.latest_minor(client, REPO) == "2.10"
    assert reads.latest_minor(client, "pytorch/vision") is None
    seed(standin, 115)
    seed(standin, 103)
    found = reads.similar_issues(client, REPO, "svd")
    assert [i.number for i in found] == [115]


def test_similar_search_sends_plain_words_never_qualifiers(standin, client):
    seed(standin, 115)
    standin.reset_log()
    reads.similar_issues(client, REPO, "SVD fails: repo:evil/x is:pr AND label:bug OR mutex")
    (request,) = standin.log
    query = request.query["q"][0]
    assert query.startswith(f"repo:{REPO} is:issue ")
    terms = query.removeprefix(f"repo:{REPO} is:issue ").split(" OR ")
    assert ":" not in "".join(terms) and not {"AND", "OR", "NOT"} & set(terms)
    assert set(terms) <= {"svd", "repo", "evil", "label", "mutex"} and "svd" in terms
    assert reads.search_terms("the and for") == "" and reads.similar_issues(client, REPO, "a: b") == ()
    assert len(standin.log) == 1  # nothing to search for: no call
    assert len(reads.search_terms("alpha bravo charlie delta echoes foxtrot golfing").split(" OR ")) == 5


def test_collaborator_check(standin, client):
    standin.state.collaborators.add((REPO, "maintainer"))
    assert reads.is_collaborator(client, REPO, "maintainer") is True
    assert reads.is_collaborator(client, REPO, "drive-by") is False


def test_subscription_is_saved_before_and_restored_after_writes(standin, client, policy):
    standin.state.add_issue(REPO, 3, "t", "b")
    standin.state.subscriptions[(REPO, 3)] = "UNSUBSCRIBED"
    issue = reads.fetch_issue(client, REPO, 3)
    plan = Plan(repo=REPO, number=3, decision=Decision.REQUEST_INFO, templates=("request_more_info",),
                labels_added=("bot-triaged",))
    apply_plan(client, plan, issue, policy, keep_subscription=True)
    kinds = [("graphql" if r.path == "/graphql" else r.method) for r in standin.log[1:]]
    assert kinds == ["graphql", "graphql", "POST", "POST", "graphql"]  # read, save, comment, labels, restore
    assert standin.state.subscriptions[(REPO, 3)] == "UNSUBSCRIBED"  # commenting had subscribed us


def test_commenting_subscribes_the_viewer_in_the_standin(standin, client):
    standin.state.add_issue(REPO, 5, "t", "b")
    writes.comment(client, REPO, 5, "hello")
    assert writes.subscription(client, REPO, 5)[1] == "SUBSCRIBED"


def test_subscription_is_not_restored_when_the_issue_gets_closed(standin, client, policy):
    standin.state.add_issue(REPO, 4, "t", "b")
    issue = reads.fetch_issue(client, REPO, 4)
    plan = Plan(repo=REPO, number=4, decision=Decision.CLOSE_QUESTION, templates=("redirect_to_forum",),
                close=True, labels_added=("bot-triaged",))
    apply_plan(client, plan, issue, policy, keep_subscription=True)
    mutations = [r for r in standin.log if r.path == "/graphql" and "mutation" in r.body["query"]]
    assert mutations == []


def test_a_moved_issue_is_read_only_by_who_expects_the_move(standin, client):
    standin.state.add_issue("pytorch/vision", 5, "moved here", "b")
    standin.state.moved[(REPO, 77)] = ("pytorch/vision", 5)
    with pytest.raises(UserError, match="pytorch/pytorch#77 was moved to pytorch/vision#5"):
        reads.fetch_issue(client, REPO, 77)
    here = reads.fetch_issue(client, REPO, 77, moved_ok=True)
    assert (here.repo, here.number, here.title) == ("pytorch/vision", 5, "moved here")
