"""Where the store lives: a SQLite file (the default) or a PostgreSQL database given a URL.

The store and its callers write one SQL: the subset SQLite and PostgreSQL share, spelled as SQLite
spells it, with `?` parameters. On SQLite that runs as is. On PostgreSQL a thin seam over
psycopg 3 (imported only when a `postgresql://` URL is given) translates the few spellings that
differ, and nothing else:

- `?` parameters become `%s` (client-side binding, so values coerce to the column's type the way
  SQLite's loose typing does), and NUMERIC results (`SUM` of integers, `AVG`) come back as the int
  or float SQLite gives, not as Decimal;
- `INSERT OR REPLACE INTO t ...` becomes `INSERT INTO t ... ON CONFLICT (t's key) DO UPDATE` of
  every other column, `INSERT OR IGNORE` becomes `... ON CONFLICT DO NOTHING`;
- in migrations, `INTEGER` becomes `BIGINT` (SQLite integers are 64-bit), `REAL` becomes
  `DOUBLE PRECISION`, `TEXT` becomes `TEXT COLLATE "C"` (byte order, so `ORDER BY` sorts as
  SQLite sorts), and `INTEGER PRIMARY KEY AUTOINCREMENT` becomes an identity column.

Each engine also says how a writer takes its locks: SQLite's `BEGIN IMMEDIATE` takes the file's
write lock for the whole transaction (other processes wait up to `BUSY_TIMEOUT` seconds, and WAL
mode lets readers go on meanwhile); PostgreSQL locks rows (`FOR UPDATE`) and serialises
migrations with an advisory lock.
"""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any, Protocol

from issuetriage.errors import StoreError

BUSY_TIMEOUT = 30.0  # seconds a SQLite writer waits for another process's write lock
CONNECT_TIMEOUT = 10  # seconds to reach a PostgreSQL server, unless the URL says otherwise
POSTGRES_SCHEMES = ("postgresql://", "postgres://")


class Connection(Protocol):
    """What the store and its callers use of a DB-API connection (sqlite3's spelling)."""

    @property
    def in_transaction(self) -> bool: ...

    def execute(self, sql: str, params: Sequence[Any] = ..., /) -> Any: ...

    def executemany(self, sql: str, rows: Iterable[Sequence[Any]], /) -> Any: ...

    def close(self) -> None: ...


class Engine(Protocol):
    @property
    def name(self) -> str: ...  # for messages: the path, or the URL without its password

    @property
    def dialect(self) -> str: ...  # "sqlite" or "postgresql"

    @property
    def db(self) -> Connection: ...

    @property
    def begin(self) -> str: ...  # starts a write transaction

    @property
    def for_update(self) -> str: ...  # appended to a SELECT that locks the rows it reads until commit

    @property
    def errors(self) -> tuple[type[Exception], ...]: ...

    def has_table(self, table: str) -> bool: ...

    def ddl(self, sql: str) -> str: ...

    def statements(self, sql: str) -> list[str]: ...  # a migration's statements, in order

    def lock_schema(self) -> None: ...

    def ready(self) -> None: ...

    def sync_commits(self, durable: bool) -> None:
        """Whether each commit waits for the disk (durable) or only for the OS."""
        ...


def open_engine(target: str, create: bool) -> Engine:
    """The engine for a store path, `:memory:`, or a `postgresql://` URL."""
    if target.startswith(POSTGRES_SCHEMES):
        return Postgres(target)
    if "://" in target:
        raise StoreError(f"{redacted(target)}: not a store; give a SQLite file or a postgresql:// URL")
    return SQLite(target, create)


class SQLite:
    """A SQLite file (or `:memory:`)."""

    dialect = "sqlite"
    begin = "BEGIN IMMEDIATE"  # take the write lock first: wait for it, never fail half-way
    for_update = ""  # BEGIN IMMEDIATE already holds the whole file
    errors: tuple[type[Exception], ...] = (sqlite3.Error,)

    def __init__(self, path: str, create: bool) -> None:
        self.name = path
        if path != ":memory:" and not create and not Path(path).exists():
            raise StoreError(f"{path}: no such store")
        try:
            self.db = sqlite3.connect(path, isolation_level=None, timeout=BUSY_TIMEOUT)
            self.db.row_factory = sqlite3.Row
            self.db.execute("PRAGMA foreign_keys = ON")
            # INSERT OR REPLACE deletes the old row: its delete triggers (the full-text index's,
            # store/fts.py) must fire too
            self.db.execute("PRAGMA recursive_triggers = ON")
        except sqlite3.Error as exc:
            raise StoreError(f"{path}: not a usable store ({exc})") from None

    def has_table(self, table: str) -> bool:
        return self.db.execute("SELECT 1 FROM sqlite_master WHERE type='table' AND name=?",
                               (table,)).fetchone() is not None

    def ddl(self, sql: str) -> str:
        return sql

    def statements(self, sql: str) -> list[str]:
        """Split at the semicolons that end a statement (not those inside a trigger's body)."""
        out, part = [], ""
        for piece in sql.split(";"):
            part += piece + ";"
            if sqlite3.complete_statement(part):
                out.append(part)
                part = ""
        return [s for s in out if s.strip(" \n;")]

    def lock_schema(self) -> None:
        pass  # BEGIN IMMEDIATE: one migrating process at a time

    def ready(self) -> None:
        """WAL mode, once the file is known to be ours: readers never wait for a writer."""
        if self.name == ":memory:":
            return
        try:
            self.db.execute("PRAGMA journal_mode = WAL")
        except sqlite3.Error:
            pass  # a read-only file stays as it is; a write to it fails with its own clear error

    def sync_commits(self, durable: bool) -> None:
        """FULL: a commit reaches the disk before it returns; NORMAL (in WAL mode): a process
        that dies loses nothing, an OS crash may lose the last commits."""
        if self.name != ":memory:":
            self.db.execute(f"PRAGMA synchronous = {'FULL' if durable else 'NORMAL'}")


class Postgres:
    """A PostgreSQL database through psycopg 3, taking the store's SQLite spelling."""

    dialect = "postgresql"
    begin = "BEGIN"  # READ COMMITTED; writers that must not race lock their rows (`for_update`)
    for_update = " FOR UPDATE"

    def __init__(self, url: str) -> None:
        self.name = redacted(url)
        try:
            import psycopg
            from psycopg.conninfo import conninfo_to_dict
        except ImportError:
            raise StoreError(f"{self.name}: a PostgreSQL store needs psycopg: "
                             "pip install 'issuetriage[postgres]'") from None
        self.errors = (psycopg.Error,)
        try:
            options: dict[str, Any] = dict(conninfo_to_dict(url))
            options.setdefault("connect_timeout", CONNECT_TIMEOUT)
            conn = psycopg.connect(autocommit=True, cursor_factory=psycopg.ClientCursor,
                                   row_factory=_row_maker, **options)
        except psycopg.Error as exc:
            raise StoreError(f"{self.name}: cannot connect ({one_line(exc).replace(url, self.name)})") from None
        conn.adapters.register_loader("numeric", _number_loader())
        self.db = _Translating(conn)

    def has_table(self, table: str) -> bool:
        return bool(self.db.execute("SELECT to_regclass(?) IS NOT NULL", (table,)).fetchone()[0])

    def ddl(self, sql: str) -> str:
        for pattern, replacement in _DDL:
            sql = re.sub(pattern, replacement, sql)
        return sql

    def statements(self, sql: str) -> list[str]:
        return [s for s in sql.split(";") if s.strip()]

    def lock_schema(self) -> None:
        """Workers starting at once on a fresh database migrate one at a time."""
        self.db.execute("SELECT pg_advisory_xact_lock(hashtext('issuetriage schema ' || current_schema()))")

    def ready(self) -> None:
        pass

    def sync_commits(self, durable: bool) -> None:
        pass  # the server's own setting


_DDL = [
    (r"\bINTEGER PRIMARY KEY AUTOINCREMENT\b", "BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY"),
    (r"\bINTEGER\b", "BIGINT"),
    (r"\bREAL\b", "DOUBLE PRECISION"),
    (r"\bTEXT\b", 'TEXT COLLATE "C"'),
]
_TOKENS = re.compile(r"""('(?:[^']|'')*'|"(?:[^"]|"")*")|\?|%""")
_INSERT_OR = re.compile(r"^\s*INSERT\s+OR\s+(REPLACE|IGNORE)\s+INTO\s+(\w+)", re.IGNORECASE)


class _Translating:
    """A psycopg connection that takes the SQLite spelling (see the module docstring)."""

    def __init__(self, conn: Any) -> None:
        from psycopg.pq import TransactionStatus

        self.conn, self._idle = conn, TransactionStatus.IDLE
        self._sql: dict[str, str] = {}

    @property
    def in_transaction(self) -> bool:
        return bool(self.conn.info.transaction_status != self._idle)

    def execute(self, sql: str, params: Sequence[Any] = ()) -> Any:
        return self.conn.execute(self.translate(sql), tuple(params))

    def executemany(self, sql: str, rows: Iterable[Sequence[Any]]) -> Any:
        cursor = self.conn.cursor()
        cursor.executemany(self.translate(sql), [tuple(row) for row in rows])
        return cursor

    def close(self) -> None:
        self.conn.close()

    def translate(self, sql: str) -> str:
        if sql not in self._sql:
            out = _TOKENS.sub(lambda m: m[1].replace("%", "%%") if m[1] else "%s" if m[0] == "?" else "%%", sql)
            if (insert := _INSERT_OR.match(out)) is not None:
                verb, table = insert[1].upper(), insert[2]
                out = f"INSERT INTO {table}{out[insert.end():]}{self._on_conflict(table, verb)}"
            self._sql[sql] = out
        return self._sql[sql]

    def _on_conflict(self, table: str, verb: str) -> str:
        if verb == "IGNORE":
            return " ON CONFLICT DO NOTHING"
        columns = self.conn.execute(
            "SELECT a.attname, a.attnum = ANY(i.indkey) FROM pg_attribute a JOIN pg_index i"
            " ON i.indrelid = a.attrelid AND i.indisprimary WHERE a.attrelid = %s::regclass"
            " AND a.attnum > 0 AND NOT a.attisdropped AND a.attgenerated = '' ORDER BY a.attnum",
            (table,)).fetchall()
        key = ", ".join(f'"{name}"' for name, in_key in columns if in_key)
        rest = ", ".join(f'"{name}" = EXCLUDED."{name}"' for name, in_key in columns if not in_key)
        if not key:
            raise StoreError(f"INSERT OR REPLACE INTO {table}: the table has no primary key")
        return f" ON CONFLICT ({key}) DO " + (f"UPDATE SET {rest}" if rest else "NOTHING")


def _number_loader() -> type:
    from psycopg.adapt import Loader

    class Number(Loader):
        def load(self, data: Any) -> int | float:
            text = bytes(data).decode()
            return int(text) if text.lstrip("-").isdigit() else float(text)

    return Number


class Row(tuple[Any, ...]):
    """A result row read by position or by column name, and `dict(row)`, like sqlite3.Row."""

    names: dict[str, int] = {}

    def __getitem__(self, key: Any) -> Any:
        return super().__getitem__(self.names[key] if isinstance(key, str) else key)

    def keys(self) -> list[str]:
        return list(self.names)


def _row_maker(cursor: Any) -> Callable[[Sequence[Any]], Row]:
    names = {column.name: i for i, column in enumerate(cursor.description or ())}
    return type("Row", (Row,), {"names": names})


def redacted(url: str) -> str:
    """A store URL fit for messages and logs: without its password."""
    url = re.sub(r"(://[^:/@?#]*):[^@/?#]*@", r"\1@", url)
    return re.sub(r"(?i)(password=)[^&]*", r"\1***", url)


def one_line(exc: BaseException) -> str:
    return " ".join(str(exc).split())
