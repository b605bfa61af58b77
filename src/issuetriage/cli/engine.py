"""Engine commands: plan, demo, store import and run."""

from __future__ import annotations

import json
import sys
from collections import Counter
from enum import StrEnum
from pathlib import Path
from typing import Annotated, Optional

import typer
from rich.console import Console
from rich.progress import Progress

from issuetriage.engine.pipeline import triage_with
from issuetriage.errors import UserError
from issuetriage.judges.factory import get_judge
from issuetriage.policy import load_profile
from issuetriage.cli.render import plan_text, plans_table
from issuetriage.store.sqlite import Store, issue_from_record, parse_issue_record, read_issues_jsonl
from issuetriage.cli.options import JudgeOpt, ModelOpt, ProfileOpt

SAMPLES = Path(__file__).resolve().parent.parent / "samples" / "demo_issues.jsonl"


class Format(StrEnum):
    json = "json"
    text = "text"




def _emit(plan_json: dict, text: str, fmt: Format) -> None:
    sys.stdout.write((json.dumps(plan_json) if fmt is Format.json else text) + "\n")


def plan_file(path: Path, profile: str, fmt: Format, judge_name: str, model: Path | None) -> int:
    """Plan one `.json` issue or every line of a `.jsonl` file; validates all input first."""
    policy = load_profile(profile)
    judge = get_judge(judge_name, model, profile=profile)
    if not path.is_file():
        raise UserError(f"{path}: no such file")
    if path.suffix == ".jsonl":
        try:
            with path.open(encoding="utf-8") as fh:
                for lineno, line in enumerate(fh, 1):
                    if line.strip():
                        parse_issue_record(line, f"{path}:{lineno}")
        except (OSError, UnicodeDecodeError) as exc:
            raise UserError(f"{path}: cannot read ({exc})") from None
        count = 0
        with path.open(encoding="utf-8") as fh:
            for lineno, line in enumerate(fh, 1):
                if line.strip():
                    plan = triage_with(parse_issue_record(line, f"{path}:{lineno}"), policy, judge).plan
                    _emit(plan.to_json(), plan_text(plan), fmt)
                    count += 1
        return count
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise UserError(f"{path}: malformed JSON ({exc.msg} at line {exc.lineno})") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise UserError(f"{path}: cannot read ({exc})") from None
    plan = triage_with(issue_from_record(data, str(path)), policy, judge).plan
    out = plan.to_json()
    sys.stdout.write((json.dumps(out, indent=2) if fmt is Format.json else plan_text(plan)) + "\n")
    return 1


def run_store(store: Store, profile: str, apply: bool, judge_name: str, model: Path | None,
              repo: str | None, console: Console, shadow: bool = False) -> Counter[str]:
    """Triage every untriaged issue of `repo` (default: the profile's) in the store through the
    one flow, auditing each plan and applying when asked; `shadow` records plans for review
    without writing them, and a plan with a demoted label waits for review. A profile is one
    repository's policy: other repos are left alone."""
    from issuetriage.act.flow import act, engine
    from issuetriage.live.demotion import holder
    from issuetriage.store.applier import StoreApplier

    policy = load_profile(profile)
    decider = engine(get_judge(judge_name, model, profile=profile))
    applier = StoreApplier(store)
    todo = store.untriaged(policy, repo or policy.meta.repo)
    decisions: Counter[str] = Counter()
    with Progress(console=console, transient=True) as progress:
        task = progress.add_task("triaging", total=len(todo))
        for issue in todo:
            report = act(applier, issue.repo, issue.number, policy, decider, apply=apply, audit=store,
                         hold=holder(store, policy, shadow))
            decisions[report.plan.decision.value if report.plan else "skipped"] += 1
            progress.advance(task)
    return decisions


def demo(console: Console, profile: str = "pytorch") -> list:
    """Seed an in-memory store with our sample issues, triage and apply through the one flow, and
    show the table."""
    from issuetriage.act.flow import act, engine
    from issuetriage.store.applier import StoreApplier

    policy = load_profile(profile)
    rows = []
    with Store(":memory:") as store:
        store.import_jsonl(SAMPLES)
        applier, decider = StoreApplier(store), engine()
        for issue in list(store.issues()):
            report = act(applier, issue.repo, issue.number, policy, decider, apply=True, audit=store)
            assert report.plan is not None
            rows.append((f"#{issue.number} {issue.title[:48]}", report.plan))
        console.print(plans_table(rows, f"issuetriage demo: {len(rows)} sample issues, "
                                        f"profile {policy.name}, offline heuristic judge"))
        second = sum(1 for _ in store.untriaged(policy))
        console.print(f"audit rows: {store.count('audit')}; issues left untriaged after applying: {second}")
    return rows


def register(app: typer.Typer) -> None:
    """Attach this module's commands to the main app."""

    @app.command("plan")
    def plan_cmd(
        issue: Annotated[Path, typer.Option("--issue", help="One issue (.json) or many (.jsonl).")],
        profile: ProfileOpt = "pytorch",
        fmt: Annotated[Format, typer.Option("--format")] = Format.json,
        judge: JudgeOpt = "auto",
        model: ModelOpt = None,
    ) -> None:
        """Print the guarded plan for issues in a file. Example: issuetriage plan --issue 42.json"""
        plan_file(issue, profile, fmt, judge, model)

    @app.command("demo")
    def demo_cmd(profile: ProfileOpt = "pytorch") -> None:
        """Run the whole engine offline on ~20 sample issues. Example: issuetriage demo"""
        demo(Console(width=None if sys.stdout.isatty() else 160), profile)

    @app.command("run")
    def run_cmd(
        store: Annotated[Path, typer.Option("--store", help="SQLite store made by `store import`/`sync`.")],
        apply: Annotated[bool, typer.Option("--apply", help="Apply plans to the stored issues.")] = False,
        profile: ProfileOpt = "pytorch",
        judge: JudgeOpt = "auto",
        model: ModelOpt = None,
        repo: Annotated[Optional[str], typer.Option("--repo")] = None,
        shadow: Annotated[bool, typer.Option("--shadow", help="Record plans for review; write nothing.")] = False,
    ) -> None:
        """Triage every untriaged issue in the store. Example: issuetriage run --store t.db --apply"""
        console = Console(stderr=True)
        with Store(store, create=False) as db:
            decisions = run_store(db, profile, apply, judge, model, repo, console, shadow)
        total = sum(decisions.values())
        summary = ", ".join(f"{k}: {v}" for k, v in decisions.most_common()) or "nothing to do"
        shadow = shadow or load_profile(profile).meta.live.shadow
        done = "shadow (recorded for review)" if shadow else "applied" if apply else "planned (dry run)"
        typer.echo(f"{done} {total} issue(s): {summary}")

    store_app = typer.Typer(help="The local SQLite mirror.", no_args_is_help=True)

    @store_app.command("import")
    def store_import(
        file: Annotated[Path, typer.Argument(help="JSONL of issue records.")],
        store: Annotated[Path, typer.Option("--store")] = Path("issuetriage.db"),
        repo: Annotated[Optional[str], typer.Option("--repo", help="OWNER/NAME for records without one.")] = None,
    ) -> None:
        """Import issues into the store (all or nothing). Example: issuetriage store import issues.jsonl --store t.db"""
        issues = read_issues_jsonl(file, repo)  # before the store file may be created
        with Store(store) as db:
            count = db.put_issues(issues)
            typer.echo(f"imported {count} issue(s) into {store} ({db.count('issues')} stored)")

    app.add_typer(store_app, name="store")
