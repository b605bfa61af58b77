"""History kept current by the store (issue #24): a label event that reaches the store makes the
issue, with its new labels, one of the next issue's similar past issues at once, without a
rebuild; the store's full-text index follows every write; the store remembers the built folder."""

from __future__ import annotations

import json

import pytest

from builders import make_issue, run_cli
from history_helpers import made_up_records, new_issue
from issuetriage.judges import stacking
from issuetriage.judges.factory import get_judge
from issuetriage.models import Issue
from issuetriage.store.sqlite import Store

REPO = "pytorch/pytorch"


def records_as_issues(records):
    return [Issue(repo=r["repo"], number=r["number"], title=r["title"], body=r["body"], labels=tuple(r["labels"]),
                  state="closed") for r in records]


@pytest.fixture
def store_with_history(url, tmp_path, capsys):
    """A store mirroring the made-up labelled history, and the folder built from it."""
    with Store(url) as store:
        store.put_issues(records_as_issues(made_up_records()))
    code, _, err = run_cli(capsys, "history", "build", "--store", url, "--out", str(tmp_path / "history"))
    assert code == 0, err
    return url, tmp_path / "history"


def similar(judge):
    """The similar past issues of a new report (its words are all in the built statistics)."""
    return [(p.number, p.labels) for p in judge.history.similar(new_issue(200), 5)]


def same_report(labels=()):
    """Issue 95: the same report as the new one, filed earlier (words first seen after a build
    count from the next `history build --update`)."""
    return new_issue(95).model_copy(update={"labels": tuple(labels)})


def test_a_label_event_puts_the_issue_among_the_next_ones_similar_past_at_once(store_with_history, monkeypatch):
    url, _ = store_with_history
    monkeypatch.setattr(stacking, "fit_stack", lambda *a, **k: pytest.fail("refitted"))
    with Store(url) as store:
        store.put_issue(same_report())
        judge = get_judge("heuristic", profile="pytorch", store=store, env={})  # the folder the store remembers
        assert judge.name == "heuristic+history"
        assert 95 not in [n for n, _ in similar(judge)]  # not labelled yet: not history
        store.add_label_event(REPO, 95, -1, "labeled", "module: nccl", "maintainer", "2026-01-01T00:00:00+00:00")
        assert similar(judge)[0] == (95, ("module: nccl",))  # the same judge, no rebuild
        store.add_label_event(REPO, 95, -2, "labeled", "module: docs", "maintainer", "2026-01-01T00:01:00+00:00")
        store.add_label_event(REPO, 95, -3, "unlabeled", "module: nccl", "maintainer", "2026-01-01T00:02:00+00:00")
        assert similar(judge)[0] == (95, ("module: docs",))


def test_the_index_follows_a_replaced_issue_text(store_with_history):
    url, _ = store_with_history
    with Store(url) as store:
        judge = get_judge("heuristic", profile="pytorch", store=store, env={})
        store.put_issue(same_report(["module: nccl"]))
        assert similar(judge)[0][0] == 95
        store.put_issue(make_issue(number=95, title="an unrelated report", labels=["module: nccl"]))
        assert 95 not in [n for n, _ in similar(judge)]


def test_the_store_remembers_the_folder_and_reports_it(store_with_history):
    url, folder = store_with_history
    with Store(url) as store:
        from issuetriage.store.fts import remembered_folder

        assert remembered_folder(store, REPO) == folder.resolve()
        assert remembered_folder(store, "acme/widgets") is None


def test_a_store_without_labelled_issues_is_one_line_and_exit_2(url, tmp_path, capsys):
    with Store(url) as store:
        store.put_issue(make_issue(number=1, title="no labels here"))
    code, out, err = run_cli(capsys, "history", "build", "--store", url, "--out", str(tmp_path / "h"))
    assert code == 2 and not out and err.startswith("error: ") and err.count("\n") == 1
    assert "no issue of pytorch/pytorch carries a label" in err and not (tmp_path / "h").exists()


def test_an_older_store_is_indexed_when_it_is_migrated(tmp_path):
    import sqlite3

    path = tmp_path / "old.db"
    with Store(path) as store:
        store.put_issue(make_issue(number=3, title="thunderclap gasket", labels=["module: nccl"]))
    db = sqlite3.connect(path)  # as a store made before migration 5
    db.executescript("DROP TABLE issue_fts; DROP TABLE history_folders; DROP TABLE history_status;"
                     "DROP TRIGGER issue_fts_insert; DROP TRIGGER issue_fts_delete; DROP TRIGGER issue_fts_update;"
                     "DELETE FROM schema_migrations WHERE version = 5;")
    db.close()
    with Store(path) as store:
        from issuetriage.store.fts import StoreIndex

        assert StoreIndex(store).matches(REPO, ['"thunderclap"'], 10) == [3]
        assert json.loads(store.db.execute("SELECT labels FROM issues").fetchone()[0]) == ["module: nccl"]
