"""History as evidence, stacked: the base judge, a text classifier and the vote of the most
similar earlier issues, combined by a classifier fitted on the history itself.

Every candidate label of an issue (one the base judge scores, one a near neighbour carries, or
one of the text classifier's best) gets a probability from a logistic regression over: the base
judge's confidence, the text classifier's score and rank (one-vs-rest ridge over the learned
judge's TF-IDF features), the similarity-weighted and plain share of the `k` (and the 20) most
similar earlier issues that carry it, the best similarity among them, and how common the label
is. It is fitted on the labelled history as it would have been seen at run time: each past issue
judged by the base judge, its text scores from a ridge that did not see it, its neighbours drawn
only from issues filed before it. The probability cut with the best label F1 on the history
(cross-validated inside it) is mapped onto the profile's label gate. The base judge still answers
everything else (kind, repro, transfer, escalation). Offline, no download (evidence/history.py).
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from issuetriage.evidence.history import History, Precedent
from issuetriage.evidence.signals import Signals, extract_signals
from issuetriage.judges.base import Judge, Judgment, LabelScore
from issuetriage.judges.learned.features import FeatureConfig, fit_vocabulary, issue_tokens
from issuetriage.judges.learned.train import TrainConfig, fit_linear, out_of_fold_scores
from issuetriage.models import Issue
from issuetriage.policy import Policy

WIDE = 20  # neighbours read for the wide vote
MIN_HISTORY = 30  # fewer labelled issues than this: the base judge alone
TOP_TEXT = 5  # the text classifier's best labels are candidates too
_NO_SCORE = -1.5  # the text score of a label too rare to have a classifier


def vote(near: tuple[Precedent, ...], label: str) -> tuple[float, float, float, float]:
    """Similarity-weighted share, plain share, best similarity and 1/rank of the first carrier."""
    carriers = [(i, p) for i, p in enumerate(near) if label in p.labels]
    if not carriers:
        return 0.0, 0.0, 0.0, 0.0
    total = sum(p.similarity for p in near)
    return (sum(p.similarity for _, p in carriers) / total, len(carriers) / len(near),
            carriers[0][1].similarity, 1.0 / (carriers[0][0] + 1))


@dataclass(frozen=True)
class TextModel:
    """One-vs-rest ridge over the learned judge's TF-IDF features, fitted on the history."""

    vocab: Any
    labels: tuple[str, ...]
    coef: np.ndarray
    intercept: np.ndarray

    def scores(self, signals: Signals) -> dict[str, float]:

        x = self.vocab.matrix([issue_tokens(signals, FeatureConfig())])
        return dict(zip(self.labels, (x @ self.coef + self.intercept).ravel().tolist()))


def text_model(signals: list[Signals], golds: tuple[tuple[str, ...], ...],
               counts: Counter[str]) -> tuple[TextModel, list[dict[str, float]]]:
    """The text model fitted on every history issue, and each issue's scores from a model that
    did not see it (the learned judge's features, ridge and inner folds: learned/train.py)."""

    config = TrainConfig()
    docs = [issue_tokens(s, config.features) for s in signals]
    vocab = fit_vocabulary(docs, config.features)
    x = vocab.matrix(docs)
    labels = tuple(sorted(n for n, c in counts.items() if c >= config.min_examples))
    y = np.array([[name in gold for name in labels] for gold in golds],
                 dtype=np.int8).reshape(len(golds), len(labels))
    oof = out_of_fold_scores(x, y, config)
    coef, intercept = fit_linear(x, y, config.alpha)
    return (TextModel(vocab, labels, coef, intercept),
            [dict(zip(labels, row.tolist())) for row in oof])


@dataclass(frozen=True)
class Stack:
    """What the fit learned: the classifier, its cut, the label shares and the text model."""

    model: Any
    cut: float
    share: dict[str, float]
    text: TextModel


@dataclass
class NeighbourVote:
    """A base judge, stacked with a text classifier and the `k` most similar earlier issues."""

    base: Judge
    history: History
    k: int = 5
    _stacks: dict[str, Stack | None] = field(default_factory=dict, init=False, repr=False)

    @property
    def name(self) -> str:
        return f"{self.base.name}+history"

    def rows(self, issue: Issue, judgment: Judgment, policy: Policy, share: dict[str, float],
             text: dict[str, float]) -> tuple[list[str], list[list[float]]]:
        """The candidate labels of one issue and their features."""
        near = self.history.similar(issue, max(self.k, WIDE))
        ranked = sorted(text, key=lambda n: (-text[n], n))
        rank = {n: i for i, n in enumerate(ranked)}
        names = sorted(({s.name for s in judgment.labels} | {x for p in near for x in p.labels}
                        | set(ranked[:TOP_TEXT])) & set(policy.nameable_labels))
        top = near[0].similarity if near else 0.0
        return names, [[judgment.score(name), text.get(name, _NO_SCORE),
                        1.0 / (rank.get(name, 99) + 1), *vote(near[:self.k], name),
                        *vote(near, name)[:2], top, math.log(share.get(name, 0.0) + 1e-3),
                        float(policy.is_oncall(name)), float(policy.is_area(name)),
                        float(len(near))] for name in names]

    def stack(self, policy: Policy) -> Stack | None:
        """Fit the stack on the history once per profile (None: too little history)."""
        if policy.name not in self._stacks:
            self._stacks[policy.name] = (self._fit(policy) if len(self.history) >= MIN_HISTORY
                                         else None)
        return self._stacks[policy.name]

    def _fit(self, policy: Policy) -> Stack:
        from sklearn.model_selection import GroupKFold

        golds = self.history.labels
        counts = Counter(name for gold in golds for name in gold)
        share = {name: n / len(golds) for name, n in counts.items()}
        signals = [extract_signals(issue) for issue in self.history.issues]
        text, held_text = text_model(signals, golds, counts)
        xs: list[list[float]] = []
        ys: list[bool] = []
        groups: list[int] = []
        uncovered = 0
        for g, (issue, gold) in enumerate(zip(self.history.issues, golds)):
            names, rows = self.rows(issue, self.base.judge(issue, signals[g], policy), policy,
                                    share, held_text[g])
            xs += rows
            ys += [name in gold for name in names]
            groups += [g] * len(names)
            uncovered += len(set(gold) - set(names))
        x, y = np.array(xs), np.array(ys)
        held = np.zeros(len(y))
        for fit_rows, test_rows in GroupKFold(n_splits=3).split(x, y, np.array(groups)):
            held[test_rows] = _classifier().fit(x[fit_rows], y[fit_rows]).predict_proba(
                x[test_rows])[:, 1]
        return Stack(_classifier().fit(x, y), best_cut(held, y, uncovered), share, text)

    def judge(self, issue: Issue, signals: Signals, policy: Policy) -> Judgment:
        judgment = self.base.judge(issue, signals, policy)
        stack = self.stack(policy)
        if stack is None:
            return judgment
        names, rows = self.rows(issue, judgment, policy, stack.share, stack.text.scores(signals))
        gate = policy.meta.thresholds.label
        probs = stack.model.predict_proba(np.array(rows))[:, 1] if rows else []
        reasons = {s.name: s.reason for s in judgment.labels}
        scores = [s for s in judgment.labels if s.name not in policy.nameable_labels]
        for name, p, row in zip(names, probs, rows):
            why = (f"{row[4]:.0%} of the {self.k} most similar earlier issues carry it"
                   if row[4] else "")
            scores.append(LabelScore(
                name=name, confidence=round(rescale(float(p), stack.cut, gate), 4),
                reason="; ".join(r for r in (reasons.get(name, ""), why) if r)))
        labels = tuple(sorted(scores, key=lambda s: (-s.confidence, s.name)))
        return judgment.model_copy(update={"labels": labels, "judge": self.name})


def _classifier() -> Any:
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    return make_pipeline(StandardScaler(), LogisticRegression(C=1.0, max_iter=1000))


def rescale(p: float, cut: float, gate: float) -> float:
    """Monotone map of a probability onto [0, 1] that sends `cut` to `gate`."""
    if p < cut:
        return gate * p / cut
    return gate + (1.0 - gate) * (p - cut) / (1.0 - cut)


def best_cut(probs: np.ndarray, truth: np.ndarray, uncovered: int) -> float:
    """The probability cut with the best micro F1 over the candidates; `uncovered` gold labels
    are ones no candidate covers (they count as misses at every cut)."""
    positives = int(truth.sum()) + uncovered
    best, cut = -1.0, 0.5
    for t in np.round(np.arange(0.1, 0.8, 0.02), 2):
        chosen = probs >= t
        f1 = 2 * int((chosen & truth).sum()) / (int(chosen.sum()) + positives) if positives else 0.0
        if f1 > best:
            best, cut = f1, float(t)
    return cut
