"""Live quality commands: report, corrections and stale follow-up."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Annotated, Optional

import typer

from issuetriage.cli.options import ProfileOpt, StoreOpt
from issuetriage.errors import UserError
from issuetriage.policy import load_profile
from issuetriage.store.sqlite import Store


def register(app: typer.Typer) -> None:
    """Attach this module's commands to the main app."""

    @app.command("report")
    def report_cmd(
        store: StoreOpt,
        out: Annotated[Path, typer.Option("--out", help="Folder for index.html and report.json.")],
        profile: ProfileOpt = "pytorch",
        days: Annotated[Optional[int], typer.Option("--days", min=1, help="Only plans of the last N days.")] = None,
        update_demotions: Annotated[bool, typer.Option(
            "--update-demotions", help="Demote or restore labels by live precision first.")] = False,
    ) -> None:
        """Write the static live-quality report. Example: issuetriage report --store t.db --out report/"""
        from issuetriage.live import demotion
        from issuetriage.report import data, html

        policy = load_profile(profile)
        with Store(store, create=False) as db:
            if update_demotions:
                for change in demotion.update(db, policy):
                    typer.echo(change.describe())
            written = html.write(data.build(db, policy, days=days), out)
        typer.echo(f"wrote {', '.join(str(p) for p in written)}")

    @app.command("corrections")
    def corrections_cmd(
        store: StoreOpt,
        out: Annotated[Path, typer.Option("--out", help="JSONL corpus for `issuetriage train --corpus`.")],
        profile: ProfileOpt = "pytorch",
    ) -> None:
        """Export what humans corrected as a training corpus. Example: issuetriage corrections --store t.db --out c.jsonl"""
        from issuetriage.live.corrections import write_corpus

        with Store(store, create=False) as db:
            count = write_corpus(db, load_profile(profile), out)
        typer.echo(f"wrote {count} corrected issue(s) to {out}")

    @app.command("stale")
    def stale_cmd(
        store: StoreOpt,
        apply: Annotated[bool, typer.Option("--apply", help="Post the reminders and closes in the store.")] = False,
        profile: ProfileOpt = "pytorch",
        now: Annotated[Optional[str], typer.Option("--now", help="ISO time to judge staleness at.")] = None,
    ) -> None:
        """Remind, then close, issues whose reporter went quiet. Example: issuetriage stale --store t.db"""
        from issuetriage.live.stale import follow_up

        try:
            when = datetime.fromisoformat(now) if now else datetime.now(UTC)
        except ValueError:
            raise UserError(f"--now {now!r}: expected an ISO date or time") from None
        with Store(store, create=False) as db:
            due = follow_up(db, load_profile(profile), when, apply)
        for item in due:
            typer.echo(json.dumps({"issue": item.issue.ref, "decision": item.plan.decision.value,
                                   "templates": list(item.plan.templates), "close": item.plan.close}))
        typer.echo(f"{len(due)} follow-up(s) {'applied' if apply else 'due (dry run)'}")
