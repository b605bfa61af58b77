"""`issuetriage eval` as a library call: load, replay (or cross-validate), report."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from issuetriage.errors import ConfigError, UserError
from issuetriage.evaluate.replay import cross_validate, learned_factory
from issuetriage.evaluate.report import build_report
from issuetriage.evaluate.scoring import IssueResult
from issuetriage.evidence.history_index import memory_history
from issuetriage.judges.base import Judge
from issuetriage.judges.factory import get_judge
from issuetriage.judges.learned.corpus import Corpus, load_corpus, past_of
from issuetriage.judges.learned.train import TrainConfig
from issuetriage.judges.llm import make_judge
from issuetriage.judges.llm.config import LLMConfig, load_config
from issuetriage.judges.stacking import stacked
from issuetriage.judges.taught import Teaching, evidence, restricted
from issuetriage.policy import Policy, load_profile


@dataclass(frozen=True)
class EvalOptions:
    """What `eval` adds to a judge: history (k neighbours, 0 = none), recorded LLM answers and
    the prompt style, a fixed scored sample instead of the whole corpus, and evidence the
    offline judge learns from beside the maintainers' labels (recorded answers, corrections)."""

    neighbours: int = 0
    answers: Path | None = None
    prompt: str = "catalog"
    sample: int | None = None
    learn_answers: Path | None = None
    learn_corrections: Path | None = None


def teaching(options: EvalOptions, policy: Policy) -> Teaching:
    """The evidence `--learn-answers` and `--learn-corrections` name (corrections win)."""
    return evidence(policy, options.learn_answers, options.learn_corrections)


def split_teaching(taught: Teaching, train_corpus: Corpus) -> Teaching:
    """The evidence a split's judge may learn from: about its training side only, so an issue's
    own answer never teaches the judge that scores it."""
    return restricted(taught, (e.issue.number for e in train_corpus.examples))


def judge_factory(judge: str, policy: Policy, model_dir: str | Path | None, profile: str,
                  config: TrainConfig, options: EvalOptions,
                  learns: bool) -> Callable[[Corpus], Judge]:
    """Build the judge for one split from its training side: a model trained on it (when the
    judge learns), and history drawn only from it."""
    offline_name = "learned" if judge == "learned" or model_dir is not None else "heuristic"
    # env={}: a history in the environment must never reach a replay (it would see the future)
    train_learned = learned_factory(policy, get_judge("heuristic", env={}), config) if learns else None
    loaded = get_judge(offline_name, model_dir, profile=profile, env={}) if not learns else None
    taught = teaching(options, policy)

    def make(train_corpus: Corpus) -> Judge:
        offline: Judge | None = train_learned(train_corpus) if train_learned else loaded
        assert offline is not None
        past = past_of(train_corpus.examples, policy.meta.repo)
        history = memory_history(policy.meta.repo, past)
        if options.neighbours:
            offline = stacked(offline, history, past, policy, options.neighbours,
                              split_teaching(taught, train_corpus))
        if judge not in ("llm", "hybrid"):
            return offline

        llm_config = (LLMConfig(provider="replay", model="replay", answers=options.answers)
                      if options.answers else load_config(policy.root))
        if llm_config is None:
            raise ConfigError("no LLM configured: set ISSUETRIAGE_LLM_MODEL (and the provider's key)")
        return make_judge(llm_config, policy, offline, mode=judge, history=history,  # type: ignore[arg-type]
                          style=options.prompt)

    return make


def evaluate(corpus_path: str | Path, profile: str = "pytorch", judge: str = "heuristic",
             model_dir: str | Path | None = None, folds: int = 1, seed: int = 0,
             strict: bool = False, config: TrainConfig = TrainConfig(),
             options: EvalOptions = EvalOptions()) -> dict[str, Any]:
    """Replay a corpus through the engine and score it (docs/evaluation.md).

    With `folds` > 1 each fold builds its judge from the other folds (a model trained there
    when the judge learns, history drawn only from there); `options.sample` scores a fixed
    random sample of labelled issues instead, with the rest as the training side.
    """
    if model_dir is not None and judge == "heuristic":
        judge = "learned"
    corpus, results, notes = replay_corpus(corpus_path, profile, judge, model_dir, folds, seed,
                                           strict, config, options)
    report = build_report(results, judge, str(corpus_path), folds,
                          skipped=[str(p) for p in corpus.problems])
    report["notes"] = notes
    return report


def replay_corpus(corpus_path: str | Path, profile: str = "pytorch", judge: str = "heuristic",
                  model_dir: str | Path | None = None, folds: int = 1, seed: int = 0,
                  strict: bool = False, config: TrainConfig = TrainConfig(),
                  options: EvalOptions = EvalOptions()
                  ) -> tuple[Corpus, list[IssueResult], list[str]]:
    """The corpus, one scored result per replayed issue, and notes on how far to trust them."""
    if folds < 1:
        raise UserError("--folds must be at least 1")
    if model_dir is not None and judge == "heuristic":
        judge = "learned"
    split = folds > 1 or options.sample is not None
    if split and judge == "learned" and model_dir is not None:
        raise UserError("--folds and --sample train a model per split: leave out --model")
    if not split and judge == "learned" and model_dir is None:
        raise UserError("the learned judge needs --model MODEL_DIR, or --folds K to train per fold")
    if options.neighbours and not split:
        raise UserError("--neighbours fits its vote on the training side: use --folds K or --sample N")
    if options.answers is not None and judge not in ("llm", "hybrid"):
        raise UserError("--answers replays recorded LLM answers: use --judge llm or hybrid")
    if (options.learn_answers or options.learn_corrections) and not options.neighbours:
        raise UserError("--learn-answers and --learn-corrections teach the history stack: add --neighbours K")
    policy = load_profile(profile)
    corpus = load_corpus(corpus_path, policy, strict=strict)
    if folds > len(corpus.examples):
        raise UserError(f"--folds {folds} is more than the {len(corpus.examples)} usable issues")
    notes: list[str] = []
    if model_dir is not None:
        model = get_judge("learned", model_dir, profile=profile, env={}).model  # type: ignore[attr-defined]
        if model.profile != policy.name:
            raise UserError(f"model was trained for profile {model.profile!r}, not {policy.name!r}")
        if model.corpus_sha256 == corpus.sha256:
            notes.append("the model was trained on this corpus: these numbers are optimistic")
    learns = judge == "learned" and model_dir is None
    make = judge_factory(judge, policy, model_dir, profile, config, options, learns)
    return corpus, cross_validate(corpus, policy, make, folds, seed, options.sample), notes
