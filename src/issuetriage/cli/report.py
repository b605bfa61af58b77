"""Live quality commands: report, corrections and stale follow-up."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Annotated, Any, Optional

import typer

from issuetriage.cli.options import Format, FormatOpt, ProfileOpt, StoreOpt, emit
from issuetriage.errors import UserError
from issuetriage.policy import load_profile
from issuetriage.policy.discover import profile_for


def _store_policy(db: Any, profile: str | None) -> Any:
    """The profile named, or the one for the repository the store holds."""
    from issuetriage.store.corpus import store_repo

    return load_profile(profile_for(profile, None if profile else store_repo(db)))


def register(app: typer.Typer) -> None:
    """Attach this module's commands to the main app."""

    @app.command("report")
    def report_cmd(
        store: StoreOpt,
        out: Annotated[Path, typer.Option("--out", help="Folder for index.html and report.json.")],
        profile: ProfileOpt = None,
        days: Annotated[Optional[int], typer.Option("--days", min=1, help="Only plans of the last N days.")] = None,
        update_demotions: Annotated[bool, typer.Option(
            "--update-demotions", help="Demote or restore labels by live precision first.")] = False,
        fmt: FormatOpt = Format.text,
    ) -> None:
        """Write the static live-quality report. Example: issuetriage report --store t.db --out report/"""
        from issuetriage.live import demotion
        from issuetriage.report import data, html
        from issuetriage.store.sqlite import Store

        with Store(store, create=False) as db:
            policy = _store_policy(db, profile)
            changes = [change.describe() for change in demotion.update(db, policy)] if update_demotions else []
            written = html.write(data.build(db, policy, days=days), out)
        emit(fmt, {"demotions": changes, "wrote": [str(p) for p in written]},
             "\n".join([*changes, f"wrote {', '.join(str(p) for p in written)}"]))

    @app.command("corrections")
    def corrections_cmd(
        store: StoreOpt,
        out: Annotated[Path, typer.Option("--out", help="JSONL corpus for `issuetriage train --corpus`.")],
        profile: ProfileOpt = None,
        fmt: FormatOpt = Format.text,
    ) -> None:
        """Export what humans corrected as a training corpus. Example: issuetriage corrections --store t.db --out c.jsonl"""
        from issuetriage.live.corrections import write_corpus
        from issuetriage.store.sqlite import Store

        with Store(store, create=False) as db:
            count = write_corpus(db, _store_policy(db, profile), out)
        emit(fmt, {"wrote": str(out), "issues": count}, f"wrote {count} corrected issue(s) to {out}")

    @app.command("stale")
    def stale_cmd(
        store: StoreOpt,
        apply: Annotated[bool, typer.Option("--apply", help="Post the reminders and closes.")] = False,
        github: Annotated[bool, typer.Option(
            "--github", help="The issues live on GitHub (with the token): read and write there, audit in the store.")] = False,
        profile: ProfileOpt = None,
        now: Annotated[Optional[str], typer.Option("--now", help="ISO time to judge staleness at.")] = None,
        fmt: FormatOpt = Format.text,
    ) -> None:
        """Remind, then close, issues whose reporter went quiet. Example: issuetriage stale --store t.db"""
        from issuetriage.act.applier import Applier
        from issuetriage.act.stale import follow_up
        from issuetriage.evidence.followup import utc
        from issuetriage.store.applier import StoreApplier
        from issuetriage.store.sqlite import Store

        try:
            when = utc(datetime.fromisoformat(now)) if now else datetime.now(UTC)
        except ValueError:
            raise UserError(f"--now {now!r}: expected an ISO date or time") from None
        with Store(store, create=False) as db:
            policy = _store_policy(db, profile)
            applier: Applier = StoreApplier(db, at=when)
            if github:
                from issuetriage.github.apply import GitHubApplier
                from issuetriage.github.client import GitHubClient

                applier = GitHubApplier(GitHubClient.from_env(repo=policy.meta.repo))
            due = follow_up(applier, db, policy, when, apply)
        rows: list[dict[str, Any]] = [
            {"issue": item.issue.ref, "decision": item.plan.decision.value, "templates": list(item.plan.templates),
             "close": item.plan.close, "applied": item.report.applied, "held": item.report.held} for item in due]
        state = "applied" if apply else "due (dry run)"
        emit(fmt, {"applied": apply, "follow_ups": rows},
             "\n".join([*(f"{r['issue']}\t{r['decision']}\t{', '.join(r['templates'])}"
                          + ("\theld for review (shadow mode)" if r["held"] else "") for r in rows),
                        f"{len(due)} follow-up(s) {state}"]))
