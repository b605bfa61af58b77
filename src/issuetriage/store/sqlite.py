"""The store: issues, comments, and the audit log of every plan with its trace, on a SQLite file
(the default) or a PostgreSQL database (a `postgresql://` URL) that many workers share.

Schema changes are numbered migrations recorded in `schema_migrations`, all listed here so any
store opens in any command; each is written once, in the SQL both engines share (`engines.py`
translates the few spellings that differ). Every write is one transaction: all or nothing.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, cast

from issuetriage.engine.effects import Effects
from issuetriage.errors import StoreError, UserError
from issuetriage.judges.base import Judgment
from issuetriage.models import Comment, Issue, Plan
from issuetriage.policy import Policy
from issuetriage.records import read_issues_jsonl
from issuetriage.store import fts
from issuetriage.store.engines import one_line, open_engine


@dataclass(frozen=True)
class Migration:
    version: int
    name: str
    sql: str
    postgres: str = ""  # where the engines differ beyond what `engines.py` translates


MIGRATIONS: list[Migration] = [
    Migration(1, "issues, comments and audit", """
        CREATE TABLE issues (
            repo TEXT NOT NULL, number INTEGER NOT NULL, title TEXT NOT NULL, body TEXT NOT NULL,
            state TEXT NOT NULL, author TEXT NOT NULL, author_association TEXT NOT NULL,
            created_at TEXT, labels TEXT NOT NULL, is_pull_request INTEGER NOT NULL,
            locked INTEGER NOT NULL, transferred_to TEXT, PRIMARY KEY (repo, number));
        CREATE TABLE comments (
            repo TEXT NOT NULL, number INTEGER NOT NULL, idx INTEGER NOT NULL, author TEXT NOT NULL,
            body TEXT NOT NULL, created_at TEXT, author_association TEXT NOT NULL,
            PRIMARY KEY (repo, number, idx));
        CREATE TABLE audit (
            id INTEGER PRIMARY KEY AUTOINCREMENT, repo TEXT NOT NULL, number INTEGER NOT NULL,
            recorded_at TEXT NOT NULL, judge TEXT NOT NULL, decision TEXT NOT NULL,
            plan TEXT NOT NULL, effects TEXT NOT NULL, applied INTEGER NOT NULL, extra TEXT NOT NULL);
        CREATE INDEX audit_issue ON audit (repo, number);
    """),
    Migration(2, "github sync cursors, repo labels and backlog progress", """
    CREATE TABLE github_sync (
        repo TEXT PRIMARY KEY, since TEXT, etag TEXT, synced_at TEXT NOT NULL);
    CREATE TABLE github_labels (
        repo TEXT NOT NULL, name TEXT NOT NULL, color TEXT NOT NULL, description TEXT NOT NULL,
        PRIMARY KEY (repo, name));
    CREATE TABLE github_backlog (
        repo TEXT NOT NULL, number INTEGER NOT NULL, outcome TEXT NOT NULL, finished_at TEXT NOT NULL,
        PRIMARY KEY (repo, number))
"""),
    Migration(3, "label events, reviews of plans and label demotions", """
    CREATE TABLE label_events (
        repo TEXT NOT NULL, number INTEGER NOT NULL, event_id INTEGER NOT NULL, event TEXT NOT NULL,
        label TEXT, actor TEXT NOT NULL, created_at TEXT NOT NULL,
        PRIMARY KEY (repo, number, event_id));
    CREATE TABLE reviews (
        audit_id INTEGER PRIMARY KEY REFERENCES audit (id), verdict TEXT NOT NULL,
        reviewer TEXT NOT NULL, reviewed_at TEXT NOT NULL, plan TEXT NOT NULL, note TEXT NOT NULL);
    CREATE TABLE label_status (
        repo TEXT NOT NULL, label TEXT NOT NULL, demoted INTEGER NOT NULL, precision REAL,
        support INTEGER NOT NULL, changed_at TEXT NOT NULL, PRIMARY KEY (repo, label))
"""),
    Migration(4, "webhook deliveries and the queue's dead letters", """
    CREATE TABLE deliveries (
        id TEXT PRIMARY KEY, event TEXT NOT NULL, action TEXT NOT NULL, repo TEXT, number INTEGER,
        installation INTEGER, job TEXT, outcome TEXT NOT NULL, received REAL NOT NULL, attempt REAL,
        finished REAL, api_calls INTEGER);
    CREATE INDEX deliveries_issue ON deliveries (repo, number, outcome);
    CREATE TABLE dead_letters (
        repo TEXT NOT NULL, number INTEGER NOT NULL, installation INTEGER, kind TEXT NOT NULL,
        error TEXT NOT NULL, tries INTEGER NOT NULL, failed REAL NOT NULL, PRIMARY KEY (repo, number, kind))
"""),
    Migration(5, "full-text index of issues and the history folder of each repository", fts.SQLITE,
              postgres=fts.POSTGRES),
    # the bot's own comments (its markers count): from GitHub's viewerDidAuthor or the store applier;
    # rows from before are nobody's, which fails closed (a template may be posted again, locally)
    Migration(6, "comments: by the bot", """
    ALTER TABLE comments ADD COLUMN by_bot INTEGER NOT NULL DEFAULT 0;
"""),
]


BOT_AUTHOR = "issuetriage[bot]"


class StoreConflict(StoreError):
    """The issue changed in the store between the flow's read and its write (another worker
    acted on it): nothing was written; running the flow again sees the change."""


class Store:
    """A SQLite file (or ':memory:') or a PostgreSQL URL holding a mirror of issues and the audit log."""

    def __init__(self, path: str | Path, *, create: bool = True) -> None:
        self.engine = open_engine(str(path), create)
        self.path = self.engine.name  # for messages: never a password
        self.db = self.engine.db
        try:
            self._migrate()
            self.engine.ready()
        except self.engine.errors as exc:
            self.db.close()
            raise StoreError(f"{self.path}: not a usable store ({one_line(exc)})") from None
        except BaseException:
            self.db.close()
            raise

    def close(self) -> None:
        self.db.close()

    def history_folder(self, repo: str) -> Path | None:
        """The history folder built for `repo` that this store remembers, or None."""
        return fts.remembered_folder(self, repo)

    def history_index(self) -> fts.StoreIndex:
        """Full-text search over this store's live mirror, for retrieving similar past issues."""
        return fts.StoreIndex(self)

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _migrate(self) -> None:
        """Apply the pending migrations in one transaction: a file that is not ours stays as it was.

        Checked again under the schema lock, since another worker may be migrating at the same time."""
        if not self._pending():
            return
        with _Transaction(self, "not a usable store"):
            self.engine.lock_schema()
            self.db.execute(self.engine.ddl("CREATE TABLE IF NOT EXISTS schema_migrations ("
                                            "version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)"))
            for m in self._pending():
                sql = m.postgres if m.postgres and self.engine.dialect == "postgresql" else m.sql
                for statement in self.engine.statements(self.engine.ddl(sql)):
                    self.db.execute(statement)
                self.db.execute("INSERT INTO schema_migrations VALUES (?, ?, ?)",
                                (m.version, m.name, _now()))

    def _pending(self) -> list[Migration]:
        done = ({row[0] for row in self.db.execute("SELECT version FROM schema_migrations")}
                if self.engine.has_table("schema_migrations") else set())
        known = {m.version for m in MIGRATIONS}
        if done - known:
            raise StoreError(f"{self.path}: made by a newer issuetriage (migrations {sorted(done - known)})")
        return sorted((m for m in MIGRATIONS if m.version not in done), key=lambda m: m.version)

    def transaction(self) -> _Transaction:
        """`with store.transaction():` — commit on success, roll back on any error."""
        return _Transaction(self)

    # -- issues --------------------------------------------------------------------------------

    def put_issue(self, issue: Issue) -> None:
        """Insert or replace one issue with its comments."""
        with self.transaction():
            self._put(issue)

    def _put(self, issue: Issue, transferred_to: str | None = None) -> None:
        self.db.execute(
            "INSERT OR REPLACE INTO issues VALUES (?,?,?,?,?,?,?,?,?,?,?,?)",
            (issue.repo, issue.number, issue.title, issue.body, issue.state, issue.author,
             issue.author_association, _iso(issue.created_at), json.dumps(list(issue.labels)),
             int(issue.is_pull_request), int(issue.locked), transferred_to))
        self.db.execute("DELETE FROM comments WHERE repo=? AND number=?", (issue.repo, issue.number))
        self.db.executemany(
            "INSERT INTO comments (repo, number, idx, author, body, created_at, author_association, by_bot)"
            " VALUES (?,?,?,?,?,?,?,?)",
            [(issue.repo, issue.number, i, c.author, c.body, _iso(c.created_at), c.author_association, int(c.by_bot))
             for i, c in enumerate(issue.comments)])

    def get_issue(self, repo: str, number: int, *, lock: bool = False) -> Issue:
        """One stored issue; UserError when it is not in the store. `lock` (in a transaction) keeps
        other writers off the issue's row until commit."""
        row = self.db.execute("SELECT * FROM issues WHERE repo=? AND number=?"
                              + (self.engine.for_update if lock else ""), (repo, number)).fetchone()
        if row is None:
            raise UserError(f"{repo}#{number} is not in the store {self.path}")
        return self._issue(row)

    def _issue(self, row: Any) -> Issue:
        comments = [Comment(author=c["author"], body=c["body"], created_at=c["created_at"],
                            author_association=c["author_association"], by_bot=bool(c["by_bot"]))
                    for c in self.db.execute("SELECT * FROM comments WHERE repo=? AND number=? "
                                             "ORDER BY idx", (row["repo"], row["number"]))]
        return Issue(repo=row["repo"], number=row["number"], title=row["title"], body=row["body"],
                     state=row["state"], author=row["author"],
                     author_association=row["author_association"], created_at=row["created_at"],
                     labels=tuple(json.loads(row["labels"])), comments=tuple(comments),
                     is_pull_request=bool(row["is_pull_request"]), locked=bool(row["locked"]))

    def issues(self, repo: str | None = None) -> Iterator[Issue]:
        """Every stored issue (of one repo when given), by number."""
        sql, args = "SELECT * FROM issues", cast(tuple[str, ...], ())
        if repo:
            sql, args = sql + " WHERE repo=?", (repo,)
        for row in self.db.execute(sql + " ORDER BY repo, number", args).fetchall():
            yield self._issue(row)

    def untriaged(self, policy: Policy, repo: str | None = None) -> list[Issue]:
        """Open issues the bot has not handled: no triage marker and no oncall routing."""
        return [i for i in self.issues(repo) if policy.skip_reason(i) is None]

    def count(self, table: str) -> int:
        if table not in {"issues", "comments", "audit"}:
            raise ValueError(table)
        return self.db.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0]

    def import_jsonl(self, path: str | Path, repo: str | None = None) -> int:
        """Load issues from a JSONL file; the whole file or nothing (errors name the line)."""
        return self.put_issues(read_issues_jsonl(path, repo))

    def put_issues(self, issues: list[Issue]) -> int:
        """Insert or replace several issues in one transaction: all or nothing."""
        with self.transaction():
            for issue in issues:
                self._put(issue)
        return len(issues)

    # -- plans and audit -----------------------------------------------------------------------

    def record(self, plan: Plan, judgment: Judgment | None = None, *, applied: bool = False,
               effects: Effects | None = None, judge: str | None = None,
               extra: dict[str, Any] | None = None) -> int:
        """Append one plan with its trace to the audit log; returns the audit row id."""
        with self.transaction():
            return self._record(plan, judgment, applied, effects, judge, extra)

    def _record(self, plan: Plan, judgment: Judgment | None, applied: bool, effects: Effects | None,
                judge: str | None, extra: dict[str, Any] | None) -> int:
        info = dict(extra or {})
        if judgment is not None:
            info.setdefault("tokens_in", judgment.tokens_in)
            info.setdefault("tokens_out", judgment.tokens_out)
            info.setdefault("cost_usd", judgment.cost_usd)
        row = self.db.execute(
            "INSERT INTO audit (repo, number, recorded_at, judge, decision, plan, effects, applied, extra)"
            " VALUES (?,?,?,?,?,?,?,?,?) RETURNING id",
            (plan.repo, plan.number, _now(),
             judge or plan.judge or (judgment.judge if judgment else "unknown"),
             plan.decision.value, json.dumps(plan.to_json()),
             json.dumps(effects.__dict__ if effects else None), int(applied), json.dumps(info))).fetchone()
        return int(row[0])

    def demoted(self, repo: str) -> frozenset[str]:
        """Labels currently suggest-only for `repo` (`live/demotion.py` keeps `label_status`)."""
        rows = self.db.execute("SELECT label FROM label_status WHERE repo=? AND demoted=1", (repo,))
        return frozenset(r["label"] for r in rows)

    def bot_labels_kept(self, repo: str, bots: Sequence[str]) -> dict[str, tuple[int, int]]:
        """Per label, the bot's own labels (a `labeled` event by one of `bots`) on issues of `repo`
        and how many of them no human removed afterwards: {label: (kept, applied)}, one count per
        issue and label. One query over the synced label events (`live/events.py`)."""
        if not bots:
            return {}
        marks = ",".join("?" * len(bots))
        rows = self.db.execute(
            "SELECT label, COUNT(*), SUM(removed) FROM ("
            " SELECT b.number, b.label, MAX(CASE WHEN h.event_id IS NULL THEN 0 ELSE 1 END) AS removed"
            " FROM label_events b LEFT JOIN label_events h ON h.repo = b.repo AND h.number = b.number"
            f" AND h.label = b.label AND h.event = 'unlabeled' AND h.created_at >= b.created_at AND h.actor NOT IN ({marks})"
            f" WHERE b.repo = ? AND b.event = 'labeled' AND b.label IS NOT NULL AND b.actor IN ({marks})"
            " GROUP BY b.number, b.label) AS per_issue GROUP BY label",
            (*bots, repo, *bots))
        return {r[0]: (int(r[1]) - int(r[2]), int(r[1])) for r in rows}

    def audit(self, repo: str | None = None, number: int | None = None) -> list[dict[str, Any]]:
        """Audit rows, oldest first, with plan/effects/extra decoded."""
        wanted = {"repo": repo, "number": number}
        where = " AND ".join(f"{key}=?" for key, value in wanted.items() if value is not None)
        args = [value for value in wanted.values() if value is not None]
        rows = []
        for row in self.db.execute("SELECT * FROM audit" + (f" WHERE {where}" if where else "")
                                   + " ORDER BY id", args):
            item = dict(row)
            for key in ("plan", "effects", "extra"):
                item[key] = json.loads(item[key])
            rows.append(item)
        return rows

    # -- webhook deliveries and dead letters (service mode) -------------------------------------

    def add_delivery(self, delivery: str, event: str, action: str, repo: str | None, number: int | None,
                     installation: int | None, job: str | None, received: float) -> bool:
        """Record one webhook delivery (`job`: the work it queued, if any); False when its id was
        recorded before (a redelivery)."""
        with self.transaction():
            cur = self.db.execute(
                "INSERT INTO deliveries (id, event, action, repo, number, installation, job, outcome, received)"
                " VALUES (?,?,?,?,?,?,?,?,?) ON CONFLICT DO NOTHING",
                (delivery, event, action, repo, number, installation, job,
                 "queued" if job else "recorded", received))
            return cur.rowcount == 1

    def start_attempt(self, repo: str, number: int, job: str, started: float) -> bool:
        """Mark the queued `job` deliveries of one issue as being worked on; True when an earlier
        attempt on them never finished (its worker died, or it failed)."""
        with self.transaction():
            row = self.db.execute("SELECT COUNT(*) FROM deliveries WHERE repo=? AND number=? AND job=? AND "
                                  "outcome='queued' AND attempt IS NOT NULL", (repo, number, job)).fetchone()
            self.db.execute("UPDATE deliveries SET attempt=? WHERE repo=? AND number=? AND job=? AND "
                            "outcome='queued' AND received<=?", (started, repo, number, job, started))
            return bool(row[0])

    def finish_deliveries(self, repo: str, number: int, job: str, started: float, finished: float,
                          api_calls: int) -> int:
        """Mark the queued `job` deliveries of one issue received before `started` as done."""
        with self.transaction():
            cur = self.db.execute(
                "UPDATE deliveries SET outcome='done', finished=?, api_calls=? WHERE repo=? AND number=?"
                " AND job=? AND outcome='queued' AND received<=?",
                (finished, api_calls, repo, number, job, started))
            return cur.rowcount

    def queued_jobs(self) -> list[tuple[str, str, int, int | None]]:
        """Work recorded but not done yet: (job, repo, number, installation), one per issue and job."""
        rows = self.db.execute("SELECT job, repo, number, MAX(installation) FROM deliveries WHERE "
                               "outcome='queued' GROUP BY job, repo, number ORDER BY repo, number, job")
        return [(r[0], r[1], int(r[2]), r[3]) for r in rows]

    def delivery_stats(self) -> dict[str, Any]:
        """Deliveries by outcome, GitHub calls per installation, the oldest queued delivery, and
        triage latency (received → done: count and sum of seconds)."""
        outcomes = {r[0]: r[1] for r in self.db.execute(
            "SELECT outcome, COUNT(*) FROM deliveries GROUP BY outcome")}
        calls = {r[0]: r[1] for r in self.db.execute(
            "SELECT installation, SUM(api_calls) FROM deliveries WHERE api_calls IS NOT NULL "
            "GROUP BY installation")}
        oldest = self.db.execute("SELECT MIN(received) FROM deliveries WHERE outcome='queued'").fetchone()[0]
        row = self.db.execute("SELECT COUNT(*), SUM(finished - received) FROM deliveries "
                              "WHERE finished IS NOT NULL").fetchone()
        return {"outcomes": outcomes, "calls": calls, "oldest_queued": oldest,
                "latency_count": row[0], "latency_sum": row[1] or 0.0}

    def add_label_event(self, repo: str, number: int, event_id: int, event: str, label: str,
                        actor: str, created_at: str) -> None:
        """One label event seen on a webhook (`sync` later replaces an issue's events wholesale);
        a mirrored issue's labels follow it in the same transaction, so history retrieval
        (`store/fts.py`) sees the new labels at once."""
        with self.transaction():
            cur = self.db.execute("INSERT INTO label_events VALUES (?,?,?,?,?,?,?) ON CONFLICT DO NOTHING",
                                  (repo, number, event_id, event, label, actor, created_at))
            row = self.db.execute("SELECT labels FROM issues WHERE repo=? AND number=?", (repo, number)).fetchone()
            if cur.rowcount == 1 and row is not None and event in ("labeled", "unlabeled"):
                labels = [x for x in json.loads(row[0]) if x != label] + ([label] if event == "labeled" else [])
                self.db.execute("UPDATE issues SET labels=? WHERE repo=? AND number=?",
                                (json.dumps(labels), repo, number))

    def put_dead_letter(self, job: str, repo: str, number: int, installation: int | None, error: str,
                        tries: int, failed: float) -> None:
        """A job that failed its last try; its queued deliveries become dead."""
        with self.transaction():
            self.db.execute("DELETE FROM dead_letters WHERE repo=? AND number=? AND kind=?", (repo, number, job))
            self.db.execute("INSERT INTO dead_letters VALUES (?,?,?,?,?,?,?)",
                            (repo, number, installation, job, error, tries, failed))
            self.db.execute("UPDATE deliveries SET outcome='dead' WHERE repo=? AND number=? AND job=? "
                            "AND outcome='queued'", (repo, number, job))

    def dead_letters(self) -> list[dict[str, Any]]:
        return [dict(r) for r in self.db.execute("SELECT * FROM dead_letters ORDER BY failed, repo, number")]

    def take_dead_letter(self, job: str, repo: str, number: int, requeue: bool) -> bool:
        """Remove one dead letter; with `requeue` its deliveries count as queued again."""
        with self.transaction():
            cur = self.db.execute("DELETE FROM dead_letters WHERE repo=? AND number=? AND kind=?",
                                  (repo, number, job))
            if requeue:
                self.db.execute("UPDATE deliveries SET outcome='queued' WHERE repo=? AND number=? "
                                "AND job=? AND outcome='dead'", (repo, number, job))
            return cur.rowcount == 1

    def has_delivery(self, repo: str, number: int) -> bool:
        """Whether any webhook delivery for this issue was recorded (whatever its outcome)."""
        row = self.db.execute("SELECT 1 FROM deliveries WHERE repo=? AND number=? LIMIT 1", (repo, number))
        return row.fetchone() is not None


class _Transaction:
    """Nested-safe transaction: only the outermost one commits or rolls back.

    Engine failures (a locked or read-only file, a full disk, a lost connection) become one-line
    StoreErrors.
    """

    def __init__(self, store: Store, failure: str = "cannot write") -> None:
        self.db, self.engine = store.db, store.engine
        self.path = store.path
        self.failure = failure
        self.outer = False

    def __enter__(self) -> None:
        if not self.db.in_transaction:
            try:
                self.db.execute(self.engine.begin)
            except self.engine.errors as exc:
                raise StoreError(f"{self.path}: {self.failure} ({one_line(exc)})") from None
            self.outer = True

    def __exit__(self, exc_type: object, exc: BaseException | None, tb: object) -> None:
        if self.outer:
            try:
                self.db.execute("ROLLBACK" if exc_type else "COMMIT")
            except self.engine.errors as failed:
                if self.db.in_transaction:
                    self.db.execute("ROLLBACK")
                raise StoreError(f"{self.path}: {self.failure} ({one_line(failed)})") from None
        if isinstance(exc, self.engine.errors):
            raise StoreError(f"{self.path}: {self.failure} ({one_line(exc)})") from None


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def _iso(value: datetime | None) -> str | None:
    return value.isoformat() if value else None
