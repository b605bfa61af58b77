"""`issuetriage reconcile`: after an outage, redeliver the App's failed webhook deliveries and
queue the issues opened since that carry no bot marker (service/reconcile.py)."""

from __future__ import annotations

import os
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Annotated, Optional

import typer

from issuetriage.cli.options import Format, FormatOpt, StoreOpt, emit

Enqueue = Callable[[str, int, int, str], object]


def register(app: typer.Typer) -> None:
    """Attach this module's commands to the main app."""

    @app.command("reconcile")
    def reconcile_cmd(
        since: Annotated[str, typer.Option(
            "--since", help="How far back: deliveries and new issues of the last 12h, 3d, ... "
                            "(GitHub keeps deliveries about 3 days).")] = "3d",
        repo: Annotated[Optional[list[str]], typer.Option(
            "--repo", help="Sweep only these OWNER/NAME (repeatable; default: every installed one).")] = None,
        profile: Annotated[Optional[str], typer.Option(
            "--profile", envvar="ISSUETRIAGE_PROFILE",
            help="The profile of repositories $ISSUETRIAGE_APP_PROFILES does not map.")] = None,
        dry_run: Annotated[bool, typer.Option("--dry-run", help="Say what would be done; do nothing.")] = False,
        store: StoreOpt = "issuetriage.db",
        queue: Annotated[Optional[str], typer.Option(
            "--queue", envvar="ISSUETRIAGE_QUEUE", help="The service's queue (as for `issuetriage worker`).")] = None,
        fmt: FormatOpt = Format.text,
    ) -> None:
        """Redeliver failed deliveries and queue missed issues. Example: issuetriage reconcile --since 1d"""
        from issuetriage.cli.github import check_repo
        from issuetriage.github.backlog import parse_age
        from issuetriage.service.app_mode import AppResolver
        from issuetriage.service.reconcile import reconcile

        start = datetime.now(UTC) - parse_age(since, "--since")
        repos = [check_repo(r) for r in repo] if repo else None
        resolver = AppResolver.from_env(os.environ, default_profile=profile)
        enqueue, seen = ((lambda *job: None), (lambda repo, number: False)) if dry_run else _queue(store, queue)
        done = reconcile(resolver, enqueue, start, seen=seen, repos=repos, dry_run=dry_run)
        would = "would " if dry_run else ""
        lines = [f"{would}redeliver {guid}" for guid in done.redelivered]
        lines += [f"{would}queue {name}#{number}" for name, number in done.enqueued]
        lines += [f"skipped {name}: {why}" for name, why in done.skipped]
        lines.append(f"{done.deliveries} deliveries since {start:%Y-%m-%d %H:%M}Z: {len(done.redelivered)} "
                     f"{would}redelivered, {len(done.enqueued)} issues {would}queued, {len(done.skipped)} "
                     "repositories skipped")
        emit(fmt, {"since": start.isoformat(), "deliveries": done.deliveries, "redelivered": done.redelivered,
                   "enqueued": [f"{n}#{i}" for n, i in done.enqueued], "dry_run": dry_run,
                   "skipped": [{"repo": n, "reason": why} for n, why in done.skipped]}, "\n".join(lines))
        if done.skipped:
            raise typer.Exit(1)


def _queue(store: str, queue: str | None) -> tuple[Enqueue, Callable[[str, int], bool]]:
    """The service queue's submit (what the receiver enqueues with: a triage job, coalesced with
    one already pending for the issue), and whether the store recorded a delivery for an issue."""
    from issuetriage.service.app import open_jobs  # the queue of `issuetriage serve` / `worker`
    from issuetriage.store.sqlite import Store

    Store(store, create=False).close()  # "no such store" (the service's --store), or unreachable
    jobs = open_jobs(store, queue)
    return ((lambda repo, number, installation, reason: jobs.submit("triage", repo, number, installation)),
            jobs.store().has_delivery)
