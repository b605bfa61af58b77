"""The durable queue on huey: SQLite storage by default (a file next to the store), Redis given
`ISSUETRIAGE_QUEUE=redis://...`; the same task code on both.

- **Coalescing.** A delivery enqueues a job only when none is pending for that issue and kind
  (a marker in the queue's storage); the job clears the marker before it reads the issue, so a
  burst of edits becomes one triage of the latest state, and an event arriving during a run
  queues one more.
- **One job per issue at a time.** A lock per repo+issue in the same storage; a job that finds
  it taken is put back a moment later. A lock whose holder died on this machine (SIGKILL) is
  taken over; on Redis it also expires.
- **Retries and dead letters.** Failures retry with exponential back-off; after the last try the
  job lands in the store's dead-letter list (`issuetriage queue list|retry|drop`).
- **Nothing lost.** The store records every delivery before the receiver answers; `recover`
  re-enqueues the ones not done (a worker killed mid-job, a receiver killed before enqueueing).
- Messages are JSON, never pickles: the queue's storage may be shared with other machines."""

from __future__ import annotations

import datetime as dt
import json
import os
import socket
import threading
from pathlib import Path
from typing import Any

from huey import Huey, RedisExpireHuey, SqliteHuey
from huey.registry import Message
from huey.serializer import Serializer
from huey.storage import SqliteStorage

from issuetriage.errors import UserError
from issuetriage.github.retry import Clock

NAME = "issuetriage"
RETRIES = 4  # tries after the first one
RETRY_DELAY = 2.0  # seconds before the first retry, doubled each time
LOCKED_DELAY = 0.25  # seconds before a job that found its issue locked tries again
LOCK_TTL = 600  # seconds a lock lives on Redis past its last renewal (every wait renews it)
MAX_BUDGET_WAIT = 60.0  # seconds a job sleeps for its installation's budget; longer: back to the queue


class JsonSerializer(Serializer):
    """huey messages and values as JSON (huey's default is pickle, which runs code on load)."""

    def _serialize(self, data: Any) -> bytes:
        if isinstance(data, Message):
            fields = data._asdict()
            if any(fields[k] for k in ("on_complete", "on_error", "chord_config")):
                raise TypeError("pipelines are not used here")
            fields["eta"] = fields["eta"].isoformat() if fields["eta"] else None
            fields["expires_resolved"] = None
            return json.dumps({"message": fields}).encode()
        return json.dumps({"value": data}).encode()

    def _deserialize(self, data: bytes) -> Any:
        found = json.loads(data)
        if "value" in found:
            return found["value"]
        fields = found["message"]
        fields["eta"] = dt.datetime.fromisoformat(fields["eta"]) if fields["eta"] else None
        fields["args"] = tuple(fields["args"] or ())
        return Message(**fields)


def open_huey(url: str | None, store: str | Path) -> Huey:
    """The queue at `url` (`redis://`, `rediss://`, `sqlite:PATH`; default: `STORE.queue` next
    to the store file)."""
    common: dict[str, Any] = {"results": False, "serializer": JsonSerializer()}
    if url and url.startswith(("redis://", "rediss://", "unix://")):
        import redis

        huey: Huey = RedisExpireHuey(NAME, url=url, **common)
        try:
            huey.storage.conn.ping()
        except redis.RedisError as exc:
            raise UserError(f"ISSUETRIAGE_QUEUE: cannot reach Redis ({exc})") from None
        return huey
    if url and not url.startswith("sqlite:"):
        raise UserError(f"ISSUETRIAGE_QUEUE={url!r}: expected redis://HOST[:PORT][/DB] or sqlite:PATH")
    if not url and "://" in str(store):
        raise UserError("a database store has no file to keep the queue beside: give ISSUETRIAGE_QUEUE "
                        "(--queue redis://... or sqlite:PATH)")
    path = url.removeprefix("sqlite:") if url else default_path(store)
    return SqliteHuey(NAME, filename=path, storage_class=_QueueFile, **common)


class _QueueFile(SqliteStorage):
    """huey's SQLite storage without an fsync per commit (WAL, synchronous=NORMAL: safe from
    corruption, and nothing lost when a process dies). The store, which fsyncs, is the record:
    `Jobs.recover` rebuilds from it whatever an OS crash took from the queue."""

    def _create_connection(self) -> Any:
        conn = super()._create_connection()
        conn.execute("PRAGMA synchronous=NORMAL")
        return conn


def default_path(store: str | Path) -> str:
    if str(store) == ":memory:":
        raise UserError("the embedded queue lives next to the store: give --store a file "
                        "(or ISSUETRIAGE_QUEUE=redis://...)")
    return str(store) + ".queue"


def pending_key(job: str, repo: str, number: int) -> str:
    return f"pending:{job}:{repo}#{number}"


_held = threading.local()  # the IssueLock this thread's job holds


class IssueLock:
    """`with IssueLock(huey, repo, number) as held:` — `held` is False when another job has it.
    While held, every wait of the job (`lock_keeping`) renews it on Redis, so it outlives them."""

    def __init__(self, huey: Huey, repo: str, number: int) -> None:
        self.huey = huey
        self.key = f"{NAME}.lock.{repo}#{number}"
        self.me = f"{socket.gethostname()}:{os.getpid()}:{id(self)}"
        self.held = False

    def __enter__(self) -> bool:
        ttl = LOCK_TTL if isinstance(self.huey, RedisExpireHuey) else None
        blob = self.huey.serializer.serialize(self.me)
        self.held = bool(self.huey.storage.put_if_empty(self.key, blob, ttl))
        if not self.held and self._holder_died():
            self.held = bool(self.huey.storage.put_if_empty(self.key, blob, ttl))
        if self.held:
            _held.lock = self
        return self.held

    def __exit__(self, *exc: object) -> None:
        if self.held:
            _held.lock = None
            self._delete_if(self.huey.serializer.serialize(self.me))

    def renew(self, seconds: float) -> bool:
        """Keep the lock at least `seconds` more on Redis if it is still ours (True when it is);
        elsewhere a lock has no expiry (a dead holder is found by its process id)."""
        if not isinstance(self.huey, RedisExpireHuey):
            return True
        storage: Any = self.huey.storage
        script = ("if redis.call('get', KEYS[1]) == ARGV[1] then "
                  "return redis.call('pexpire', KEYS[1], ARGV[2]) end return 0")
        return bool(storage.conn.eval(script, 1, storage.result_key(self.key),
                                      self.huey.serializer.serialize(self.me), int(seconds * 1000)))

    def _holder_died(self) -> bool:
        """Take over a lock whose holder process on this machine is gone; True when removed."""
        raw = self.huey.storage.peek_data(self.key)
        if not isinstance(raw, bytes | str):
            return True  # released meanwhile
        host, pid, _ = str(self.huey.serializer.deserialize(raw)).split(":", 2)
        if host != socket.gethostname() or _alive(int(pid)):
            return False
        return self._delete_if(raw.encode() if isinstance(raw, str) else raw)

    def _delete_if(self, blob: bytes) -> bool:
        """Delete the lock only if it still holds `blob` (compare-and-delete, atomically)."""
        storage: Any = self.huey.storage
        if isinstance(self.huey, RedisExpireHuey):
            script = "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) end return 0"
            return bool(storage.conn.eval(script, 1, storage.result_key(self.key), blob))
        with storage.db(commit=True) as cursor:
            cursor.execute("DELETE FROM kv WHERE queue=? AND key=? AND value=?", (storage.name, self.key, blob))
            return bool(cursor.rowcount)


def lock_keeping(clock: Clock | None = None) -> Clock:
    """`clock`, whose every wait first renews the issue lock the waiting job holds for the wait
    and LOCK_TTL more: the only place GitHub calls sleep (retry.py's waits for rate limits and
    `Retry-After`, the installation budget's waits), so no wait outlives the lock."""
    base = clock or Clock()

    def sleep(seconds: float) -> None:
        lock: IssueLock | None = getattr(_held, "lock", None)
        if lock is not None:
            lock.renew(seconds + LOCK_TTL)
        base.sleep(seconds)

    return Clock(sleep=sleep, now=base.now)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
