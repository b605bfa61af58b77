"""`issuetriage serve`: the webhook receiver, the embedded queue and N worker threads on one
machine, with the review app beside them (`--no-webhook`: the review app alone)."""

from __future__ import annotations

import logging
import os
from contextlib import closing
from typing import TYPE_CHECKING, Annotated

import typer

from issuetriage.cli.options import JudgeOpt, ModelOpt, ProfileOpt, StoreOpt
from issuetriage.cli.service import SERVE_MODULES, QueueOpt, RepoOpt, WorkersOpt, need_service_extra, service_profile
from issuetriage.errors import UserError
from issuetriage.policy import load_profile
from issuetriage.service.server import MAX_CONNECTIONS, REQUEST_TIMEOUT, Limits, bind, run, where

if TYPE_CHECKING:
    from huey.consumer import Consumer
    from starlette.applications import Starlette

    from issuetriage.service.jobs import Jobs


def register(app: typer.Typer) -> None:
    """Attach this module's commands to the main app."""

    @app.command("serve")
    def serve_cmd(
        store: StoreOpt,
        profile: ProfileOpt = None,
        host: Annotated[str, typer.Option("--host", help="Address to bind (loopback unless --allow-remote).")] = "127.0.0.1",
        port: Annotated[int, typer.Option("--port", min=0, max=65535, help="0: any free port.")] = 8000,
        workers: WorkersOpt = 1,
        queue: QueueOpt = None,
        repo: RepoOpt = None,
        judge: JudgeOpt = "auto",
        model: ModelOpt = None,
        no_webhook: Annotated[bool, typer.Option("--no-webhook", help="Serve the review app alone.")] = False,
        allow_remote: Annotated[bool, typer.Option("--allow-remote", help="Allow a non-loopback --host.")] = False,
        reviewer: Annotated[str, typer.Option("--reviewer", help="Name recorded with each review.")] = "local",
        request_timeout: Annotated[float, typer.Option(
            "--request-timeout", envvar="ISSUETRIAGE_REQUEST_TIMEOUT", min=0.01,
            help="Seconds a request may take to arrive whole, headers and body.")] = REQUEST_TIMEOUT,
        max_connections: Annotated[int, typer.Option(
            "--max-connections", envvar="ISSUETRIAGE_MAX_CONNECTIONS", min=1,
            help="Open connections at most (and at most half the open-files limit).")] = MAX_CONNECTIONS,
    ) -> None:
        """Receive webhooks (POST /webhook) and triage them with --workers threads; the review app
        stays at /. Example: GITHUB_WEBHOOK_SECRET=... issuetriage serve --store t.db --workers 2"""
        need_service_extra("serve", SERVE_MODULES)
        from issuetriage.store.engines import redacted
        from issuetriage.web.app import check_bind, create_app

        check_bind(host, allow_remote)
        hosts = ["*"] if allow_remote else None
        limits = Limits(request_timeout, max_connections).within_open_files()
        if no_webhook:  # the review app over the local store: it needs no GitHub credentials
            profile = service_profile(profile, repo)
            if profile is None:
                raise UserError("the review app needs a profile: --profile NAME|DIR")
            alone = create_app(store, load_profile(profile), reviewer, allowed_hosts=hosts)
            with closing(bind(host, port)) as sock:
                typer.echo(f"serving {redacted(store)} on {where(sock)}/ (Ctrl-C to stop)", err=True)
                run(alone, sock, limits)
            return
        from issuetriage.cli.service import open_jobs
        from issuetriage.service.app import json_logs, receiver_app
        from issuetriage.service.receiver import Receiver, settings_secrets

        secrets = settings_secrets(os.environ.get("GITHUB_WEBHOOK_SECRET"),
                                   os.environ.get("GITHUB_WEBHOOK_SECRET_PREVIOUS"))
        profile = service_profile(profile, repo)
        with closing(bind(host, port)) as sock:  # before the store and the queue: a busy port leaves no files
            jobs = open_jobs(store, queue, repo, profile, judge, model)
            json_logs()
            receiver = Receiver(secrets, jobs)
            consumer = _start(jobs, workers)
            typer.echo(f"receiving webhooks on {where(sock)}/webhook with {workers} worker(s), at most "
                       f"{limits.max_connections} connections, {limits.request_timeout:g} s per request; "
                       "review app at / (Ctrl-C to stop)", err=True)
            try:
                run(receiver_app(receiver, _review(store, profile, jobs, reviewer, hosts)), sock, limits, receiver.cut)
            finally:
                if consumer:
                    consumer.stop(graceful=True)  # the job in hand finishes; the rest stays queued


def _review(store: str, profile: str | None, jobs: Jobs, reviewer: str, hosts: list[str] | None) -> Starlette | None:
    """The review app (its approvals write to GitHub as the service does), or None (logged) when it
    cannot be mounted: the receiver does not depend on it."""
    from issuetriage.errors import TriageError
    from issuetriage.service.app import review_app

    try:
        if profile is None:
            raise UserError("no profile named (App mode: --profile NAME|DIR mounts the review app)")
        return review_app(store, load_profile(profile), jobs.resolver, reviewer, hosts)  # type: ignore[arg-type]  # open_jobs gave one
    except TriageError as exc:
        logging.getLogger("issuetriage.service").warning("review app not mounted", extra={"reason": str(exc)})
        return None


def _start(jobs: Jobs, workers: int) -> Consumer | None:
    """Re-enqueue what an earlier receiver recorded but may not have enqueued, and start the worker threads."""
    jobs.recover(force=True)
    if not workers:
        return None
    consumer = jobs.huey.create_consumer(workers=workers, worker_type="thread", initial_delay=0.05, max_delay=1.0)
    consumer.start()
    return consumer
