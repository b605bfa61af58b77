"""Profile commands: create a profile for any repository, check it, show its catalog, import
PyTorch's skill files."""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Optional

import typer

from issuetriage.cli.options import Format, FormatOpt, emit
from issuetriage.errors import UserError
from issuetriage.policy import PROFILES_DIR, load_profile

if TYPE_CHECKING:  # the policy models and rich load inside the commands
    from rich.table import Table

    from issuetriage.policy import LabelSpec, Policy

GROUPS = ("area", "queue", "topic", "other")


def grouped(policy: Policy) -> dict[str, list[LabelSpec]]:
    """Catalog labels by family (the profile's `families`): area, queue, topic, other."""
    groups: dict[str, list[LabelSpec]] = defaultdict(list)
    for spec in policy.catalog.label:
        groups[policy.group_of(spec.name)].append(spec)
    return {g: groups[g] for g in GROUPS if groups[g]}


def labels_table(policy: Policy) -> Table:
    """One rich table of the catalog, a section per group with its count."""
    from rich.table import Table

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
    """Attach `profile check`, `show`, `init` and `import` to the main app."""
    profile_app = typer.Typer(help="Create, inspect, validate and import policy profiles.", no_args_is_help=True)

    @profile_app.command("check")
    def check(profile: Annotated[str, typer.Argument(help="A shipped profile name or a folder.")],
              fmt: FormatOpt = Format.text) -> None:
        """Validate a profile and list every problem at once. Example: issuetriage profile check ./myprofile"""
        from issuetriage.policy import profile_problems

        path = Path(profile) if Path(profile).is_dir() else PROFILES_DIR / profile
        if not path.is_dir():
            load_profile(profile)  # the one "unknown profile" message
        problems = profile_problems(path)
        if problems:
            emit(fmt, {"ok": False, "problems": problems}, "\n".join(f"error: {p}" for p in problems))
            raise typer.Exit(2)
        policy = load_profile(path)
        emit(fmt, {"ok": True, "profile": policy.name, "labels": len(policy.labels),
                   "templates": len(policy.templates), "redirect_queues": len(policy.queues.redirect)},
             f"ok: profile {policy.name!r}: {len(policy.labels)} labels, "
             f"{len(policy.templates)} templates, {len(policy.queues.redirect)} redirect queues")

    @profile_app.command("show")
    def show(profile: Annotated[str, typer.Argument(help="A shipped profile name or a folder.")],
             fmt: FormatOpt = Format.text) -> None:
        """List a profile's labels by family with counts. Example: issuetriage profile show pytorch"""
        policy = load_profile(profile)
        if fmt is Format.json:
            emit(fmt, {group: [spec.model_dump(mode="json") for spec in specs]
                       for group, specs in grouped(policy).items()}, "")
        else:
            from rich.console import Console

            Console().print(labels_table(policy))

    @profile_app.command("init")
    def init(
        out: Annotated[Path, typer.Argument(help="The new profile folder (must not exist).")],
        repo: Annotated[str, typer.Option("--repo", help="OWNER/NAME the profile is for.")],
        labels: Annotated[Optional[Path], typer.Option(
            "--labels", help="`gh label list --json name,description` output, or REST label objects.")] = None,
        name: Annotated[Optional[str], typer.Option("--name", help="Profile name (default: the folder's).")] = None,
        project: Annotated[Optional[str], typer.Option(
            "--project", help="How comments name the project (default: the repository's name).")] = None,
        fmt: FormatOpt = Format.text,
    ) -> None:
        """Create a working profile for any repository from its labels.
        Example: gh label list --json name,description > labels.json && issuetriage profile init myprofile --repo OWNER/NAME --labels labels.json"""
        from issuetriage.policy.init import init_profile

        policy = init_profile(out, repo, labels, name, project)
        families = policy.meta.families
        emit(fmt, {"profile": str(out), "name": policy.name, "repo": policy.meta.repo,
                   "labels": len(policy.labels), "area": list(families.area), "queue": list(families.queue),
                   "type_labels": list(policy.meta.type_labels)},
             f"ok: wrote {out} for {policy.meta.repo}: {len(policy.labels)} labels; "
             f"area families {list(families.area) or '(none: every content label)'}, "
             f"queue families {list(families.queue) or '(none)'}, "
             f"type labels {list(policy.meta.type_labels) or '(none)'}")

    @profile_app.command("import")
    def import_(
        labels: Annotated[Optional[list[Path]], typer.Option("--labels", help="A labels JSON file; repeat for several.")] = None,
        out: Annotated[Optional[Path], typer.Option("--out", help="The new profile folder (must not exist).")] = None,
        templates: Annotated[Optional[list[Path]], typer.Option("--templates", help="A templates JSON file; repeatable.")] = None,
        base: Annotated[str, typer.Option("--base", help="Profile that supplies every other file.")] = "pytorch",
        fmt: FormatOpt = Format.text,
    ) -> None:
        """Build a profile from PyTorch-format skill files on top of a base profile (for a new
        repository, use `profile init`).
        Example: issuetriage profile import --labels labels.json --templates templates.json --out myprofile"""
        from issuetriage.policy.importer import import_profile

        if out is None:
            raise UserError("give the new profile folder with --out")
        policy = import_profile(labels or [], templates or [], out, base)
        emit(fmt, {"profile": str(out), "labels": len(policy.labels), "templates": len(policy.templates)},
             f"ok: wrote {out}: {len(policy.labels)} labels, {len(policy.templates)} templates")

    app.add_typer(profile_app, name="profile")
