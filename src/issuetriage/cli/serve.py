"""`issuetriage serve`: the webhook receiver, the embedded queue and N worker threads on one
machine, with the review app beside them (`--no-webhook`: the review app alone)."""

from __future__ import annotations

import logging
import os
from typing import TYPE_CHECKING, Annotated

import typer

from issuetriage.cli.options import JudgeOpt, ModelOpt, ProfileOpt, StoreOpt
from issuetriage.cli.service import QueueOpt, RepoOpt, WorkersOpt
from issuetriage.policy import load_profile

if TYPE_CHECKING:
    from starlette.applications import Starlette


def register(app: typer.Typer) -> None:
    """Attach this module's commands to the main app."""

    @app.command("serve")
    def serve_cmd(
        store: StoreOpt,
        profile: ProfileOpt = "pytorch",
        host: Annotated[str, typer.Option("--host", help="Address to bind (loopback unless --allow-remote).")] = "127.0.0.1",
        port: Annotated[int, typer.Option("--port", min=0, max=65535)] = 8000,
        workers: WorkersOpt = 1,
        queue: QueueOpt = None,
        repo: RepoOpt = None,
        judge: JudgeOpt = "auto",
        model: ModelOpt = None,
        no_webhook: Annotated[bool, typer.Option("--no-webhook", help="Serve the review app alone.")] = False,
        allow_remote: Annotated[bool, typer.Option("--allow-remote", help="Allow a non-loopback --host.")] = False,
        reviewer: Annotated[str, typer.Option("--reviewer", help="Name recorded with each review.")] = "local",
    ) -> None:
        """Receive webhooks (POST /webhook) and triage them with --workers threads; the review app
        stays at /. Example: GITHUB_WEBHOOK_SECRET=... issuetriage serve --store t.db --workers 2"""
        from issuetriage.errors import TriageError, UserError
        from issuetriage.store.engines import redacted
        from issuetriage.web.app import check_bind, create_app

        try:
            import uvicorn
        except ImportError:
            raise UserError("serve needs uvicorn: pip install 'issuetriage[web]'") from None

        check_bind(host, allow_remote)
        hosts = ["*"] if allow_remote else None
        if no_webhook:
            alone = create_app(store, load_profile(profile), reviewer, allowed_hosts=hosts)
            typer.echo(f"serving {redacted(store)} on http://{host}:{port}/ (Ctrl-C to stop)", err=True)
            uvicorn.run(alone, host=host, port=port, log_level="warning")
            return
        from issuetriage.cli.service import open_jobs
        from issuetriage.service.app import json_logs, receiver_app, review_app
        from issuetriage.service.receiver import Receiver, settings_secrets

        secrets = settings_secrets(os.environ.get("GITHUB_WEBHOOK_SECRET"),
                                   os.environ.get("GITHUB_WEBHOOK_SECRET_PREVIOUS"))
        jobs = open_jobs(store, queue, repo, profile, judge, model)
        policy = load_profile(profile)
        json_logs()
        review: Starlette | None = None
        try:
            review = review_app(store, policy, jobs.resolver, reviewer, hosts)  # type: ignore[arg-type]  # open_jobs gave one
        except TriageError as exc:  # the receiver does not depend on the review app
            logging.getLogger("issuetriage.service").warning("review app not mounted", extra={"reason": str(exc)})
        jobs.recover(force=True)  # whatever an earlier receiver recorded but may not have enqueued
        consumer = jobs.huey.create_consumer(workers=workers, worker_type="thread", initial_delay=0.05,
                                             max_delay=1.0) if workers else None
        if consumer:
            consumer.start()
        typer.echo(f"receiving webhooks on http://{host}:{port}/webhook with {workers} worker(s); "
                   f"review app at / (Ctrl-C to stop)", err=True)
        try:
            uvicorn.run(receiver_app(Receiver(secrets, jobs), review), host=host, port=port,
                        log_level="warning", log_config=None)
        finally:
            if consumer:
                consumer.stop(graceful=True)  # the job in hand finishes; the rest stays queued
