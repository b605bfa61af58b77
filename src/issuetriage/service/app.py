"""Putting the service together: the queue and its jobs, the ASGI app (the receiver beside the
review app), JSON logs, and running workers with a graceful stop."""

from __future__ import annotations

import json
import logging
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from issuetriage.errors import ConfigError, UserError
from issuetriage.github.apply import GitHubApplier
from issuetriage.github.auth import credentials_from_env
from issuetriage.policy import load_profile
from issuetriage.service.resolver import TokenResolver
from issuetriage.store.sqlite import Store

if TYPE_CHECKING:
    from starlette.applications import Starlette

    from issuetriage.github.retry import Clock
    from issuetriage.policy import Policy
    from issuetriage.service.jobs import Jobs  # lazy: huey comes with the service extra
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
              model: Path | None = None, clock: Clock | None = None) -> Jobs:
    """The queue (ISSUETRIAGE_QUEUE, or the embedded file next to the store) and its jobs;
    without a resolver it can list and mend the queue but not run jobs."""
    from issuetriage.service.jobs import Jobs  # lazy: huey comes with the service extra
    from issuetriage.service.queue import open_huey  # lazy: huey comes with the service extra

    huey = open_huey(queue_url, store)  # first: an unusable queue leaves no store behind
    Store(store).close()  # create and migrate it once (WAL mode), before any worker forks
    return Jobs(huey, store, resolver, judge, model, clock)


def resolver_from_env(repos: tuple[str, ...], profile: str | None, env: Mapping[str, str],
                      clock: Clock | None = None) -> Resolver:
    """App mode when `GITHUB_APP_ID` is set: every installation, each repository with its own
    profile (`ISSUETRIAGE_APP_PROFILES`, `profile` for the unmapped; None: they are refused); a budget that resets more
    than MAX_BUDGET_WAIT away puts the job back on the queue. Token mode otherwise: `repos` (default:
    the profile's repository) as GITHUB_TOKEN with `profile`, refused at once without a token.
    Every wait renews the job's issue lock."""
    from issuetriage.service.queue import MAX_BUDGET_WAIT, lock_keeping  # lazy: huey comes with the service extra

    clock = lock_keeping(clock)
    if env.get("GITHUB_APP_ID"):
        from issuetriage.service.app_mode import AppResolver  # lazy: App mode only (JWT signing)

        if repos:
            raise UserError("--repo is for token mode (GITHUB_TOKEN); as a GitHub App the service serves "
                            "the repositories the App is installed on")
        return AppResolver.from_env(env, default_profile=profile, clock=clock, max_wait=MAX_BUDGET_WAIT)

    if profile is None:
        raise UserError("the service as GITHUB_TOKEN needs --profile")
    require_token(env)
    return TokenResolver(repos or (load_profile(profile).meta.repo,), profile, env, clock)


def require_token(env: Mapping[str, str]) -> None:
    """A one-line ConfigError, naming what to set, when token mode has no token: the service would
    otherwise accept deliveries and turn every job into a dead letter, and its review app's
    approvals write to GitHub too. Shadow mode also reads each issue (GitHub's GraphQL API takes no
    anonymous calls)."""

    try:
        credentials_from_env(env)
    except ConfigError:
        raise ConfigError("no GitHub credentials: set GITHUB_TOKEN (or GH_TOKEN, or log in with `gh auth "
                          "login`) or a GitHub App (GITHUB_APP_ID and GITHUB_APP_PRIVATE_KEY); shadow mode "
                          "reads issues too (a read-only token is enough); `serve --no-webhook` needs none") from None


def receiver_app(receiver: Receiver, review: Starlette | None = None) -> Starlette:
    """The receiver's routes, with the review app (its own CSRF and Host checks) mounted beside
    them at `/`; no response may be framed (web/framing.py)."""
    from starlette.routing import Mount

    from issuetriage.web.framing import Unframed  # lazy: starlette comes with the web extra

    routes: list[Any] = receiver.routes()
    if review is not None:
        routes.append(Mount("/", app=review))
    return Unframed(routes=routes)


def run_workers(jobs: Jobs, workers: int, processes: bool) -> None:
    """Run `workers` workers until SIGTERM or SIGINT: each finishes the job in hand, the rest
    stays queued."""
    consumer = jobs.huey.create_consumer(workers=workers, worker_type="process" if processes else "thread",
                                         graceful_signal="TERM", initial_delay=0.05, max_delay=1.0)
    consumer.run()


def review_app(store: str | Path, policy: Policy, resolver: Resolver, reviewer: str = "local",
               allowed_hosts: list[str] | None = None) -> Starlette:
    """The review app of service mode: an approval writes where the service writes, to GitHub as
    the resolver's client for the profile's repository, through the one flow (`act/review.py`)."""
    from issuetriage.web.app import create_app  # lazy: starlette comes with the web extra

    return create_app(store, policy, reviewer, allowed_hosts=allowed_hosts,
                      applies_to=lambda db: GitHubApplier(resolver.client(policy.meta.repo, None)))
