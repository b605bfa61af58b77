"""`issuetriage eval` as a library call: load, replay (or cross-validate), report."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from issuetriage.errors import UserError
from issuetriage.evaluate.replay import cross_validate, learned_factory, replay
from issuetriage.evaluate.report import build_report
from issuetriage.judges.factory import get_judge
from issuetriage.judges.learned.corpus import load_corpus
from issuetriage.judges.learned.train import TrainConfig
from issuetriage.policy import load_profile


def evaluate(corpus_path: str | Path, profile: str = "pytorch", judge: str = "heuristic",
             model_dir: str | Path | None = None, folds: int = 1, seed: int = 0,
             strict: bool = False, config: TrainConfig = TrainConfig()) -> dict[str, Any]:
    """Replay a corpus through the engine and score it (docs/evaluation.md).

    With `folds` > 1 and the learned judge, each fold trains its own model on the other folds;
    other judges do not learn, so folds only group their results.
    """
    if folds < 1:
        raise UserError("--folds must be at least 1")
    if model_dir is not None and judge == "heuristic":
        judge = "learned"
    if folds > 1 and judge == "learned" and model_dir is not None:
        raise UserError("--folds trains a model per fold: leave out --model")
    if folds == 1 and judge == "learned" and model_dir is None:
        raise UserError("the learned judge needs --model MODEL_DIR, or --folds K to train per fold")
    policy = load_profile(profile)
    corpus = load_corpus(corpus_path, policy, strict=strict)
    if folds > len(corpus.examples):
        raise UserError(f"--folds {folds} is more than the {len(corpus.examples)} usable issues")
    notes: list[str] = []
    if judge == "learned" and folds > 1:
        base = get_judge("heuristic")
        results = cross_validate(corpus, policy, learned_factory(policy, base, config), folds, seed)
    else:
        built = get_judge(judge, model_dir, profile=profile)
        model = getattr(built, "model", None)
        if model is not None and getattr(model, "corpus_sha256", None) == corpus.sha256:
            notes.append("the model was trained on this corpus: these numbers are optimistic")
        if model is not None and model.profile != policy.name:
            raise UserError(f"model was trained for profile {model.profile!r}, not {policy.name!r}")
        results = (cross_validate(corpus, policy, lambda _: built, folds, seed) if folds > 1
                   else replay(corpus.examples, policy, built))
    report = build_report(results, judge, str(corpus_path), folds,
                          skipped=[str(p) for p in corpus.problems])
    report["notes"] = notes
    return report
