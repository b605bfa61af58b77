"""What only a SQLite file does: damaged or foreign files, locks, and sharing one file between
processes (WAL mode, a busy timeout)."""

import sqlite3

import pytest

from builders import make_issue
from issuetriage.errors import StoreError
from issuetriage.store.engines import BUSY_TIMEOUT
from issuetriage.store.sqlite import Store


def test_corrupt_store_is_a_clean_error(tmp_path):
    path = tmp_path / "s.db"
    path.write_bytes(b"this is not sqlite at all" * 100)
    with pytest.raises(StoreError, match="not a usable store"):
        Store(path)


def test_a_missing_store_is_refused_when_it_must_exist(tmp_path):
    with pytest.raises(StoreError, match="no such store"):
        Store(tmp_path / "none.db", create=False)
    assert not (tmp_path / "none.db").exists()


def test_a_locked_or_read_only_store_is_a_clean_error_and_unchanged(tmp_path):
    path = tmp_path / "s.db"
    with Store(path) as holder, Store(path) as other:
        other.db.execute("PRAGMA busy_timeout = 0")  # fail at once instead of waiting for the lock
        with holder.transaction():
            holder.put_issue(make_issue(number=5))
            with pytest.raises(StoreError, match="database is locked"):
                other.put_issues([make_issue(number=1), make_issue(number=2)])
        other.db.execute("PRAGMA query_only = ON")  # what a read-only file does to every write
        with pytest.raises(StoreError, match="readonly"):
            other.put_issues([make_issue(number=1)])
    with Store(path) as store:
        assert [i.number for i in store.issues()] == [5]


def test_a_file_store_is_shared_in_wal_mode_and_writers_wait_for_the_lock(tmp_path):
    with Store(tmp_path / "s.db") as store:
        assert store.db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        assert store.db.execute("PRAGMA busy_timeout").fetchone()[0] == BUSY_TIMEOUT * 1000


def test_a_writer_commits_while_another_process_is_reading(tmp_path):
    path = tmp_path / "s.db"
    with Store(path) as writer, Store(path) as reader:
        writer.db.execute("PRAGMA busy_timeout = 0")  # fail at once instead of waiting for the reader
        writer.put_issue(make_issue(number=1))
        reader.db.execute("BEGIN")  # a long read, e.g. a report being built
        assert [i.number for i in reader.issues()] == [1]
        writer.put_issue(make_issue(number=2))
        assert [i.number for i in reader.issues()] == [1]  # the reader keeps its snapshot
        reader.db.execute("COMMIT")
        assert [i.number for i in reader.issues()] == [1, 2]


def test_another_programs_sqlite_file_is_left_byte_for_byte_untouched(tmp_path):
    path = tmp_path / "other.db"
    db = sqlite3.connect(path)
    db.execute("CREATE TABLE issues (id INTEGER, what TEXT)")
    db.commit()
    db.close()
    before = path.read_bytes()
    with pytest.raises(StoreError, match="not a usable store"):
        Store(path)
    assert path.read_bytes() == before
