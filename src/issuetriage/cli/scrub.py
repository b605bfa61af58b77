"""`issuetriage scrub`: review, re-run, bisect and minimize an issue's reproduction, safely."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from issuetriage.cli.options import OptionalStoreOpt, ProfileOpt
from issuetriage.errors import UserError

if TYPE_CHECKING:
    from issuetriage.models import Issue
    from issuetriage.policy import Policy
    from issuetriage.scrub.flow import ScrubReport

MAX_TIMEOUT_S = 86400  # a day; far larger values overflow the selector's millisecond timeout


def register(app: typer.Typer) -> None:
    """Attach the scrub command to the main app."""

    @app.command("scrub")
    def scrub_command(
        issue: Annotated[str, typer.Option("--issue", help="Issue JSON file or OWNER/REPO#N.")],
        python: Annotated[list[str], typer.Option("--python", help="Interpreter PATH or LABEL=PATH; repeat to bisect.")] = [],  # noqa: B006
        timeout: Annotated[float, typer.Option("--timeout", help="Seconds per run (above 0, at most a day).")] = 120.0,
        fmt: Annotated[str, typer.Option("--format", help="json, text or markdown.")] = "text",
        allow: Annotated[list[str], typer.Option("--allow", help="Safety rule to accept after reading the script (or 'all').")] = [],  # noqa: B006
        no_isolation: Annotated[bool, typer.Option("--no-isolation", help="Run without a sandbox (only for trusted scripts).")] = False,
        no_minimize: Annotated[bool, typer.Option("--no-minimize", help="Skip minimization.")] = False,
        cold: Annotated[bool, typer.Option("--cold", help="Minimize with a fresh interpreter per candidate instead of fork servers that pre-import the repro's modules.")] = False,
        conda: Annotated[bool, typer.Option("--conda", help="Also bisect over conda envs named like pytorch-2.8.")] = False,
        runs: Annotated[int, typer.Option("--runs", min=1, max=5, help="Runs per check (3-5 recommended).")] = 3,
        out: Annotated[Path | None, typer.Option("--out", help="Folder for original.py, minimized.py, report.json.")] = None,
        with_: Annotated[list[str], typer.Option("--with", help="Requirement to install in a cached uv environment, e.g. 'pkg==1.2'; repeatable.")] = [],  # noqa: B006
        versions: Annotated[str | None, typer.Option("--versions", help="Bisect over versions: pkg=A,B,C or a range 'pkg>=A,<B' from the index.")] = None,
        index_url: Annotated[str | None, typer.Option("--index-url", help="Package index for --with/--versions (default PyPI).")] = None,
        find_links: Annotated[list[str], typer.Option("--find-links", help="Folder of wheels for --with/--versions; repeatable.")] = [],  # noqa: B006
        no_index: Annotated[bool, typer.Option("--no-index", help="Install only from --find-links.")] = False,
        env_cache: Annotated[Path | None, typer.Option("--env-cache", help="Folder of cached environments (default ~/.cache/issuetriage/scrub-envs).")] = None,
        max_envs: Annotated[int, typer.Option("--max-envs", min=1, help="Cached environments kept (least recently used go first).")] = 16,
        apply: Annotated[bool, typer.Option("--apply", help="On OWNER/REPO#N shown fixed in a release: close as completed with the profile's fixed_in_release comment, through the guard.")] = False,
        profile: ProfileOpt = None,
        store: OptionalStoreOpt = None,
    ) -> None:
        """Re-run an issue's repro in a sandbox; exit 0 reproduced, 1 not, 3 different error, 4 environment, 5 blocked, 6 not run.

        Example: issuetriage scrub --issue issue.json --versions 'sqlparse>=0.4.3,<0.5.1' --format markdown
        """
        from dataclasses import replace

        from issuetriage.policy.discover import profile_for
        from issuetriage.scrub import bisect, flow, provision, report, safety, source
        from issuetriage.scrub.model import Limits

        if not 0 < timeout <= MAX_TIMEOUT_S:  # also refuses nan
            raise UserError(f"--timeout {timeout}: give seconds above 0 and at most {MAX_TIMEOUT_S}")
        if out is not None and out.exists() and not out.is_dir():
            raise UserError(f"--out {out}: exists and is not a folder")
        if fmt not in ("json", "text", "markdown"):
            raise UserError(f"--format must be json, text or markdown, not {fmt!r}")
        unknown = set(allow) - set(safety.RULES) - {"all"}
        if unknown:
            raise UserError(f"unknown --allow rule(s): {', '.join(sorted(unknown))}; "
                            f"known: {', '.join(safety.RULES)}, all")
        interps = bisect.parse_interpreters(python) + (bisect.conda_interpreters() if conda else [])
        interps = sorted(interps, key=lambda i: bisect.version_key(i.label))
        provisioner = provision.Provisioner(
            **({"base_python": interps[-1].python} if interps else {}),  # type: ignore[arg-type]
            **({"cache": env_cache} if env_cache else {}), index_url=index_url,  # type: ignore[arg-type]
            find_links=tuple(find_links), no_index=no_index, max_envs=max_envs)
        if versions is not None:
            if len(interps) > 1:
                raise UserError("--versions bisects one interpreter's package versions; give at most one --python")
            interps = provision.version_interpreters(versions, tuple(with_), provisioner)
        elif with_:
            base = interps or [flow.default_interpreter()]
            interps = [replace(i, label=f"{i.label}+{'+'.join(with_)}", requirements=tuple(with_)) for i in base]
        options = flow.Options(
            interpreters=tuple(interps), allow=frozenset(allow), isolation=None if no_isolation else "auto",
            limits=Limits(timeout_s=timeout), runs=runs, minimize=not no_minimize, warm=not cold,
            provisioner=provisioner, progress=lambda line: typer.echo(f"scrub: {line}", err=True))
        live = source.ref_of(issue)
        if apply and live is None:
            raise UserError("--apply needs OWNER/REPO#N (a live issue), not a file")
        policy = _closing_policy(profile_for(profile, live[0])) if apply and live else None
        loaded = source.load_issue(issue)
        result = flow.scrub(loaded, options)
        if out is not None:
            report.save(result, out)
        closed = _close(result, loaded, policy, store) if policy is not None else None
        if fmt == "json":
            typer.echo(json.dumps(report.to_json(result) | ({"close": closed} if apply else {}), indent=2))
        elif fmt == "markdown":
            typer.echo(report.to_markdown(result), nl=False)
        else:
            typer.echo(report.to_text(result), nl=False)
        raise typer.Exit(report.exit_code(result))


def _closing_policy(profile: str) -> Policy:
    """The profile a close as fixed goes through; it must have the `fixed_in_release` template."""
    from issuetriage.policy import load_profile
    from issuetriage.scrub.close import TEMPLATE

    policy = load_profile(profile)
    if TEMPLATE not in policy.templates:
        raise UserError(f"--apply: profile {profile!r} has no {TEMPLATE!r} template to close with "
                        f"(docs/scrub.md shows one)")
    return policy


def _close(result: ScrubReport, issue: Issue, policy: Policy, store_path: str | None) -> dict[str, object] | None:
    """Close `issue` as fixed through the one flow when `result` shows it; one summary on stderr."""
    from issuetriage.act.close_fixed import close_as_fixed
    from issuetriage.cli.github import report_json, report_text
    from issuetriage.github.apply import GitHubApplier
    from issuetriage.github.client import GitHubClient
    from issuetriage.store.sqlite import Store

    client = GitHubClient.from_env(repo=issue.repo)
    store = Store(store_path) if store_path else None
    try:
        done = close_as_fixed(GitHubApplier(client, keep_subscription=True), policy, result, issue,
                              audit=store)
    finally:
        client.close()
        if store is not None:
            store.close()
    if done is None:
        typer.echo("scrub: nothing to close (the report does not show a release that fixed it)", err=True)
        return None
    typer.echo(report_text(done, done.applied, done.extra.get("api_calls", 0)), err=True)
    return report_json(done, done.applied, done.extra.get("api_calls", 0))
