"""Profile commands: check a profile folder, show its catalog, import PyTorch's skill files."""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path
from typing import Annotated, Optional

import typer
from rich.console import Console
from rich.table import Table

from issuetriage.errors import UserError
from issuetriage.policy.importer import import_profile
from issuetriage.policy import LabelSpec, Policy, load_profile

GROUPS = ("area", "queue", "topic", "other")


def grouped(policy: Policy) -> dict[str, list[LabelSpec]]:
    """Catalog labels by family (the profile's `families`): area, queue, topic, other."""
    groups: dict[str, list[LabelSpec]] = defaultdict(list)
    for spec in policy.catalog.label:
        groups[policy.group_of(spec.name)].append(spec)
    return {g: groups[g] for g in GROUPS if groups[g]}


def labels_table(policy: Policy) -> Table:
    """One rich table of the catalog, a section per group with its count."""
    table = Table(title=f"profile {policy.name}: {len(policy.labels)} labels", show_lines=False)
    table.add_column("label", style="bold", no_wrap=True)
    table.add_column("signals", justify="right")
    table.add_column("description")
    for group, specs in grouped(policy).items():
        table.add_section()
        table.add_row(f"[cyan]{group}[/cyan] ({len(specs)})", "", "")
        for spec in specs:
            signals = len(spec.keywords) + len(spec.patterns) + len(spec.title_keywords)
            table.add_row(spec.name, str(signals) if signals else "-", spec.description)
    return table


def register(app: typer.Typer) -> None:
    """Attach `profile check`, `profile show` and `profile import` to the main app."""
    profile_app = typer.Typer(help="Inspect, validate and import policy profiles.", no_args_is_help=True)

    @profile_app.command("check")
    def check(profile: Annotated[str, typer.Argument(help="A shipped profile name or a folder.")]) -> None:
        """Validate a profile. Example: issuetriage profile check src/issuetriage/profiles/pytorch"""
        policy = load_profile(profile)
        typer.echo(f"ok: profile {policy.name!r}: {len(policy.labels)} labels, "
                   f"{len(policy.templates)} templates, {len(policy.queues.redirect)} redirect queues")

    @profile_app.command("show")
    def show(profile: Annotated[str, typer.Argument(help="A shipped profile name or a folder.")]) -> None:
        """List a profile's labels by group with counts. Example: issuetriage profile show pytorch"""
        Console().print(labels_table(load_profile(profile)))

    @profile_app.command("import")
    def import_(
        labels: Annotated[Optional[list[Path]], typer.Option("--labels", help="A labels JSON file; repeat for several.")] = None,
        out: Annotated[Optional[Path], typer.Option("--out", help="The new profile folder (must not exist).")] = None,
        templates: Annotated[Optional[list[Path]], typer.Option("--templates", help="A templates JSON file; repeatable.")] = None,
        base: Annotated[str, typer.Option("--base", help="Profile that supplies every other file.")] = "pytorch",
    ) -> None:
        """Build a profile from PyTorch-format skill files.
        Example: issuetriage profile import --labels labels.json --templates templates.json --out myprofile"""
        if out is None:
            raise UserError("give the new profile folder with --out")
        policy = import_profile(labels or [], templates or [], out, base)
        typer.echo(f"ok: wrote {out}: {len(policy.labels)} labels, {len(policy.templates)} templates")

    app.add_typer(profile_app, name="profile")
