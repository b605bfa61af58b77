"""Replay a corpus through the engine (judge → tree → guard) with every label hidden."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from issuetriage.engine.pipeline import triage_with
from issuetriage.evaluate.requests import sample_split
from issuetriage.evaluate.scoring import IssueResult, score_issue
from issuetriage.judges.base import Judge
from issuetriage.judges.learned.corpus import Corpus, Example
from issuetriage.judges.learned.judge import LearnedJudge
from issuetriage.judges.learned.train import TrainConfig, train
from issuetriage.policy import Policy


def replay(examples: Sequence[Example], policy: Policy, judge: Judge, fold: int = 0
           ) -> list[IssueResult]:
    """Triage each example's label-free issue and score the guarded plan."""
    results = []
    for example in examples:
        if example.issue.labels or example.issue.state != "open":
            raise ValueError(f"leakage guard: {example.issue.ref} is not as filed (labels/state)")
        outcome = triage_with(example.issue, policy, judge)
        gate = min(policy.meta.thresholds.label, policy.meta.thresholds.route)
        confidences = {s.name: s.confidence for s in outcome.judgment.confident(gate)}
        rejected = tuple(r.item for r in outcome.rejections if r.item not in policy.labels
                         and r.item in {s.name for s in outcome.judgment.labels})
        results.append(score_issue(example, outcome.plan, confidences, policy, fold, rejected))
    return results


def fold_indices(n: int, folds: int, seed: int = 0) -> list[np.ndarray]:
    """Shuffled, near-equal held-out index sets that cover 0..n-1 once."""
    order = np.random.default_rng(seed).permutation(n)
    return [np.sort(part) for part in np.array_split(order, folds)]


def splits(corpus: Corpus, folds: int, seed: int = 0, sample: int | None = None
           ) -> list[tuple[list[int], list[int]]]:
    """(training side, scored side) index pairs: one fixed sample of labelled issues against the
    rest, K folds each against the others, or (folds 1) the whole corpus on both sides, where
    history still reaches only issues filed earlier."""
    n = len(corpus.examples)
    if sample is not None:

        held, rest = sample_split(corpus, sample, seed)
        return [(rest, held)]
    if folds <= 1:
        return [(list(range(n)), list(range(n)))]
    out = []
    for fold in fold_indices(n, folds, seed):
        held_set = set(fold.tolist())
        out.append(([i for i in range(n) if i not in held_set], fold.tolist()))
    return out


def cross_validate(corpus: Corpus, policy: Policy, make_judge: Callable[[Corpus], Judge],
                   folds: int, seed: int = 0, sample: int | None = None) -> list[IssueResult]:
    """Build a judge on each split's training side (training when it learns), replay the
    scored side."""
    results: list[IssueResult] = []
    for k, (train_side, held) in enumerate(splits(corpus, folds, seed, sample)):
        judge = make_judge(corpus.subset(train_side))
        results += replay([corpus.examples[i] for i in held], policy, judge, fold=k)
    return results


def learned_factory(policy: Policy, base: Judge | None, config: TrainConfig = TrainConfig()
                    ) -> Callable[[Corpus], Judge]:
    """Train-per-fold factory for `cross_validate`."""

    def make(train_corpus: Corpus) -> Judge:
        return LearnedJudge(train(train_corpus, policy, prior=base, config=config), base)

    return make
