"""Engine commands: plan, demo, run, audit and store import."""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Optional

import typer

from issuetriage.cli.options import Format, FormatOpt, IssueFileOpt, JudgeOpt, ModelOpt, ProfileOpt, StoreOpt, emit
from issuetriage.cli.render import plan_text, plans_table, why
from issuetriage.policy import load_profile
from issuetriage.policy.discover import profile_for

if TYPE_CHECKING:  # the engine, the store and rich load inside the commands: `--help` needs none
    from rich.console import Console

    from issuetriage.models import Plan
    from issuetriage.store.sqlite import Store

SAMPLES = Path(__file__).resolve().parent.parent / "samples" / "demo_issues.jsonl"
DEMO_REPO = "pytorch/pytorch"  # every sample issue's repository


def plan_file(source: str, profile: str | None, fmt: Format, judge_name: str, model: Path | None) -> int:
    """Plan every issue in a file or stdin (`-`), each with its repository's profile; validates
    all input (and finds every profile) before printing a plan. One issue prints one plan
    (indented JSON); several print one plan per line."""
    from issuetriage.engine.pipeline import triage_with
    from issuetriage.judges.factory import get_judge
    from issuetriage.records import read_issues

    issues = read_issues(source)
    chosen = {repo: profile_for(profile, repo) for repo in dict.fromkeys(i.repo for i in issues)}
    judges = {name: (load_profile(name), get_judge(judge_name, model, profile=name))
              for name in dict.fromkeys(chosen.values())}
    many = len(issues) != 1 or str(source).endswith(".jsonl")
    for issue in issues:
        policy, judge = judges[chosen[issue.repo]]
        plan = triage_with(issue, policy, judge).plan
        if fmt is Format.json:
            sys.stdout.write(json.dumps(plan.to_json(), indent=None if many else 2) + "\n")
        else:
            sys.stdout.write(plan_text(plan) + "\n")
    return len(issues)


@dataclass
class RunReport:
    """What `run` decided per issue, and which issues it left alone and why."""

    applied: bool
    shadow: bool = False
    plans: list[Plan] = field(default_factory=list)
    skipped: list[tuple[str, str]] = field(default_factory=list)

    def to_json(self) -> dict:
        return {"applied": self.applied and not self.shadow, "shadow": self.shadow, "writes_to": "local store only",
                "decided": [{"issue": f"{p.repo}#{p.number}", "decision": p.decision.value,
                             "labels": list(p.labels_added), "templates": list(p.templates),
                             "close": p.close, "why": why(p)} for p in self.plans],
                "skipped": [{"issue": ref, "why": reason} for ref, reason in self.skipped]}

    def text(self) -> str:
        lines = [f"{p.repo}#{p.number}\t{p.decision.value}\t{', '.join(p.labels_added) or '-'}\t{why(p)}"
                 for p in self.plans]
        lines += [f"{ref}\tskipped\t{reason}" for ref, reason in self.skipped]
        counts: dict[str, int] = {}
        for p in self.plans:
            counts[p.decision.value] = counts.get(p.decision.value, 0) + 1
        summary = ", ".join(f"{k}: {v}" for k, v in sorted(counts.items(), key=lambda kv: -kv[1]))
        done = ("shadow (recorded for review)" if self.shadow else "applied" if self.applied
                else "planned (dry run)")
        lines.append(f"{done} {len(self.plans)} issue(s): {summary or 'nothing to do'}; skipped "
                     f"{len(self.skipped)}"
                     + ("; wrote to the local store only, not to GitHub" if self.applied and not self.shadow else ""))
        return "\n".join(lines)


def run_store(store: Store, profile: str | None, apply: bool, judge_name: str, model: Path | None,
              repo: str | None, console: Console, shadow: bool = False) -> RunReport:
    """`issuetriage run`: every untriaged issue of `repo` (default: the one the store holds) in the store,
    through the one flow (`act/store_run.py`), with a progress bar on a terminal."""
    from rich.progress import Progress

    from issuetriage.act.hold import Mode
    from issuetriage.act.store_run import triage_store
    from issuetriage.judges.factory import get_judge
    from issuetriage.store.corpus import store_repo

    repo = repo or store_repo(store)
    policy = load_profile(profile_for(profile, repo))
    judge = get_judge(judge_name, model, profile=policy, store=store)
    mode = Mode(apply=apply, shadow=shadow)
    with Progress(console=console, transient=True) as progress:
        task = progress.add_task("triaging", total=None)
        run = triage_store(store, policy, judge, mode, repo, on_total=lambda n: progress.update(task, total=n),
                           on_issue=lambda issue: progress.advance(task))
    return RunReport(apply, mode.shadowed(policy), run.plans, run.skipped)


def audit_rows(store: Store, repo: str | None, number: int | None) -> list[dict]:
    """The audit log (oldest first): when, which judge, what was decided and why, what changed."""
    return [{"id": row["id"], "issue": f"{row['repo']}#{row['number']}", "recorded_at": row["recorded_at"],
             "judge": row["judge"], "decision": row["decision"], "applied": bool(row["applied"]),
             "effects": row["effects"], "trace": row["plan"].get("trace", []),
             "rejections": row["extra"].get("rejections", [])}
            for row in store.audit(repo, number)]


def audit_text(rows: list[dict]) -> str:
    lines = []
    for row in rows:
        state = "applied" if row["applied"] else "planned"
        lines.append(f"{row['recorded_at']}  {row['issue']}  {row['decision']} ({state}, judge {row['judge']})")
        lines += [f"  [{t['step']}] {t['outcome']}: {t['reason']}" for t in row["trace"]]
        lines += [f"  refused {r.get('item')}: {r.get('reason')}" for r in row["rejections"]]
    return "\n".join(lines) or "no audit rows"


def demo(console: Console, profile: str | None = None) -> list:
    """Seed an in-memory store with our sample issues (of pytorch/pytorch), triage and apply
    through the one flow, and show the table."""
    from issuetriage.act.flow import engine
    from issuetriage.act.hold import Mode
    from issuetriage.act.store_run import triage_each
    from issuetriage.store.sqlite import Store

    policy = load_profile(profile_for(profile, DEMO_REPO))
    with Store(":memory:") as store:
        store.import_jsonl(SAMPLES)
        reports = triage_each(store, policy, store.issues(), engine(), Mode(apply=True))
        rows = [(f"#{r.before.number} {r.before.title[:48]}", r.plan) for r in reports if r.plan is not None]
        console.print(plans_table(rows, f"issuetriage demo: {len(rows)} sample issues, "
                                        f"profile {policy.name}, offline heuristic judge"))
        second = sum(1 for _ in store.untriaged(policy))
        console.print(f"audit rows: {store.count('audit')}; issues left untriaged after applying: {second}")
    return rows


def register(app: typer.Typer) -> None:
    """Attach this module's commands to the main app."""

    @app.command("plan")
    def plan_cmd(
        issue: IssueFileOpt,
        profile: ProfileOpt = None,
        fmt: FormatOpt = Format.json,
        judge: JudgeOpt = "auto",
        model: ModelOpt = None,
    ) -> None:
        """Print the guarded plan for issues in a file or stdin. Example: gh issue view 42 --json number,title,body,author,labels,comments,state,url | issuetriage plan --issue -"""
        plan_file(issue, profile, fmt, judge, model)

    @app.command("demo")
    def demo_cmd(profile: ProfileOpt = None, fmt: FormatOpt = Format.text) -> None:
        """Run the whole engine offline on ~20 sample issues. Example: issuetriage demo"""
        from rich.console import Console

        console = Console(width=None if sys.stdout.isatty() else 160,
                          stderr=fmt is Format.json, quiet=fmt is Format.json)
        rows = demo(console, profile)
        if fmt is Format.json:
            emit(fmt, [plan.to_json() for _, plan in rows], "")

    @app.command("run")
    def run_cmd(
        store: StoreOpt,
        apply: Annotated[bool, typer.Option("--apply", help="Apply plans to the issues in the local "
                                                             "store (never to GitHub).")] = False,
        profile: ProfileOpt = None,
        judge: JudgeOpt = "auto",
        model: ModelOpt = None,
        repo: Annotated[Optional[str], typer.Option("--repo")] = None,
        shadow: Annotated[bool, typer.Option("--shadow", help="Record plans for review; write nothing.")] = False,
        fmt: FormatOpt = Format.text,
    ) -> None:
        """Triage every untriaged issue in the local store. Example: issuetriage run --store t.db --apply"""
        from rich.console import Console

        from issuetriage.store.sqlite import Store

        console = Console(stderr=True)
        with Store(store, create=False) as db:
            report = run_store(db, profile, apply, judge, model, repo, console, shadow)
        emit(fmt, report.to_json(), report.text())

    @app.command("audit")
    def audit_cmd(
        store: StoreOpt,
        issue: Annotated[Optional[int], typer.Option("--issue", min=1, help="Only this issue number.")] = None,
        repo: Annotated[Optional[str], typer.Option("--repo", help="Only this OWNER/NAME.")] = None,
        fmt: FormatOpt = Format.text,
    ) -> None:
        """Why did the bot do that? Print the audit log. Example: issuetriage audit --store t.db --issue 42"""
        from issuetriage.store.sqlite import Store

        with Store(store, create=False) as db:
            rows = audit_rows(db, repo, issue)
        emit(fmt, rows, audit_text(rows))

    store_app = typer.Typer(help="The local SQLite mirror.", no_args_is_help=True)

    @store_app.command("import")
    def store_import(
        file: Annotated[str, typer.Argument(help="JSONL of issue records (`-` reads stdin).")],
        store: StoreOpt = "issuetriage.db",
        repo: Annotated[Optional[str], typer.Option("--repo", help="OWNER/NAME for records without one.")] = None,
        fmt: FormatOpt = Format.text,
    ) -> None:
        """Import issues into the store (all or nothing). Example: issuetriage store import issues.jsonl --store t.db"""
        from issuetriage.records import read_issues_jsonl
        from issuetriage.store.sqlite import Store

        issues = read_issues_jsonl(file, repo)
        with Store(store) as db:  # after reading: a bad file creates no store
            count = db.put_issues(issues)
            total = db.count("issues")
        emit(fmt, {"imported": count, "store": db.path, "stored": total},
             f"imported {count} issue(s) into {db.path} ({total} stored)")

    app.add_typer(store_app, name="store")
