"""The store's contract, held on every engine (a SQLite file, a PostgreSQL schema): what the
commands, the one flow and the live modules rely on, including many workers sharing one store."""

import json
import threading
import time
from datetime import UTC, datetime

import pytest

from builders import apply_plan, make_issue
from issuetriage.act.flow import DONE, act, engine
from issuetriage.act.hold import Mode
from issuetriage.engine.effects import diff
from issuetriage.engine.pipeline import triage_with
from issuetriage.errors import StoreError, UserError
from issuetriage.github import mirror
from issuetriage.live import events
from issuetriage.models import Decision, Plan
from issuetriage.store.applier import StoreApplier
from issuetriage.store.sqlite import MIGRATIONS, Store, StoreConflict
from store.stores import raw, worker


def write_jsonl(path, records):
    path.write_text("\n".join(r if isinstance(r, str) else json.dumps(r) for r in records) + "\n")
    return path


def record(number, **kw):
    return {"number": number, "url": f"https://github.com/pytorch/pytorch/issues/{number}", "state": "open",
            "title": f"issue {number}", "labels": [], "created": "2024-01-01", "author": "a",
            "body": "torch.linalg.svd fails on this matrix", **kw}


def test_migrations_are_recorded(url):
    with Store(url) as store:
        versions = [r[0] for r in store.db.execute("SELECT version FROM schema_migrations ORDER BY version")]
    assert versions == [m.version for m in MIGRATIONS]
    with Store(url) as store:  # reopening applies nothing twice
        assert store.db.execute("SELECT COUNT(*) FROM schema_migrations").fetchone()[0] == len(MIGRATIONS)


def test_import_round_trip_derives_repo_from_url(url, tmp_path):
    path = write_jsonl(tmp_path / "i.jsonl", [record(1, labels=["module: nn"]), record(2)])
    with Store(url) as store:
        assert store.import_jsonl(path) == 2
        issue = store.get_issue("pytorch/pytorch", 1)
    assert issue.labels == ("module: nn",) and issue.title == "issue 1"


def test_an_issue_reads_back_equal_to_what_was_stored(url):
    when = datetime(2024, 3, 1, 12, 30, tzinfo=UTC)
    issue = make_issue(number=2**31 - 1, body="50% of runs? 'quoted' \"double\" %s ? \\ ünï 🙂",
                       labels=("module: nn", "50%"), created_at=when, locked=True,
                       comments=[{"author": "b", "body": "?%", "created_at": when, "author_association": "MEMBER"}])
    with Store(url) as store:
        store.put_issue(issue)
        store.put_issue(issue)  # replacing keeps one copy
        assert store.get_issue(issue.repo, issue.number) == issue
        assert store.count("issues") == 1 and store.count("comments") == 1


def test_question_marks_and_percent_signs_in_sql_literals_stay_text(url):
    with Store(url) as store:
        store.put_issue(make_issue(title="what?"))
        rows = store.db.execute("SELECT title FROM issues WHERE title LIKE '%?' AND number=?", (7,)).fetchall()
    assert [r["title"] for r in rows] == ["what?"]


def test_aggregates_come_back_as_int_and_float(url):
    with Store(url) as store:
        store.put_issues([make_issue(number=n) for n in (1, 2)])
        total, mean, most = store.db.execute("SELECT SUM(number), AVG(number), MAX(number) FROM issues").fetchone()
    assert (total, mean, most) == (3, 1.5, 2)
    assert [type(v) for v in (total, mean, most)] == [int, float, int]


def test_issues_sort_by_code_point_as_sqlite_does(url):
    with Store(url) as store:
        for repo in ("pytorch/vision", "Pytorch/pytorch", "pytorch/audio", "pytorch/Zeta"):
            store.put_issue(make_issue(repo=repo))
        assert [i.repo for i in store.issues()] == ["Pytorch/pytorch", "pytorch/Zeta", "pytorch/audio",
                                                    "pytorch/vision"]


@pytest.mark.parametrize("bad,message", [
    ("{not json", "i.jsonl:2: malformed JSON"),
    (json.dumps({"number": 3, "url": "https://github.com/pytorch/pytorch/issues/3", "body": "x"}), "i.jsonl:2: title: missing"),
    ("[1, 2]", "i.jsonl:2: expected a JSON object"),
    # values the store cannot hold
    (json.dumps(record(2**70)), "i.jsonl:2: number: Input should be less than or equal to"),
    (json.dumps(record(3)).replace('"issue 3"', '"issue \\ud800 3"'), "i.jsonl:2: title: not valid Unicode"),
])
def test_bad_import_names_the_line_and_writes_nothing(url, tmp_path, bad, message):
    path = write_jsonl(tmp_path / "i.jsonl", [record(1), bad, record(4)])
    with Store(url) as store:
        with pytest.raises(UserError, match=message):
            store.import_jsonl(path)
        assert store.count("issues") == 0


def test_a_failed_write_rolls_the_whole_transaction_back(url):
    with Store(url) as store:
        with pytest.raises(StoreError, match="cannot write"):
            with store.transaction():
                store.put_issue(make_issue(number=1))
                store.db.execute("INSERT INTO issues (repo) VALUES (?)", ("x",))  # violates NOT NULL
        assert store.count("issues") == 0
        store.put_issue(make_issue(number=2))  # the connection is usable again
        assert [i.number for i in store.issues()] == [2]


def test_store_from_a_newer_version_is_refused(url):
    Store(url).close()
    raw(url, "INSERT INTO schema_migrations VALUES (999, 'future', 'x')")
    with pytest.raises(StoreError, match=r"newer issuetriage \(migrations \[999\]\)"):
        Store(url)


def test_another_programs_tables_are_refused_and_left_untouched(url):
    raw(url, "CREATE TABLE issues (id INTEGER, what TEXT)")
    raw(url, "INSERT INTO issues VALUES (1, 'theirs')")
    with pytest.raises(StoreError, match="not a usable store"):
        Store(url)
    assert raw(url, "SELECT * FROM issues") == [(1, "theirs")]
    with pytest.raises(Exception):  # noqa: B017 - either engine's "no such table"
        raw(url, "SELECT * FROM schema_migrations")


def test_apply_is_by_difference_and_idempotent(url, policy):
    with Store(url) as store:
        issue = make_issue(title="torch.linalg.svd gives wrong U", body="torch.linalg.svd and torch.linalg.qr")
        store.put_issue(issue)
        outcome = triage_with(issue, policy)
        first = apply_plan(store, outcome.plan, policy, outcome.judgment)
        assert first.labels and not first.empty
        stored = store.get_issue(issue.repo, issue.number)
        assert set(outcome.plan.labels_added) <= set(stored.labels)
        second = apply_plan(store, outcome.plan, policy, outcome.judgment)
        assert second.empty
        assert store.get_issue(issue.repo, issue.number) == stored
        assert [row["applied"] for row in store.audit()] == [1, 1]


def test_apply_posts_each_template_once_and_closes(url, policy):
    plan = Plan(repo="pytorch/pytorch", number=7, decision=Decision.CLOSE_QUESTION,
                labels_added=("bot-triaged",), templates=("redirect_to_forum",), close=True)
    with Store(url) as store:
        store.put_issue(make_issue())
        apply_plan(store, plan, policy)
        after = store.get_issue("pytorch/pytorch", 7)
        assert after.state == "closed" and len(after.comments) == 1
        assert policy.template_marker("redirect_to_forum") in after.comments[0].body
        assert diff(plan, after, policy).empty


def test_failed_apply_leaves_no_partial_write(url, policy):
    plan = Plan(repo="pytorch/pytorch", number=99, decision=Decision.LABEL, labels_added=("module: nn",))
    with Store(url) as store:
        with pytest.raises(UserError):
            apply_plan(store, plan, policy)
        assert store.count("audit") == 0


def test_import_takes_the_repo_from_a_rest_api_url(url, tmp_path):
    api = {"number": 5, "title": "t", "body": "b", "url": "https://api.github.com/repos/pytorch/vision/issues/5"}
    path = write_jsonl(tmp_path / "i.jsonl", [api])
    with Store(url) as store:
        store.import_jsonl(path)
        assert [i.ref for i in store.issues()] == ["pytorch/vision#5"]


def test_import_refuses_one_issue_twice_in_a_file_and_writes_nothing(url, tmp_path):
    path = write_jsonl(tmp_path / "i.jsonl", [record(1, labels=["module: nn"]), record(2),
                                              record(1, labels=["module: cuda"])])
    with Store(url) as store:
        with pytest.raises(UserError, match=r"i.jsonl:3: pytorch/pytorch#1 already at line 1"):
            store.import_jsonl(path)
        assert store.count("issues") == 0


def test_audit_filters_by_number_even_without_a_repo(url):
    with Store(url) as store:
        ids = [store.record(Plan(repo="pytorch/pytorch", number=number, decision=Decision.TRIAGE_REVIEW))
               for number in (7, 8)]
        assert ids[1] > ids[0] > 0
        assert [row["number"] for row in store.audit(number=8)] == [8]
        assert [row["id"] for row in store.audit("pytorch/pytorch")] == ids


def test_the_callers_upserts_replace_rows_in_place(url):
    """INSERT OR REPLACE as the GitHub mirror and the label events write it."""
    with Store(url) as store:
        mirror.save_cursor(store, "pytorch/pytorch", "2024-01-01", "etag-1")
        mirror.save_cursor(store, "pytorch/pytorch", "2024-02-01", "etag-2")
        assert mirror.cursor(store, "pytorch/pytorch") == ("2024-02-01", "etag-2")
        for outcome in ("failed", "triaged"):
            mirror.mark_finished(store, "pytorch/pytorch", 7, outcome)
        assert mirror.finished(store, "pytorch/pytorch") == {7}
        when = datetime(2024, 1, 1, tzinfo=UTC)
        big = 2**40  # GitHub's event ids outgrew 32 bits long ago
        history = [events.LabelEvent(7, big, "labeled", "module: nn", "alice", when),
                   events.LabelEvent(7, big + 1, "unlabeled", "module: nn", "bob", when)]
        events.save(store, "pytorch/pytorch", 7, history)
        events.save(store, "pytorch/pytorch", 7, history)
        assert events.load(store, "pytorch/pytorch") == {7: history}
        for precision in (0.25, 0.75):  # as live.demotion writes it; `precision` is a keyword in PostgreSQL
            store.db.execute("INSERT OR REPLACE INTO label_status VALUES (?,?,?,?,?,?)",
                             ("pytorch/pytorch", "module: nn", 1, precision, 4, "2024-01-01"))
        assert [tuple(r) for r in store.db.execute("SELECT label, precision FROM label_status")] == [
            ("module: nn", 0.75)]


def test_a_worker_that_read_an_issue_another_worker_then_triaged_writes_nothing(url, policy):
    """Two workers on one issue: the second decides on what it read, but by the time it writes,
    the first has triaged the issue. It must not write a second time (no doubled comment or audit
    row); its retry sees the first worker's result and skips."""
    issue = make_issue(title="torch.linalg.svd gives wrong U", body="torch.linalg.svd and torch.linalg.qr")
    with Store(url) as first, Store(url) as second:
        first.put_issue(issue)
        decide = engine()

        def decide_while_the_other_worker_acts(read, policy_):
            done = act(StoreApplier(first), issue.repo, issue.number, policy, decide, Mode(apply=True), audit=first)
            assert done.verdict is not None and done.verdict.ok
            return decide(read, policy_)

        with pytest.raises(StoreConflict, match="changed in .* while it was being triaged"):
            act(StoreApplier(second), issue.repo, issue.number, policy, decide_while_the_other_worker_acts,
                Mode(apply=True), audit=second)
        assert [row["applied"] for row in second.audit()] == [1]
        retry = act(StoreApplier(second), issue.repo, issue.number, policy, decide, Mode(apply=True), audit=second)
        assert retry.skipped == DONE
        assert len(second.audit()) == 1
        stored = second.get_issue(issue.repo, issue.number)
        assert len(stored.labels) == len(set(stored.labels))


def _blocked_on_a_lock(url: str) -> bool:
    if not url.startswith("postgresql://"):
        return True  # SQLite: BEGIN IMMEDIATE makes the second writer wait whenever it arrives
    return raw(url, "SELECT COUNT(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock'")[0][0] > 0


def test_a_worker_that_writes_while_another_worker_is_writing_waits_then_writes_nothing(url, policy):
    """The second worker reaches its write while the first one's transaction is still open: it
    waits for the issue's row, then sees the first worker's result and refuses."""
    issue = make_issue(title="torch.linalg.svd gives wrong U", body="torch.linalg.svd and torch.linalg.qr")
    outcome: dict[str, object] = {}
    reached = threading.Event()

    class ReachesItsWrite(StoreApplier):
        def atomic(self):  # type: ignore[no-untyped-def]
            reached.set()  # it read the issue before the first worker's commit, and opens its write
            return super().atomic()

    def second_worker() -> None:
        with Store(url) as store:
            try:
                act(ReachesItsWrite(store), issue.repo, issue.number, policy, engine(), Mode(apply=True),
                    audit=store)
            except StoreConflict as exc:
                outcome["refused"] = exc
    second = threading.Thread(target=second_worker)

    class HoldsItsTransaction(StoreApplier):
        def write(self, *args):  # type: ignore[no-untyped-def]
            written = super().write(*args)
            second.start()
            # not a measurement: the commit waits until the second worker is at its write (a
            # thread started under load may otherwise read only after the commit, and skip)
            assert reached.wait(120), "the second worker never reached its transaction"
            for _ in range(1000):  # PostgreSQL: until it waits on the issue's row lock
                if _blocked_on_a_lock(url):
                    break
                time.sleep(0.01)
            return written

    with Store(url) as first:
        first.put_issue(issue)
        report = act(HoldsItsTransaction(first), issue.repo, issue.number, policy, engine(), Mode(apply=True),
                     audit=first)
        second.join()
        assert report.verdict is not None and report.verdict.ok
        assert "refused" in outcome
        assert len(first.audit()) == 1


def test_worker_processes_sharing_the_store_triage_each_issue_exactly_once(url, policy):
    from concurrent.futures import ProcessPoolExecutor
    from multiprocessing import get_context

    numbers = list(range(1, 13))
    refs = [("pytorch/pytorch", n) for n in numbers]
    with Store(url) as store:
        store.put_issues([make_issue(number=n, title="torch.linalg.svd gives wrong U",
                                     body="torch.linalg.svd and torch.linalg.qr") for n in numbers])
    with ProcessPoolExecutor(3, mp_context=get_context("spawn")) as pool:
        results = list(pool.map(worker, [url] * 3, [refs, refs[::-1], refs[3:] + refs[:3]]))
    assert sum(r["applied"] for r in results) == len(numbers)
    assert sum(r["applied"] + r["skipped"] for r in results) == 3 * len(numbers)
    with Store(url) as store:
        rows = store.audit()
        assert sorted(row["number"] for row in rows) == numbers  # one audit row per issue
        assert all(row["applied"] == 1 for row in rows)
        for issue in store.issues():
            assert policy.bot.bot_triaged in issue.labels and len(issue.labels) == len(set(issue.labels))
