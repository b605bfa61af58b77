"""GitHub commands: triage, sync, labels, backlog, init-workflows and the Claude Code hooks."""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Optional

import typer

from issuetriage.cli.options import Format, FormatOpt, JudgeOpt, ModelOpt, OptionalStoreOpt, ProfileOpt, StoreOpt, emit
from issuetriage.errors import UserError
from issuetriage.policy import load_profile
from issuetriage.policy.discover import CHECKOUT_PROFILE, profile_for

if TYPE_CHECKING:
    from issuetriage.act.flow import Report



def parse_ref(ref: str) -> tuple[str, int]:
    """`OWNER/REPO#N` → (OWNER/REPO, N)."""
    match = re.fullmatch(r"([\w.-]+/[\w.-]+)#(\d+)", ref.strip())
    if not match:
        raise UserError(f"{ref!r}: expected OWNER/REPO#NUMBER")
    return match.group(1), int(match.group(2))


def check_repo(repo: str) -> str:
    if not re.fullmatch(r"[\w.-]+/[\w.-]+", repo):
        raise UserError(f"{repo!r}: expected OWNER/REPO")
    return repo


def _client(repo: str):  # noqa: ANN202
    from issuetriage.github.client import GitHubClient
    return GitHubClient.from_env(repo=repo)


def triage_cmd(ref: str, apply: bool, profile: str | None, judge_name: str, model: Path | None,
               store_path: str | None, keep_subscription: bool, fmt: Format) -> int:
    """Run one live triage through the one flow; returns the exit code (1 when the outcome check
    says no_action)."""
    from issuetriage.act.flow import PULL_REQUEST
    from issuetriage.act.live import triage_issue
    from issuetriage.github.apply import GitHubApplier
    from issuetriage.judges.factory import get_judge
    from issuetriage.store.sqlite import Store

    repo, number = parse_ref(ref)
    profile = profile_for(profile, repo)  # before the client: an unknown repository needs no token
    applier = GitHubApplier(_client(repo), keep_subscription=keep_subscription)
    store = Store(store_path) if store_path else None
    policy = load_profile(profile)
    try:
        judge = get_judge(judge_name, model, profile=profile, store=store)
        report = triage_issue(applier, repo, number, policy, judge, store, apply)
    finally:
        if store:
            store.close()
    if report.skipped == PULL_REQUEST:
        raise UserError(f"{repo}#{number} is {PULL_REQUEST}")
    calls = applier.spent()
    emit(fmt, report_json(report, apply, calls), report_text(report, apply, calls))
    return 0 if report.verdict is None or report.verdict.ok else 1


def report_json(report: Report, apply: bool, api_calls: int) -> dict[str, object]:
    verdict = report.verdict
    return {"plan": report.plan.to_json() if report.plan else None, "judge": report.judge or None,
            "calls": list(report.writes), "applied": apply, "already_done": report.done_before,
            "api_calls": api_calls, "outcome": verdict.outcome.value if verdict else None,
            "fixed": list(verdict.fixed) if verdict else [], "missing": list(verdict.missing) if verdict else []}


def report_text(report: Report, apply: bool, api_calls: int) -> str:
    from issuetriage.cli.render import plan_text

    if report.plan is None:
        lines = [f"{report.before.ref}: {report.skipped}; nothing to write"]
    else:
        how = ("calls made" if report.applied else
               "calls it would make (held for review, not sent)" if report.held else
               "calls it would make (dry run; --apply to send)")
        lines = [plan_text(report.plan), "", f"{how}:"]
        lines += [f"  {call}" for call in report.writes]
        lines += [] if report.writes else ["  none: GitHub already shows everything in the plan"]
    if report.verdict:
        v = report.verdict
        lines += ["", f"outcome: {v.outcome.value}"
                  + (f"; marker labels written by the check: {list(v.fixed)}" if v.fixed else "")
                  + (f"; NOT on GitHub: {', '.join(v.missing)}" if v.missing else "")]
    lines.append(f"API calls: {api_calls}")
    return "\n".join(lines)


def register(app: typer.Typer) -> None:
    """Attach this module's commands to the main app."""

    @app.command("triage")
    def triage(
        ref: Annotated[str, typer.Argument(help="OWNER/REPO#NUMBER")],
        apply: Annotated[bool, typer.Option("--apply", help="Write to GitHub (default: dry run).")] = False,
        profile: ProfileOpt = None,
        judge: JudgeOpt = "auto",
        model: ModelOpt = None,
        store: OptionalStoreOpt = None,
        keep_subscription: Annotated[bool, typer.Option(
            "--keep-subscription", help="Restore your notification subscription after writing.")] = False,
        fmt: FormatOpt = Format.text,
    ) -> None:
        """Triage one live issue; exits 1 on a no_action outcome. Example: issuetriage triage OWNER/REPO#123"""
        code = triage_cmd(ref, apply, profile, judge, model, store, keep_subscription, fmt)
        if code:
            sys.exit(code)

    @app.command("sync")
    def sync_cmd(
        repo: Annotated[str, typer.Argument(help="OWNER/REPO")],
        store: StoreOpt = "issuetriage.db",
        since: Annotated[Optional[str], typer.Option("--since", help="ISO date; default: since the last sync.")] = None,
        fmt: FormatOpt = Format.text,
    ) -> None:
        """Mirror issues, comments and labels into the store. Example: issuetriage sync OWNER/REPO --store t.db"""
        from rich.console import Console
        from rich.progress import Progress

        from issuetriage.github.sync import sync
        from issuetriage.store.sqlite import Store

        check_repo(repo)
        if since and not re.fullmatch(r"\d{4}-\d{2}-\d{2}(T[\d:]+Z?)?", since):
            raise UserError(f"--since {since!r}: expected YYYY-MM-DD or an ISO timestamp")
        client = _client(repo)
        with Store(store) as db, Progress(console=Console(stderr=True), transient=True) as progress:
            task = progress.add_task(f"syncing {repo}", total=None)
            report = sync(client, db, repo, since, on_issue=lambda n: progress.advance(task))
        state = "unchanged (304)" if report.not_modified else f"{report.issues} issue(s), {report.comments} comment(s)"
        emit(fmt, {"repo": repo, "not_modified": report.not_modified, "issues": report.issues,
                   "comments": report.comments, "events": report.events, "labels": report.labels,
                   "api_calls": len(client.calls)},
             f"synced {repo}: {state}, {report.events} label event(s), {report.labels} label(s), "
             f"{len(client.calls)} API call(s)")

    labels_app = typer.Typer(help="Compare and sync the profile's labels with a repository.", no_args_is_help=True)

    def _labels(repo: str, profile: str | None, apply: bool, fmt: Format) -> None:
        from issuetriage.github.labels import diff_labels, sync_labels
        from issuetriage.github.reads import repo_labels

        check_repo(repo)
        policy = load_profile(profile_for(profile, repo))
        client = _client(repo)
        found = diff_labels(policy, repo_labels(client, repo))
        lines = [f"missing  {name}" for name in found.missing]
        lines += [f"renamed  {old} -> {new}" for old, new in found.renamed]
        lines += [f"drift    {name}: {have!r} -> {want!r}" for name, have, want in found.drift]
        lines += [f"extra    {name} (kept)" for name in found.extra]
        applied = sync_labels(client, repo, policy, found) if apply else None
        if applied is not None:
            lines.append(f"applied {applied} change(s); nothing deleted")
        elif not found.clean:
            lines.append("dry run: `labels sync --apply` creates, renames and updates (never deletes)")
        emit(fmt, {"missing": list(found.missing), "renamed": [list(r) for r in found.renamed],
                   "drift": [list(d) for d in found.drift], "extra": list(found.extra),
                   "applied": applied}, "\n".join(lines))

    @labels_app.command("diff")
    def labels_diff(repo: Annotated[str, typer.Argument(help="OWNER/REPO")], profile: ProfileOpt = None,
                    fmt: FormatOpt = Format.text) -> None:
        """Catalog vs repo labels. Example: issuetriage labels diff OWNER/REPO"""
        _labels(repo, profile, False, fmt)

    @labels_app.command("sync")
    def labels_sync(repo: Annotated[str, typer.Argument(help="OWNER/REPO")], profile: ProfileOpt = None,
                    apply: Annotated[bool, typer.Option("--apply")] = False,
                    fmt: FormatOpt = Format.text) -> None:
        """Create/update the catalog's labels. Example: issuetriage labels sync OWNER/REPO --apply"""
        _labels(repo, profile, apply, fmt)

    app.add_typer(labels_app, name="labels")

    @app.command("backlog")
    def backlog_cmd(
        repo: Annotated[str, typer.Argument(help="OWNER/REPO")],
        label: Annotated[Optional[str], typer.Option("--label", help="Only issues with this label.")] = None,
        older_than: Annotated[Optional[str], typer.Option("--older-than", help="Like 3m, 2w, 10d.")] = None,
        limit: Annotated[int, typer.Option("--limit", min=1)] = 50,
        budget: Annotated[int, typer.Option("--budget", min=1, help="Most API calls to spend.")] = 500,
        apply: Annotated[bool, typer.Option("--apply")] = False,
        store: StoreOpt = "issuetriage.db",
        profile: ProfileOpt = None,
        judge: JudgeOpt = "auto",
        model: ModelOpt = None,
        shadow: Annotated[bool, typer.Option("--shadow", help="Record plans for review; write nothing.")] = False,
        fmt: FormatOpt = Format.text,
    ) -> None:
        """Triage open untriaged issues in bulk, resumably. Example: issuetriage backlog OWNER/REPO --limit 20 --apply"""
        from issuetriage.act.backlog import backlog
        from issuetriage.act.hold import Mode
        from issuetriage.cli.progress import working
        from issuetriage.github.backlog import parse_age
        from issuetriage.judges.factory import get_judge
        from issuetriage.store.sqlite import Store

        check_repo(repo)
        age = parse_age(older_than) if older_than else None
        profile = profile_for(profile, repo)
        client = _client(repo)
        policy = load_profile(profile)
        with Store(store) as db:
            judge_obj = get_judge(judge, model, profile=profile, store=db)
            # shadow: plans are recorded for review (with the issue, so the queue can show it), not written
            with working(f"triaging the backlog of {repo} (at most {limit} issues, {budget} calls)"):
                result = backlog(client, db, repo, policy, judge_obj, label, age, limit, budget,
                                 Mode(apply=apply, shadow=shadow))
        rows = [{"issue": r.before.number,
                 "decision": r.plan.decision.value if r.plan else f"skipped: {r.skipped}",
                 "outcome": r.verdict.outcome.value if r.verdict else "dry run", "writes": len(r.writes)}
                for r in result.reports]
        for number, message in result.failed:
            typer.echo(f"#{number}\tfailed: {message}", err=True)
        lines = [f"#{r['issue']}\t{r['decision']}\t{r['outcome']}\t{r['writes']} write(s)" for r in rows]
        lines.append(f"{len(result.reports)} issue(s) {'triaged' if apply else 'planned'}, "
                     f"{result.skipped_budget} left for the next run (budget), {len(client.calls)} API call(s)")
        emit(fmt, {"issues": rows, "failed": [{"issue": n, "error": m} for n, m in result.failed],
                   "left_for_next_run": result.skipped_budget, "api_calls": len(client.calls)},
             "\n".join(lines))
        if result.failed:
            sys.exit(1)

    @app.command("init-workflows")
    def init_workflows(
        directory: Annotated[Path, typer.Argument(help="Usually .github/workflows")],
        source: Annotated[Optional[str], typer.Option(
            "--source", help="pip requirement git+https://HOST/OWNER/NAME@REVISION "
                             "(default: this issuetriage's git checkout at its commit).")] = None,
        wheel: Annotated[Optional[str], typer.Option(
            "--wheel", help="A wheel committed to the repository, relative to its root.")] = None,
        profile: ProfileOpt = None,
        environment: Annotated[str, typer.Option("--environment", help="Protected environment.")] = "issue-triage",
        history_limit: Annotated[int, typer.Option(
            "--history-limit", min=1, help="Newest issues the sweep builds the history folder from.")] = 20000,
        force: Annotated[bool, typer.Option("--force")] = False,
        fmt: FormatOpt = Format.text,
    ) -> None:
        """Write the two-stage triage workflows and the backlog sweep; run it from the repository root.
        Example: issuetriage init-workflows .github/workflows --profile ./triage-profile --wheel tools/issuetriage-0.1.0-py3-none-any.whl"""
        from issuetriage.github.workflows import check_profile, install_source, write

        root = Path.cwd()
        install = install_source(source, wheel, root)
        paths = write(directory, force=force, install=install,
                      profile=check_profile(profile or CHECKOUT_PROFILE.as_posix(), root),
                      environment=environment, history_limit=history_limit)
        emit(fmt, {"written": [str(p) for p in paths], "install": install},
             "\n".join([*(f"wrote {p}" for p in paths), f"the jobs install: {install}"]))

    @app.command("hook")
    def hook(event: Annotated[str, typer.Argument(help="pre-tool-use or post-tool-use")]) -> None:
        """Claude Code hook: guard GitHub tool calls (JSON on stdin). Example: issuetriage hook pre-tool-use"""
        from issuetriage.cli import hook as run_hook

        if event not in {"pre-tool-use", "post-tool-use"}:
            raise UserError(f"unknown hook {event!r} (pre-tool-use or post-tool-use)")
        code = run_hook(event)  # the console entry point dispatches here before typer loads
        if code:
            sys.exit(code)
