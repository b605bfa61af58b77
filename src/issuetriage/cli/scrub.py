"""`issuetriage scrub`: review, re-run, bisect and minimize an issue's reproduction, safely."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

from issuetriage.errors import UserError

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
    ) -> None:
        """Re-run an issue's repro in a sandbox. Example: issuetriage scrub --issue issue.json --format markdown"""
        from issuetriage.scrub import bisect, flow, report, safety, source
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
        options = flow.Options(
            interpreters=tuple(sorted(interps, key=lambda i: bisect.version_key(i.label))),
            allow=frozenset(allow), isolation=None if no_isolation else "auto",
            limits=Limits(timeout_s=timeout), runs=runs, minimize=not no_minimize, warm=not cold)
        result = flow.scrub(source.load_issue(issue), options)
        if out is not None:
            report.save(result, out)
        if fmt == "json":
            typer.echo(json.dumps(report.to_json(result), indent=2))
        elif fmt == "markdown":
            typer.echo(report.to_markdown(result), nl=False)
        else:
            typer.echo(report.to_text(result), nl=False)
