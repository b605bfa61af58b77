"""sync mirrors incrementally (since + ETag), labels diff/sync never deletes, backlog resumes."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from ghtest import REPO, seed
from standin import Fault

from issuetriage.act.backlog import backlog
from issuetriage.act.hold import Mode
from issuetriage.errors import UserError
from issuetriage.github import mirror
from issuetriage.github.backlog import parse_age
from issuetriage.github.client import GitHubClient, RepoLabel
from issuetriage.github.labels import catalog, diff_labels, sync_labels
from issuetriage.github.reads import repo_labels
from issuetriage.github.retry import RetryPolicy
from issuetriage.github.sync import sync
from issuetriage.store.sqlite import Store


@pytest.fixture
def store():
    with Store(":memory:") as db:
        yield db


def test_sync_mirrors_then_fetches_only_changes_then_nothing(standin, client, store, policy):
    for n in (102, 103, 104):
        seed(standin, n)
    standin.state.add_comment(REPO, 103, "seen on 2.9 too", "someone")
    first = sync(client, store, REPO)
    assert (first.issues, first.comments) == (3, 1)
    assert store.get_issue(REPO, 103).comments[0].body == "seen on 2.9 too"
    assert {i.number for i in store.untriaged(policy, REPO)} == {102, 103, 104}
    assert [x.name for x in mirror.stored_labels(store, REPO)] == []

    standin.state.add_comment(REPO, 104, "any update?", "someone")
    standin.reset_log()
    second = sync(client, store, REPO)
    # `since` is inclusive: the changed issue plus the one at the old cursor, never the older 102
    assert second.issues == 2 and store.get_issue(REPO, 104).comments[-1].body == "any update?"

    sync(client, store, REPO)  # settles the ETag for the unchanged query
    standin.reset_log()
    third = sync(client, store, REPO)
    assert third.not_modified
    assert [r.path for r in standin.log] == [f"/repos/{REPO}/labels", f"/repos/{REPO}/issues"]
    assert standin.log[-1].headers["if-none-match"].startswith('W/"')


def test_sync_since_overrides_the_cursor(standin, client, store):
    seed(standin, 102)
    report = sync(client, store, REPO, since="2099-01-01")
    assert report.issues == 0


def test_labels_diff_finds_missing_renamed_drift_and_extra(policy):
    wanted = catalog(policy)
    described = "module: autograd"
    assert wanted[described]
    have = (RepoLabel("MODULE:  DOCS"), RepoLabel(described, description="old words"),
            RepoLabel("wontfix"), RepoLabel("bot-triaged"))
    found = diff_labels(policy, have)
    assert ("MODULE:  DOCS", "module: docs") in found.renamed
    assert (described, "old words", wanted[described]) in found.drift
    assert all(have != want and want for _, have, want in found.drift)
    assert found.extra == ("wontfix",)
    assert "bot-triaged" not in found.missing and "module: docs" not in found.missing
    assert len(found.missing) == len(wanted) - 3


def test_labels_sync_creates_and_updates_but_never_deletes(standin, client, policy):
    standin.state.label(REPO, "module: autograd", description="old words")
    standin.state.label(REPO, "wontfix")
    standin.state.label(REPO, "Module: Docs")
    found = diff_labels(policy, repo_labels(client, REPO))
    done = sync_labels(client, REPO, policy, found)
    assert done == len(found.missing) + len(found.renamed) + len(found.drift)
    assert not any(r.method == "DELETE" for r in standin.log)
    after = diff_labels(policy, repo_labels(client, REPO))
    assert after.clean and after.extra == ("wontfix",)
    assert standin.state.labels[REPO]["module: autograd"]["description"] == catalog(policy)["module: autograd"]
    assert "module: docs" in standin.state.labels[REPO] and "Module: Docs" not in standin.state.labels[REPO]


def test_backlog_triages_within_budget_and_resumes(standin, clock, store, policy):
    for n in (102, 103, 104, 112, 114):
        seed(standin, n)
    client = GitHubClient.from_env(standin.env(), clock=clock)
    partial = backlog(client, store, REPO, policy, None, limit=10, budget=len(client.calls) + 12, mode=Mode(apply=True))  # worst case 8 an issue
    assert 0 < len(partial.reports) < 5 and partial.skipped_budget == 5 - len(partial.reports)
    rest = backlog(GitHubClient.from_env(standin.env(), clock=clock), store, REPO, policy, None,
                   limit=10, mode=Mode(apply=True))
    assert len(partial.reports) + len(rest.reports) == 5
    assert mirror.finished(store, REPO) == {102, 103, 104, 112, 114}
    standin.reset_log()
    again = backlog(GitHubClient.from_env(standin.env(), clock=clock), store, REPO, policy, None, mode=Mode(apply=True))
    assert again.reports == [] and standin.writes == []


def test_backlog_crash_is_resumed_without_doubling(standin, clock, store, policy):
    for n in (102, 104, 105):
        seed(standin, n)
    standin.faults.append(Fault("POST", rf"/repos/{REPO}/issues/104/labels", 503, times=99))
    dying = GitHubClient.from_env(standin.env(), clock=clock, policy=RetryPolicy(attempts=2))
    first = backlog(dying, store, REPO, policy, None, mode=Mode(apply=True))
    assert [r.before.number for r in first.reports] == [102] and first.failed[0][0] == 104
    standin.faults.clear()
    second = backlog(GitHubClient.from_env(standin.env(), clock=clock), store, REPO, policy, None, mode=Mode(apply=True))
    assert [r.before.number for r in second.reports] == [104, 105]
    bodies = [c["body"] for c in standin.state.comments[(REPO, 104)]]
    assert len(bodies) == 1
    assert [row["number"] for row in store.audit(REPO)] == [102, 104, 105]


def test_backlog_filters_by_label_and_age(standin, client, store, policy):
    seed(standin, 103, labels=("module: sorting and selection",))
    seed(standin, 104)
    result = backlog(client, store, REPO, policy, None, label="module: sorting and selection")
    assert [r.before.number for r in result.reports] == [103] and standin.writes == []
    young = backlog(client, store, REPO, policy, None, older_than=timedelta(days=30),
                    now=datetime(2026, 1, 20, tzinfo=UTC))
    assert young.reports == []


@pytest.mark.parametrize("text,days", [("3m", 90), ("2w", 14), ("10d", 10), ("1y", 365)])
def test_parse_age(text, days):
    assert parse_age(text) == timedelta(days=days)


def test_parse_age_rejects_nonsense():
    with pytest.raises(UserError):
        parse_age("three months")
