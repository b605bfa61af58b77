"""Engine commands: profile check, plan, demo, store and run."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from issuetriage.policy import load_profile, load_profile_dir


def register(app: typer.Typer) -> None:
    """Attach this module's commands to the main app."""
    profile_app = typer.Typer(help="Inspect and validate policy profiles.", no_args_is_help=True)

    @profile_app.command("check")
    def profile_check(path: Annotated[Path, typer.Argument(help="A profile folder.")]) -> None:
        """Validate a profile folder. Example: issuetriage profile check profiles/pytorch"""
        policy = load_profile_dir(path)
        typer.echo(f"ok: profile {policy.name!r}: {len(policy.labels)} labels, "
                   f"{len(policy.templates)} templates, {len(policy.queues.redirect)} redirect queues")

    app.add_typer(profile_app, name="profile")
