"""Replay a corpus through the engine (judge → tree → guard) with every label hidden."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from issuetriage.engine.pipeline import triage_with
from issuetriage.evaluate.scoring import IssueResult, score_issue
from issuetriage.judges.base import Judge
from issuetriage.judges.learned.corpus import Corpus, Example
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
        results.append(score_issue(example, outcome.plan, confidences, policy, fold))
    return results


def fold_indices(n: int, folds: int, seed: int = 0) -> list[np.ndarray]:
    """Shuffled, near-equal held-out index sets that cover 0..n-1 once."""
    order = np.random.default_rng(seed).permutation(n)
    return [np.sort(part) for part in np.array_split(order, folds)]


def cross_validate(corpus: Corpus, policy: Policy, make_judge: Callable[[Corpus], Judge],
                   folds: int, seed: int = 0) -> list[IssueResult]:
    """K-fold: build a judge on K-1 folds (training when it learns), replay the held-out fold."""
    results: list[IssueResult] = []
    n = len(corpus.examples)
    for k, held in enumerate(fold_indices(n, folds, seed)):
        held_set = set(held.tolist())
        judge = make_judge(corpus.subset(i for i in range(n) if i not in held_set))
        results += replay([corpus.examples[i] for i in held], policy, judge, fold=k)
    return results


def learned_factory(policy: Policy, base: Judge | None, config: TrainConfig = TrainConfig()
                    ) -> Callable[[Corpus], Judge]:
    """Train-per-fold factory for `cross_validate`."""
    from issuetriage.judges.learned.judge import LearnedJudge

    def make(train_corpus: Corpus) -> Judge:
        return LearnedJudge(train(train_corpus, policy, prior=base, config=config), base)

    return make
