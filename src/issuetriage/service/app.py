"""Putting the service together: the queue and its jobs, the ASGI app (the receiver beside the
review app), JSON logs, and running workers with a graceful stop."""

from __future__ import annotations

import json
import logging
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from issuetriage.errors import UserError

if TYPE_CHECKING:
    from starlette.applications import Starlette

    from issuetriage.service.jobs import Jobs
    from issuetriage.service.receiver import Receiver
    from issuetriage.service.resolver import Resolver

_STANDARD = set(logging.LogRecord("", 0, "", 0, "", None, None).__dict__) | {"message", "asctime"}


class JsonFormatter(logging.Formatter):
    """One JSON object per line: time, level, logger, message and the record's extra fields."""

    def format(self, record: logging.LogRecord) -> str:
        data: dict[str, Any] = {"time": self.formatTime(record, "%Y-%m-%dT%H:%M:%S%z"),
                                "level": record.levelname.lower(), "logger": record.name,
                                "message": record.getMessage()}
        data |= {k: v for k, v in record.__dict__.items() if k not in _STANDARD}
        if record.exc_info:
            data["error"] = self.formatException(record.exc_info).splitlines()[-1]
        return json.dumps(data, default=str)


def json_logs(level: int = logging.INFO) -> None:
    """Send the service's and huey's logs to stderr as JSON lines."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(JsonFormatter())
    for name in ("issuetriage", "huey", "uvicorn"):
        logger = logging.getLogger(name)
        logger.handlers[:] = [handler]
        logger.setLevel(level if name == "issuetriage" else max(level, logging.WARNING))
        logger.propagate = False


def open_jobs(store: str | Path, queue_url: str | None, resolver: Resolver | None = None, judge: str = "auto",
              model: Path | None = None) -> Jobs:
    """The queue (ISSUETRIAGE_QUEUE, or the embedded file next to the store) and its jobs;
    without a resolver it can list and mend the queue but not run jobs."""
    from issuetriage.service.jobs import Jobs, wal
    from issuetriage.service.queue import open_huey
    from issuetriage.store.sqlite import Store

    huey = open_huey(queue_url, store)  # first: an unusable queue leaves no store behind
    with Store(store) as db:  # create and migrate it once, before any worker forks
        wal(db)
    return Jobs(huey, store, resolver, judge, model)


def token_resolver(repos: tuple[str, ...], profile: str, env: Mapping[str, str]) -> Resolver:
    """Token mode: the given repositories as GITHUB_TOKEN with one profile."""
    from issuetriage.service.resolver import TokenResolver

    if env.get("GITHUB_APP_ID"):
        raise UserError("service mode as a GitHub App needs the App resolver (service.resolver.Resolver); "
                        "this build serves one repository as GITHUB_TOKEN")
    return TokenResolver(repos, profile, env)


def receiver_app(receiver: Receiver, review: Starlette | None = None) -> Starlette:
    """The receiver's routes, with the review app (its own CSRF and Host checks) mounted beside
    them at `/`."""
    from starlette.applications import Starlette
    from starlette.routing import Mount

    routes: list[Any] = receiver.routes()
    if review is not None:
        routes.append(Mount("/", app=review))
    return Starlette(routes=routes)


def run_workers(jobs: Jobs, workers: int, processes: bool) -> None:
    """Run `workers` workers until SIGTERM or SIGINT: each finishes the job in hand, the rest
    stays queued."""
    consumer = jobs.huey.create_consumer(workers=workers, worker_type="process" if processes else "thread",
                                         graceful_signal="TERM", initial_delay=0.05, max_delay=1.0)
    consumer.run()
