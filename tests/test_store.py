import json
import sqlite3

import pytest

from builders import make_issue
from issuetriage.engine.effects import diff
from issuetriage.engine.pipeline import triage_with
from issuetriage.errors import StoreError, UserError
from issuetriage.models import Decision, Plan
from issuetriage.store.sqlite import MIGRATIONS, Store


def write_jsonl(path, records):
    path.write_text("\n".join(r if isinstance(r, str) else json.dumps(r) for r in records) + "\n")
    return path


def record(number, **kw):
    return {"number": number, "url": f"https://github.com/pytorch/pytorch/issues/{number}", "state": "open",
            "title": f"issue {number}", "labels": [], "created": "2024-01-01", "author": "a",
            "body": "torch.linalg.svd fails on this matrix", **kw}


def test_migrations_are_recorded(tmp_path):
    with Store(tmp_path / "s.db") as store:
        versions = [r[0] for r in store.db.execute("SELECT version FROM schema_migrations")]
    assert versions == [m.version for m in MIGRATIONS]
    with Store(tmp_path / "s.db") as store:  # reopening applies nothing twice
        assert store.db.execute("SELECT COUNT(*) FROM schema_migrations").fetchone()[0] == len(MIGRATIONS)


def test_import_round_trip_derives_repo_from_url(tmp_path):
    path = write_jsonl(tmp_path / "i.jsonl", [record(1, labels=["module: nn"]), record(2)])
    with Store(":memory:") as store:
        assert store.import_jsonl(path) == 2
        issue = store.get_issue("pytorch/pytorch", 1)
    assert issue.labels == ("module: nn",) and issue.title == "issue 1"


@pytest.mark.parametrize("bad,message", [
    ("{not json", "i.jsonl:2: malformed JSON"),
    (json.dumps({"number": 3, "url": "https://github.com/pytorch/pytorch/issues/3", "body": "x"}), "i.jsonl:2: title: missing"),
    ("[1, 2]", "i.jsonl:2: expected a JSON object"),
    # values SQLite cannot hold
    (json.dumps(record(2**70)), "i.jsonl:2: number: Input should be less than or equal to"),
    (json.dumps(record(3)).replace('"issue 3"', '"issue \\ud800 3"'), "i.jsonl:2: title: not valid Unicode"),
])
def test_bad_import_names_the_line_and_writes_nothing(tmp_path, bad, message):
    path = write_jsonl(tmp_path / "i.jsonl", [record(1), bad, record(4)])
    with Store(tmp_path / "s.db") as store:
        with pytest.raises(UserError, match=message):
            store.import_jsonl(path)
        assert store.count("issues") == 0


def test_corrupt_store_is_a_clean_error(tmp_path):
    path = tmp_path / "s.db"
    path.write_bytes(b"this is not sqlite at all" * 100)
    with pytest.raises(StoreError, match="not a usable store"):
        Store(path)


def test_store_from_a_newer_version_is_refused(tmp_path):
    path = tmp_path / "s.db"
    Store(path).close()
    db = sqlite3.connect(path)
    db.execute("INSERT INTO schema_migrations VALUES (999, 'future', 'x')")
    db.commit()
    db.close()
    with pytest.raises(StoreError, match="newer issuetriage"):
        Store(path)


def test_apply_is_by_difference_and_idempotent(policy):
    with Store(":memory:") as store:
        issue = make_issue(title="torch.linalg.svd gives wrong U", body="torch.linalg.svd and torch.linalg.qr")
        store.put_issue(issue)
        outcome = triage_with(issue, policy)
        first = store.apply(outcome.plan, policy, outcome.judgment)
        assert first.labels and not first.empty
        stored = store.get_issue(issue.repo, issue.number)
        assert set(outcome.plan.labels_added) <= set(stored.labels)
        second = store.apply(outcome.plan, policy, outcome.judgment)
        assert second.empty
        assert store.get_issue(issue.repo, issue.number) == stored
        assert [row["applied"] for row in store.audit()] == [1, 1]


def test_apply_posts_each_template_once_and_closes(policy):
    plan = Plan(repo="pytorch/pytorch", number=7, decision=Decision.CLOSE_QUESTION,
                labels_added=("bot-triaged",), templates=("redirect_to_forum",), close=True)
    with Store(":memory:") as store:
        store.put_issue(make_issue())
        store.apply(plan, policy)
        after = store.get_issue("pytorch/pytorch", 7)
        assert after.state == "closed" and len(after.comments) == 1
        assert policy.template_marker("redirect_to_forum") in after.comments[0].body
        assert diff(plan, after, policy).empty


def test_failed_apply_leaves_no_partial_write(policy):
    plan = Plan(repo="pytorch/pytorch", number=99, decision=Decision.LABEL, labels_added=("module: nn",))
    with Store(":memory:") as store:
        with pytest.raises(UserError):
            store.apply(plan, policy)
        assert store.count("audit") == 0


def test_a_locked_or_read_only_store_is_a_clean_error_and_unchanged(tmp_path):
    path = tmp_path / "s.db"
    data = write_jsonl(tmp_path / "i.jsonl", [record(1), record(2)])
    with Store(path) as holder, Store(path) as other:
        other.db.execute("PRAGMA busy_timeout = 0")  # fail at once instead of waiting for the lock
        with holder.transaction():
            holder.put_issue(make_issue(number=5))
            with pytest.raises(StoreError, match="database is locked"):
                other.import_jsonl(data)
        other.db.execute("PRAGMA query_only = ON")  # what a read-only file does to every write
        with pytest.raises(StoreError, match="readonly"):
            other.import_jsonl(data)
    with Store(path) as store:
        assert [i.number for i in store.issues()] == [5]


def test_import_takes_the_repo_from_a_rest_api_url(tmp_path):
    api = {"number": 5, "title": "t", "body": "b", "url": "https://api.github.com/repos/pytorch/vision/issues/5"}
    path = write_jsonl(tmp_path / "i.jsonl", [api])
    with Store(":memory:") as store:
        store.import_jsonl(path)
        assert [i.ref for i in store.issues()] == ["pytorch/vision#5"]


def test_import_refuses_one_issue_twice_in_a_file_and_writes_nothing(tmp_path):
    path = write_jsonl(tmp_path / "i.jsonl", [record(1, labels=["module: nn"]), record(2),
                                              record(1, labels=["module: cuda"])])
    with Store(tmp_path / "s.db") as store:
        with pytest.raises(UserError, match=r"i.jsonl:3: pytorch/pytorch#1 already at line 1"):
            store.import_jsonl(path)
        assert store.count("issues") == 0


def test_audit_filters_by_number_even_without_a_repo(policy):
    with Store(":memory:") as store:
        for number in (7, 8):
            store.record(Plan(repo="pytorch/pytorch", number=number, decision=Decision.TRIAGE_REVIEW))
        assert [row["number"] for row in store.audit(number=8)] == [8]
        assert [row["number"] for row in store.audit("pytorch/pytorch")] == [7, 8]


def test_another_programs_sqlite_file_is_refused_and_left_untouched(tmp_path):
    path = tmp_path / "other.db"
    db = sqlite3.connect(path)
    db.execute("CREATE TABLE issues (id INTEGER, what TEXT)")
    db.commit()
    db.close()
    with pytest.raises(StoreError, match="not a usable store"):
        Store(path)
    db = sqlite3.connect(path)
    assert db.execute("SELECT name FROM sqlite_master").fetchall() == [("issues",)]
    db.close()
