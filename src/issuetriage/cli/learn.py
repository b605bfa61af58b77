"""Learning commands: `train` a model from labelled history, `eval` triage quality on a corpus."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated, Optional

import typer

from issuetriage.cli.corpora import labelled_issues
from issuetriage.cli.options import STORE_ENV, Format, FormatOpt, ModelOpt, ProfileOpt, emit
from issuetriage.cli.progress import working
from issuetriage.policy import load_profile

CorpusOpt = Annotated[Optional[Path], typer.Option(
    "--corpus", help="Labelled issues: JSONL with their final labels, or a `gh issue list --json "
                     "number,title,body,labels,state` array.")]
SourceStoreOpt = Annotated[Optional[str], typer.Option(
    "--store", envvar=STORE_ENV, help="Without --corpus: the store's issues of the profile's repository "
                                      "(`issuetriage sync` fills it).")]
StrictOpt = Annotated[bool, typer.Option("--strict", help="Reject the corpus on its first bad line "
                                                          "instead of skipping bad lines.")]


PRIOR_VETO = 0.1  # TrainConfig's default; typer needs it before the learning stack is imported
PriorVetoOpt = Annotated[float, typer.Option(
    "--prior-veto", min=0.0, max=1.01,
    help="Keep the heuristic's confident labels unless the model's probability is below this "
         "(1.01: propose only labels past their learned thresholds).")]


def train_command(corpus_path: Path, profile: str, out: Path, target_precision: float,
                  strict: bool, prior_veto: float = PRIOR_VETO, shown: str | None = None) -> dict:
    """Train on a corpus and save the model; returns the manifest summary printed."""
    from issuetriage.judges.heuristic import HeuristicJudge
    from issuetriage.judges.learned.corpus import load_corpus
    from issuetriage.judges.learned.model import check_model_out, save_model
    from issuetriage.judges.learned.train import TrainConfig, train

    policy = load_profile(profile)
    check_model_out(out)  # before training, which can take a while
    corpus = load_corpus(corpus_path, policy, strict=strict)
    for problem in corpus.problems:
        typer.echo(f"warning: {shown or corpus_path}: skipped {problem}", err=True)
    with working(f"training on {len(corpus.examples)} issues"):
        model = train(corpus, policy, prior=HeuristicJudge(),
                      config=TrainConfig(target_precision=target_precision, prior_veto=prior_veto))
    save_model(model, out)
    fold = model.metrics["out_of_fold_micro"]
    return {"model": str(out), "profile": model.profile, "labels": len(model.labels),
            "labels_with_threshold": model.metrics["labels_with_threshold"],
            "issues": model.training["issues"], "labelled_issues": model.training["labelled_issues"],
            "skipped_lines": len(corpus.problems), "seconds": model.training["seconds"],
            "out_of_fold": {key: round(float(value), 4) for key, value in fold.items()},
            "suggested_implies": model.training["suggested_implies"]}


def train_text(summary: dict) -> str:
    """The training summary for people."""
    fold = summary["out_of_fold"]
    implies = summary["suggested_implies"]
    return "\n".join([
        f"wrote {summary['model']} (profile {summary['profile']}): {summary['labels']} labels, "
        f"{summary['labels_with_threshold']} with a threshold",
        f"trained on {summary['issues']} issues ({summary['labelled_issues']} labelled, "
        f"{summary['skipped_lines']} lines skipped) in {summary['seconds']} s",
        "out of fold (micro): " + ", ".join(f"{key} {value:.3f}" for key, value in fold.items()),
        "suggested implies (review, never applied): "
        + ("; ".join(f"{d['label']} -> {d['implies']} ({d['together']} of {d['of']})" for d in implies) or "none"),
    ])


def judge_ran(report: dict, neighbours: int) -> str:
    """The judge that decided, as eval's header and plot name it: the stacked one with
    --neighbours, not only the offline judge asked for."""
    ran = [name for name in report.get("judged_by", {}) if name]
    name = ran[0] if len(ran) == 1 else str(report["judge"])
    return f"{name} ({neighbours} neighbours)" if neighbours else name


def register(app: typer.Typer) -> None:
    """Attach `train` and `eval` to the main app."""

    @app.command("train")
    def train_cmd(
        out: Annotated[Path, typer.Option("--out", help="Model folder to write.")],
        corpus: CorpusOpt = None,
        store: SourceStoreOpt = None,
        profile: ProfileOpt = None,
        target_precision: Annotated[float, typer.Option(
            "--target-precision", min=0.5, max=1.0, help="Precision each label's threshold aims for.")] = 0.9,
        prior_veto: PriorVetoOpt = PRIOR_VETO,
        strict: StrictOpt = False,
        fmt: FormatOpt = Format.json,
    ) -> None:
        """Learn labels and routing from labelled history (one JSON line, or --format text). Example: issuetriage train --corpus issues.jsonl --out model/"""
        with labelled_issues(corpus, store, profile) as (path, chosen):
            summary = train_command(path, chosen, out, target_precision, strict, prior_veto,
                                    shown=str(corpus or store))
        if fmt is Format.json:
            sys.stdout.write(json.dumps(summary) + "\n")
        else:
            emit(fmt, summary, train_text(summary))

    @app.command("eval")
    def eval_cmd(
        corpus: CorpusOpt = None,
        store: SourceStoreOpt = None,
        profile: ProfileOpt = None,
        model: ModelOpt = None,
        judge: Annotated[str, typer.Option("--judge", help="heuristic, learned, llm or hybrid.")] = "heuristic",
        folds: Annotated[int, typer.Option("--folds", min=1, help="K-fold cross-validation (trains per fold).")] = 1,
        fmt: FormatOpt = Format.text,
        plot: Annotated[Optional[Path], typer.Option("--plot", help="Save the precision/coverage curve as PNG.")] = None,
        seed: Annotated[int, typer.Option("--seed", help="Fold shuffling seed.")] = 0,
        target_precision: Annotated[float, typer.Option(
            "--target-precision", min=0.5, max=1.0,
            help="With --folds and the learned judge: the precision per-fold thresholds aim for.")] = 0.9,
        prior_veto: PriorVetoOpt = PRIOR_VETO,
        strict: StrictOpt = False,
        neighbours: Annotated[int, typer.Option(
            "--neighbours", min=0, help="Stack the offline judge with the K most similar earlier "
                                        "labelled issues and a text model fitted on them (0: off).")] = 0,
        answers: Annotated[Optional[Path], typer.Option(
            "--answers", help="Replay recorded LLM answers (JSONL, docs/llm.md) for llm/hybrid.")] = None,
        prompt: Annotated[str, typer.Option("--prompt", help="LLM prompt style: catalog or shortlist.")] = "catalog",
        sample: Annotated[Optional[int], typer.Option(
            "--sample", min=1, help="Score a fixed random sample of N labelled issues (--seed); "
                                    "the rest is history and training data.")] = None,
        learn_answers: Annotated[Optional[Path], typer.Option(
            "--learn-answers", help="Recorded LLM answers the history stack learns from (training side only).")] = None,
        learn_corrections: Annotated[Optional[Path], typer.Option(
            "--learn-corrections", help="Corrections the history stack learns from (training side only).")] = None,
    ) -> None:
        """Replay labelled issues through the engine and score it. Example: issuetriage eval --corpus issues.jsonl --folds 5"""
        from issuetriage.evaluate.report import format_text
        from issuetriage.evaluate.run import EvalOptions, evaluate
        from issuetriage.judges.learned.train import TrainConfig

        with labelled_issues(corpus, store, profile) as (path, chosen), \
                working(f"evaluating the {judge} judge" + (f" over {folds} folds" if folds > 1 else "")):
            report = evaluate(path, chosen, judge, model, folds, seed, strict,
                              TrainConfig(target_precision=target_precision, prior_veto=prior_veto),
                              EvalOptions(neighbours, answers, prompt, sample, learn_answers, learn_corrections))
        report["corpus"] = str(corpus or store)
        report["judge"] = judge_ran(report, neighbours)
        for problem in report["skipped_lines"]:
            typer.echo(f"warning: {report['corpus']}: skipped {problem}", err=True)
        for note in report["notes"]:
            typer.echo(f"note: {note}", err=True)
        if plot is not None:
            from issuetriage.evaluate.plot import save_curve

            save_curve(report, plot)
        emit(fmt, report, format_text(report))
