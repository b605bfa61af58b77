"""Service mode commands: `worker` (workers alone against a shared queue) and `queue
list|retry|drop` (the queue and its dead letters). `serve` (cli/serve.py) runs everything on one
machine."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Optional

import typer

from issuetriage.cli.options import Format, FormatOpt, JudgeOpt, ModelOpt, ProfileOpt, StoreOpt, emit

if TYPE_CHECKING:
    from issuetriage.service.jobs import Jobs

QUEUE_ENV = "ISSUETRIAGE_QUEUE"
QueueOpt = Annotated[Optional[str], typer.Option(
    "--queue", envvar=QUEUE_ENV, help="redis://HOST:PORT/DB (many machines) or sqlite:PATH "
                                      "(default: STORE.queue next to the store).")]
RepoOpt = Annotated[Optional[list[str]], typer.Option(
    "--repo", help="OWNER/NAME served as GITHUB_TOKEN, repeatable (default: the profile's repository).")]
RefsArg = Annotated[list[str], typer.Argument(help="OWNER/REPO#N (every job of that issue), or `all`.")]
WorkersOpt = Annotated[int, typer.Option("--workers", min=0, help="Worker threads (serve) or processes (worker).")]
# what `serve` imports, each with the names it may go by; all installed by the `service` extra
SERVE_MODULES = (("huey",), ("uvicorn",), ("starlette",), ("jinja2",), ("python_multipart", "multipart"),
                 ("matplotlib",))


def need_service_extra(command: str, modules: tuple[tuple[str, ...], ...] = (("huey",),)) -> None:
    """One line naming the `service` extra when a module the command needs is not installed."""
    from importlib.util import find_spec

    from issuetriage.errors import UserError

    missing = [names[0] for names in modules if not any(find_spec(n) for n in names)]
    if missing:
        raise UserError(f"{command} needs {', '.join(missing)}: pip install 'issuetriage[service]'")


def service_profile(profile: str | None, repos: list[str] | None) -> str | None:
    """The profile the service triages with as GITHUB_TOKEN: named, or found for the first
    `--repo` (each served repository must be the profile's); None in App mode with none named,
    where each repository brings its own profile or is refused."""
    from issuetriage.cli.github import check_repo
    from issuetriage.policy.discover import profile_for

    served = [check_repo(r) for r in repos or ()]
    if os.environ.get("GITHUB_APP_ID"):
        return profile
    chosen = profile_for(profile, served[0] if served else None)
    for repo in served[1:]:
        profile_for(chosen, repo)
    return chosen


def open_jobs(store: str, queue: str | None, repos: list[str] | None, profile: str | None, judge: str,
              model: Path | None) -> Jobs:
    """The queue and its jobs for the command line's settings (App mode when GITHUB_APP_ID is set;
    without credentials, a one-line error before anything is written)."""
    from issuetriage.cli.github import check_repo
    from issuetriage.service.app import open_jobs as open_
    from issuetriage.service.app import resolver_from_env

    served = tuple(check_repo(r) for r in repos) if repos else ()
    return open_(store, queue, resolver_from_env(served, profile, os.environ), judge, model)


def register(app: typer.Typer) -> None:
    """Attach this module's commands to the main app."""

    @app.command("worker")
    def worker_cmd(
        store: StoreOpt = "issuetriage.db",
        queue: QueueOpt = None,
        workers: WorkersOpt = 1,
        repo: RepoOpt = None,
        profile: ProfileOpt = None,
        judge: JudgeOpt = "auto",
        model: ModelOpt = None,
    ) -> None:
        """Run workers alone against the queue until SIGTERM (each finishes its job in hand).
        Example: ISSUETRIAGE_QUEUE=redis://localhost:6379/0 issuetriage worker --store t.db --workers 2"""
        need_service_extra("worker")
        from issuetriage.service.app import json_logs, run_workers

        jobs = open_jobs(store, queue, repo, service_profile(profile, repo), judge, model)
        json_logs()  # after the settings are checked: bad input leaves the process's logging alone
        jobs.recover(force=False)  # work whose worker died mid-job
        run_workers(jobs, max(workers, 1), processes=True)

    queue_app = typer.Typer(help="The service's queue: pending jobs and dead letters.", no_args_is_help=True)

    def _jobs(store: str, queue: str | None) -> Jobs:
        from issuetriage.service.app import open_jobs as open_
        from issuetriage.store.sqlite import Store

        Store(store, create=False).close()  # one line when there is no such store (file or URL)
        return open_(store, queue)

    @queue_app.command("list")
    def queue_list(store: StoreOpt = "issuetriage.db", queue: QueueOpt = None,
                   fmt: FormatOpt = Format.text) -> None:
        """Pending and retrying jobs, and the dead letters. Example: issuetriage queue list --store t.db"""
        jobs = _jobs(store, queue)
        pending = [list(t.args) for t in jobs.huey.pending()]
        retrying = [list(t.args) + [str(t.eta)] for t in jobs.huey.scheduled()]
        dead = jobs.store().dead_letters()
        lines = [f"pending  {a[0]} {a[1]}#{a[2]}" for a in pending]
        lines += [f"retrying {a[0]} {a[1]}#{a[2]} at {a[4]}" for a in retrying]
        lines += [f"dead     {d['kind']} {d['repo']}#{d['number']} after {d['tries']} tries: {d['error']}"
                  for d in dead]
        lines.append(f"{len(pending)} pending, {len(retrying)} retrying, {len(dead)} dead letter(s)")
        emit(fmt, {"pending": pending, "retrying": retrying, "dead": dead}, "\n".join(lines))

    def _mend(refs: list[str], store: str, queue: str | None, retry: bool, fmt: Format) -> None:
        from issuetriage.errors import UserError

        jobs = _jobs(store, queue)
        dead = {(d["kind"], d["repo"], d["number"]): d for d in jobs.store().dead_letters()}
        chosen = list(dead) if refs == ["all"] else [key for r in refs for key in _dead_ref(r, dead)]
        if not chosen:
            raise UserError("the dead-letter list is empty")
        for kind, repo, number in chosen:
            jobs.store().take_dead_letter(kind, repo, number, requeue=retry)
            if retry:
                jobs.submit(kind, repo, number, dead[(kind, repo, number)]["installation"], force=True)
        verb = "re-enqueued" if retry else "dropped"
        emit(fmt, {verb: [f"{k} {r}#{n}" for k, r, n in chosen]},
             "\n".join(f"{verb} {k} {r}#{n}" for k, r, n in chosen))

    @queue_app.command("retry")
    def queue_retry(refs: RefsArg, store: StoreOpt = "issuetriage.db", queue: QueueOpt = None,
                    fmt: FormatOpt = Format.text) -> None:
        """Put dead letters back on the queue. Example: issuetriage queue retry pytorch/pytorch#12 --store t.db"""
        _mend(refs, store, queue, True, fmt)

    @queue_app.command("drop")
    def queue_drop(refs: RefsArg, store: StoreOpt = "issuetriage.db", queue: QueueOpt = None,
                   fmt: FormatOpt = Format.text) -> None:
        """Forget dead letters (their deliveries stay recorded as dead). Example: issuetriage queue drop all --store t.db"""
        _mend(refs, store, queue, False, fmt)

    app.add_typer(queue_app, name="queue")


def _dead_ref(ref: str, dead: Mapping[tuple[str, str, int], object]) -> list[tuple[str, str, int]]:
    """The dead letters `OWNER/REPO#N` names (every job of that issue)."""
    from issuetriage.cli.github import parse_ref
    from issuetriage.errors import UserError

    repo, number = parse_ref(ref)
    found = [key for key in dead if key[1:] == (repo, number)]
    if not found:
        raise UserError(f"{ref!r}: not in the dead-letter list (see `issuetriage queue list`)")
    return found
