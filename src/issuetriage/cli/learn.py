"""Learning commands: `train` a model from labelled history, `eval` triage quality on a corpus."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import typer

from issuetriage.cli.options import Format, FormatOpt, ModelOpt, ProfileOpt, emit
from issuetriage.policy import load_profile

CorpusOpt = Annotated[Path, typer.Option("--corpus", help="JSONL issues with their final labels.")]
StrictOpt = Annotated[bool, typer.Option("--strict", help="Reject the corpus on its first bad line "
                                                          "instead of skipping bad lines.")]


PRIOR_VETO = 0.1  # TrainConfig's default; typer needs it before the learning stack is imported
PriorVetoOpt = Annotated[float, typer.Option(
    "--prior-veto", min=0.0, max=1.01,
    help="Keep the heuristic's confident labels unless the model's probability is below this "
         "(1.01: propose only labels past their learned thresholds).")]


def train_command(corpus_path: Path, profile: str, out: Path, target_precision: float,
                  strict: bool, prior_veto: float = PRIOR_VETO) -> dict:
    """Train on a corpus and save the model; returns the manifest summary printed."""
    from issuetriage.judges.heuristic import HeuristicJudge
    from issuetriage.judges.learned.corpus import load_corpus
    from issuetriage.judges.learned.model import check_model_out, save_model
    from issuetriage.judges.learned.train import TrainConfig, train

    policy = load_profile(profile)
    check_model_out(out)  # before training, which can take a while
    corpus = load_corpus(corpus_path, policy, strict=strict)
    for problem in corpus.problems:
        typer.echo(f"warning: {corpus_path}: skipped {problem}", err=True)
    model = train(corpus, policy, prior=HeuristicJudge(),
                  config=TrainConfig(target_precision=target_precision, prior_veto=prior_veto))
    save_model(model, out)
    return {"model": str(out), "profile": model.profile, "labels": len(model.labels),
            "labels_with_threshold": model.metrics["labels_with_threshold"],
            "issues": model.training["issues"], "labelled_issues": model.training["labelled_issues"],
            "skipped_lines": len(corpus.problems), "seconds": model.training["seconds"],
            "out_of_fold": model.metrics["out_of_fold_micro"],
            "suggested_implies": model.training["suggested_implies"]}


def register(app: typer.Typer) -> None:
    """Attach `train` and `eval` to the main app."""

    @app.command("train")
    def train_cmd(
        corpus: CorpusOpt,
        out: Annotated[Path, typer.Option("--out", help="Model folder to write.")],
        profile: ProfileOpt = "pytorch",
        target_precision: Annotated[float, typer.Option(
            "--target-precision", min=0.5, max=1.0, help="Precision each label's threshold aims for.")] = 0.9,
        prior_veto: PriorVetoOpt = PRIOR_VETO,
        strict: StrictOpt = False,
        fmt: FormatOpt = Format.json,
    ) -> None:
        """Learn labels and routing from labelled history. Example: issuetriage train --corpus issues.jsonl --out model/"""
        summary = train_command(corpus, profile, out, target_precision, strict, prior_veto)
        emit(fmt, summary, "\n".join(f"{key}: {value}" for key, value in summary.items()))

    @app.command("eval")
    def eval_cmd(
        corpus: CorpusOpt,
        profile: ProfileOpt = "pytorch",
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

        report = evaluate(corpus, profile, judge, model, folds, seed, strict,
                          TrainConfig(target_precision=target_precision, prior_veto=prior_veto),
                          EvalOptions(neighbours, answers, prompt, sample, learn_answers, learn_corrections))
        for problem in report["skipped_lines"]:
            typer.echo(f"warning: {corpus}: skipped {problem}", err=True)
        for note in report["notes"]:
            typer.echo(f"note: {note}", err=True)
        if plot is not None:
            from issuetriage.evaluate.plot import save_curve

            save_curve(report, plot)
        emit(fmt, report, format_text(report))
