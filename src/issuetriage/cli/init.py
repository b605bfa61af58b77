"""`issuetriage init OWNER/REPO`: onboard a repository from its checkout, up to shadow mode."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from issuetriage.cli.options import Format, FormatOpt, StoreOpt, emit
from issuetriage.cli.progress import steps, working

SUGGEST_BELOW = 0.8  # out-of-fold precision under which a label is only suggested, never applied
MIN_SUPPORT = 5  # fewer labelled issues than this: too few to tell, suggested only


def per_label(evaluation: dict[str, Any]) -> list[dict[str, Any]]:
    """Each label's out-of-fold precision and recall, busiest first, and whether it would only be
    suggested (precision under SUGGEST_BELOW, or under MIN_SUPPORT labelled issues)."""
    rows = []
    for name, prf in evaluation["labels"]["per_label"].items():
        support = prf["tp"] + prf["fn"]
        rows.append({"label": name, "precision": prf["precision"], "recall": prf["recall"], "issues": support,
                     "suggest_only": support < MIN_SUPPORT or prf["precision"] < SUGGEST_BELOW})
    return sorted(rows, key=lambda r: (-r["issues"], r["label"]))


def summary_text(data: dict[str, Any]) -> str:
    micro = data["out_of_fold"]["micro"]
    lines = [f"profile: {data['profile']} ({'written' if data['profile_written'] else 'kept, already there'}; "
             f"{data['labels']} labels, shadow mode on)",
             f"synced {data['repo']} into {data['store']}: {data['synced_issues']} issue(s) this run, "
             f"{data['api_calls']} API call(s)",
             f"history: {data['labelled']} labelled issue(s) in {data['history']}",
             f"out of fold ({data['out_of_fold']['folds']} folds, judge {data['out_of_fold']['judge']}): "
             f"P {micro['precision']:.3f}  R {micro['recall']:.3f}  F1 {micro['f1']:.3f}",
             f"  {'label':<32} {'P':>6} {'R':>6} {'issues':>7}"]
    lines += [f"  {r['label']:<32} {r['precision']:>6.3f} {r['recall']:>6.3f} {r['issues']:>7}"
              + ("  suggest only" if r["suggest_only"] else "") for r in data["per_label"]]
    lines.append(f"suggest only (precision under {SUGGEST_BELOW} or under {MIN_SUPPORT} issues): "
                 + (", ".join(data["suggest_only"]) or "none"))
    lines.append(f"next, shadow mode (plans recorded for review, nothing written to GitHub): {data['next']}")
    return "\n".join(lines)


def register(app: typer.Typer) -> None:
    """Attach `init` to the main app."""

    @app.command("init")
    def init_cmd(
        repo: Annotated[str, typer.Argument(help="OWNER/REPO, from the root of its checkout.")],
        store: StoreOpt = "issuetriage.db",
        history: Annotated[Path, typer.Option("--history", help="The history folder to build.")] = Path(".issuetriage/history"),
        folds: Annotated[int, typer.Option("--folds", min=2, help="Folds of the out-of-fold evaluation.")] = 5,
        neighbours: Annotated[int, typer.Option(
            "--neighbours", min=0, help="Stack the offline judge with the K most similar earlier issues (0: off).")] = 5,
        fmt: FormatOpt = Format.text,
    ) -> None:
        """Onboard a repository: profile from its labels into .github/issuetriage/, sync, history, out-of-fold figures; resumable. Example: issuetriage init acme/widgets"""
        from issuetriage.act.onboard import evaluate_history, onboard
        from issuetriage.cli.github import _client, check_repo
        from issuetriage.cli.learn import judge_ran

        check_repo(repo)
        client = _client(repo)
        with steps() as progress:
            done, policy = onboard(client, repo, Path.cwd(), store, history, progress)
        with working(f"scoring the offline judge out of fold ({folds} folds)"):
            evaluation = evaluate_history(store, policy, folds, neighbours)
        rows = per_label(evaluation)
        data = {"repo": repo, "profile": str(done.profile), "profile_written": done.profile_written,
                "labels": done.labels, "store": store, "synced_issues": done.synced.issues if done.synced else 0,
                "api_calls": len(client.calls), "labelled": done.labelled, "history": str(history),
                "out_of_fold": {"folds": folds, "judge": judge_ran(evaluation, neighbours if folds > 1 else 0),
                                "micro": evaluation["labels"]["micro"]},
                "per_label": rows, "suggest_only": [r["label"] for r in rows if r["suggest_only"]],
                "next": f"GITHUB_WEBHOOK_SECRET=... issuetriage serve --store {store} --repo {repo}"}
        emit(fmt, data, summary_text(data))
