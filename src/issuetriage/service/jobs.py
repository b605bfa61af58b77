"""The job a worker runs: triage one issue through the one flow (`act.live.triage_issue`),
serialised per issue, coalesced, retried, and dead-lettered after its last try."""

from __future__ import annotations

import logging
import os
import threading
import time
from collections import OrderedDict
from pathlib import Path
from typing import TYPE_CHECKING, Any

from huey import signals
from huey.exceptions import RetryTask

from issuetriage.act.live import triage_issue
from issuetriage.errors import TriageError
from issuetriage.evidence.followup import reporter_replied_after, waiting_since
from issuetriage.github.apply import GitHubApplier
from issuetriage.github.installations import BudgetExhausted
from issuetriage.github.retry import Clock
from issuetriage.judges.factory import get_judge, history_stamp, live_precision, resolve_history
from issuetriage.service.events import REPLY
from issuetriage.service.queue import LOCKED_DELAY, RETRIES, RETRY_DELAY, IssueLock, pending_key
from issuetriage.store.fts import record_history_status
from issuetriage.store.sqlite import Store

if TYPE_CHECKING:
    from huey import Huey

    from issuetriage.judges.base import Judge
    from issuetriage.policy import Policy
    from issuetriage.service.resolver import Resolver

log = logging.getLogger("issuetriage.service")
JUDGES_PER_THREAD = 64  # as many as the repo-local profiles a process keeps (RepoProfiles)


class Jobs:
    """The queue's one task and what submits it; a worker process or thread runs `run`."""

    def __init__(self, huey: Huey, store: str | Path, resolver: Resolver | None, judge: str = "auto",
                 model: Path | None = None, clock: Clock | None = None) -> None:
        self.huey = huey
        self.clock = clock or Clock()  # the resolver's: when a budget resets, in its time
        self.store_path = str(store)
        self.resolver = resolver
        self.judge_name, self.model = judge, model
        self._local = threading.local()
        self.task = huey.task(retries=RETRIES, retry_delay=RETRY_DELAY, retry_backoff=2.0, name="triage")(self.run)
        huey.signal(signals.SIGNAL_ERROR)(self._failed)

    # -- the receiver's side ---------------------------------------------------------------------

    def submit(self, job: str, repo: str, number: int, installation: int | None, force: bool = False) -> bool:
        """Enqueue `job` for an issue unless one is pending (True when enqueued)."""
        fresh = self.huey.put_if_empty(pending_key(job, repo, number), 1)
        if fresh or force:
            self.task(job, repo, number, installation)
        return fresh or force

    def recover(self, force: bool) -> int:
        """Re-enqueue the work the store holds as not done; `force` also where a marker says a
        job is pending (a receiver that died between marking and enqueueing). Running a job twice
        changes nothing: the second finds the issue done."""
        count = 0
        for job, repo, number, installation in self.store().queued_jobs():
            count += self.submit(job, repo, number, installation, force=force)
        return count

    # -- the worker's side -----------------------------------------------------------------------

    def run(self, job: str, repo: str, number: int, installation: int | None) -> None:
        """One try. A locked issue, or an installation budget that resets too late to wait for
        (BudgetExhausted), puts the job back (huey's RetryTask: not a failure, no try spent)
        with its lock and worker released."""

        started = time.time()
        with IssueLock(self.huey, repo, number) as held:
            if not held:
                raise RetryTask("the issue is locked by another job", delay=LOCKED_DELAY)
            self.huey.delete(pending_key(job, repo, number))  # from now on, a new event queues again
            interrupted = self.store().start_attempt(repo, number, job, started)
            try:
                calls = self.triage(job, repo, number, installation, interrupted)
            except BudgetExhausted as exc:
                delay = max(0.0, exc.until - self.clock.now())
                self.huey.put_if_empty(pending_key(job, repo, number), 1)  # events meanwhile join it
                log.info("rate budget low: job put back", extra={"repo": repo, "number": number, "job": job,
                                                                  "installation": installation, "delay": delay})
                raise RetryTask(str(exc), delay=delay) from None
        self.store().finish_deliveries(repo, number, job, started, time.time(), calls)

    def triage(self, job: str, repo: str, number: int, installation: int | None, interrupted: bool = False) -> int:
        """One triage; returns the GitHub calls it spent. A reply re-triages an issue that
        waits for its reporter (past the done marker) and shows the reply in the mirror, which
        stops the stale clock. After an `interrupted` attempt that left no audit row (a worker
        killed between its GitHub writes and the audit), the flow runs past the done marker:
        apply by difference writes nothing twice, and the audit row is recorded."""

        assert self.resolver is not None, "a worker needs a resolver"
        client = self.resolver.client(repo, installation)
        policy = self.resolver.profile(repo, client)
        applier = GitHubApplier(client)
        start, clock = applier.spent(), time.monotonic()
        store = self.store()
        respect_marker = True
        if job == REPLY:
            issue = applier.read(repo, number)
            store.put_issue(issue)
            asked = waiting_since(issue, policy)
            respect_marker = asked is None or not reporter_replied_after(issue, asked)
        resume = interrupted and not store.audit(repo, number)
        judge, history_problem = self.judge_and_history(policy)
        extra = ({"job": job, "installation": installation} | ({"resumed_after_interruption": True} if resume else {})
                 | ({"history_unavailable": history_problem} if history_problem else {}))
        report = triage_issue(applier, repo, number, policy, judge, store, apply=True,
                              respect_marker=respect_marker and not resume, extra=extra)
        calls = applier.spent() - start
        log.info("triaged", extra={"repo": repo, "number": number, "job": job, "installation": installation,
                                   "skipped": report.skipped, "writes": len(report.writes),
                                   "outcome": report.verdict.outcome.value if report.verdict else None,
                                   "api_calls": calls, "seconds": round(time.monotonic() - clock, 3)})
        return calls

    def _failed(self, signal: str, task: Any, exc: BaseException | None = None) -> None:
        """huey's error signal: after the last try, the job goes to the dead-letter list."""
        if not isinstance(task, self.task.task_class) or task.retries:
            return
        job, repo, number, installation = task.args
        self.huey.delete(pending_key(job, repo, number))
        self.store().put_dead_letter(job, repo, number, installation, f"{type(exc).__name__}: {exc}"[:500],
                                     RETRIES + 1, time.time())
        log.error("dead letter", extra={"repo": repo, "number": number, "job": job, "error": str(exc)[:200]})

    # -- per-thread resources (sqlite connections and clients are not shared across threads) ------

    def store(self, record: bool = False) -> Store:
        """This thread's store connection. `record`: the receiver's, whose commits reach the disk
        before it answers (GitHub does not retry a delivery we lost); the workers' commits skip
        the fsync (a process that dies loses nothing, and the next record commit carries them to
        the disk), so the receiver never waits behind a worker's fsync."""

        local = self._local
        if getattr(local, "pid", None) != os.getpid():  # a forked worker opens its own
            local.pid, local.stores = os.getpid(), {}
        if record not in local.stores:
            local.stores[record] = store = Store(self.store_path)
            store.engine.sync_commits(durable=record)
        return local.stores[record]  # type: ignore[no-any-return]

    def judge(self, policy: Policy) -> Judge:
        """This thread's judge for `policy` (see `judge_and_history`)."""
        return self.judge_and_history(policy)[0]

    def judge_and_history(self, policy: Policy) -> tuple[Judge, str]:
        """This thread's judge for `policy`, built from the object itself (a repository's own
        profile is never looked up by its name), and why it judges without history ("" when it
        has it or none is set). The history is the folder `$ISSUETRIAGE_HISTORY` names or the store
        remembers, read through the store's live index; a folder `history build --update`
        replaced is loaded again at the next job. A history that cannot be loaded never fails a
        job: it is judged without, and the store records why (`/metrics`)."""
        judges: OrderedDict[tuple[str, str], tuple[Judge, str]] = self._local.__dict__.setdefault(
            "judges", OrderedDict())
        store = self.store()
        key = (str(policy.root), history_stamp(policy, store=store))  # a repo-local profile: its own folder
        if key in judges:
            judges.move_to_end(key)
        else:
            judges[key] = self._new_judge(policy, store)
            while len(judges) > JUDGES_PER_THREAD:
                judges.popitem(last=False)
        return judges[key]

    def _new_judge(self, policy: Policy, store: Store) -> tuple[Judge, str]:
        try:
            past = resolve_history(None, policy, store=store)
            judge = get_judge(self.judge_name, self.model, profile=policy, history=past, env={}, store=store)
            problem = ""
        except TriageError as exc:  # the history's (a model's or profile's fails the job as before)
            problem = " ".join(str(exc).split())
            # without the store's history, still with what humans did with the bot's labels
            judge = get_judge(self.judge_name, self.model, profile=policy, env={},
                              live_precision=live_precision(store, policy))
            log.warning("judging without history", extra={"repo": policy.meta.repo, "error": problem})
        record_history_status(store, policy.meta.repo, problem)
        return judge, problem
