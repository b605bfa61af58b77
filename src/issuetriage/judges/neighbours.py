"""History as evidence, stacked: the base judge, a text classifier and the vote of the most
similar earlier issues, combined by a classifier fitted on the history itself.

Every candidate label of an issue (one the base judge scores, one a near neighbour carries or was
taught, or one of the text classifier's best) gets a probability from a logistic regression over: the base
judge's confidence, the text classifier's score and rank (one-vs-rest ridge over the learned
judge's TF-IDF features), the similarity-weighted and plain share of the `k` (and the 20) most
similar earlier issues that carry it, the best similarity among them, how common the label
is, and the weighted share of them that were taught it apart from their maintainers' labels (a
model's recorded answers, humans' corrections: `judges/taught.py`). The probability cut with the best label F1 on the history (cross-validated inside it) is
mapped onto the profile's label gate. The base judge still answers everything else (kind, repro,
transfer, escalation). How the parts are fitted, honestly and within a bounded sample:
`judges/stacking.py`; how they are stored (arrays and JSON, no pickle): `judges/history_folder.py`.
Applying them needs numpy only.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from issuetriage.evidence.history import History, Precedent
from issuetriage.evidence.signals import Signals
from issuetriage.judges.base import Judge, Judgment, LabelScore
from issuetriage.judges.learned.features import FeatureConfig, Vocabulary, issue_tokens
from issuetriage.models import Issue
from issuetriage.policy import Policy

if TYPE_CHECKING:
    from issuetriage.judges.taught import Taught

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


def taught_vote(near: tuple[Precedent, ...], label: str, taught: Mapping[int, Taught]
                ) -> tuple[float, float]:
    """Weighted shares of the nearest issues taught `label`: by similarity, and plain."""
    if not near:
        return 0.0, 0.0
    carriers = [(p.similarity, t.weight) for p in near
                if (t := taught.get(p.number)) is not None and label in t.labels]
    total = sum(p.similarity for p in near) or 1.0
    return sum(s * w for s, w in carriers) / total, sum(w for _, w in carriers) / len(near)


@dataclass(frozen=True)
class TextModel:
    """One-vs-rest ridge over the learned judge's TF-IDF features, fitted on the history."""

    vocab: Vocabulary
    labels: tuple[str, ...]
    coef: np.ndarray  # features × labels
    intercept: np.ndarray

    def scores(self, signals: Signals) -> dict[str, float]:
        cols, values = self.vocab.vector(issue_tokens(signals, FeatureConfig()))
        raw = values.astype(np.float64) @ self.coef[cols] + self.intercept
        return dict(zip(self.labels, np.asarray(raw, dtype=np.float64).ravel().tolist()))


@dataclass(frozen=True)
class Stack:
    """What the fit learned: the classifier (standardised logistic regression, as arrays), its
    cut, the label shares and the text model."""

    mean: np.ndarray
    scale: np.ndarray
    weights: np.ndarray
    bias: float
    cut: float
    share: dict[str, float]
    text: TextModel
    taught: Mapping[int, Taught] = field(default_factory=dict)  # evidence beside the maintainers' labels

    def probabilities(self, rows: list[list[float]]) -> np.ndarray:
        z = ((np.array(rows, dtype=np.float64) - self.mean) / self.scale) @ self.weights + self.bias
        return 1.0 / (1.0 + np.exp(-z))


def candidate_rows(history: History, k: int, issue: Issue, judgment: Judgment, policy: Policy,
                   share: dict[str, float], text: dict[str, float], taught: Mapping[int, Taught]
                   ) -> tuple[list[str], list[list[float]]]:
    """The candidate labels of one issue and their features (the fit and the judge share it)."""
    near = history.similar(issue, max(k, WIDE))
    ranked = sorted(text, key=lambda n: (-text[n], n))
    rank = {n: i for i, n in enumerate(ranked)}
    taught_near = {x for p in near if (t := taught.get(p.number)) is not None for x in t.labels}
    names = sorted(({s.name for s in judgment.labels} | {x for p in near for x in p.labels} | taught_near
                    | set(ranked[:TOP_TEXT])) & set(policy.nameable_labels))
    top = near[0].similarity if near else 0.0
    return names, [[judgment.score(name), text.get(name, _NO_SCORE),
                    1.0 / (rank.get(name, 99) + 1), *vote(near[:k], name),
                    *vote(near, name)[:2], top, math.log(share.get(name, 0.0) + 1e-3),
                    float(policy.is_oncall(name)), float(policy.is_area(name)),
                    float(len(near)), taught_vote(near[:k], name, taught)[0],
                    taught_vote(near, name, taught)[1]] for name in names]


@dataclass(frozen=True)
class NeighbourVote:
    """A base judge, stacked with a text classifier and the `k` most similar earlier issues;
    without a stack (too little history) the base judge alone."""

    base: Judge
    history: History
    stack: Stack | None
    k: int = 5

    @property
    def name(self) -> str:
        return f"{self.base.name}+history"

    def probability(self, confidence: float, policy: Policy) -> float:
        """The stack's calibrated probability behind one of its label confidences (`rescale`'s
        inverse); the base judge's confidence itself without a stack."""
        if self.stack is None:
            return confidence
        return unscale(confidence, self.stack.cut, policy.meta.thresholds.label)

    def judge(self, issue: Issue, signals: Signals, policy: Policy) -> Judgment:
        judgment = self.base.judge(issue, signals, policy)
        stack = self.stack
        if stack is None:
            return judgment
        names, rows = candidate_rows(self.history, self.k, issue, judgment, policy, stack.share,
                                     stack.text.scores(signals), stack.taught)
        gate = policy.meta.thresholds.label
        probs = stack.probabilities(rows) if rows else np.zeros(0)
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


def rescale(p: float, cut: float, gate: float) -> float:
    """Monotone map of a probability onto [0, 1] that sends `cut` to `gate`."""
    if p < cut:
        return gate * p / cut
    return gate + (1.0 - gate) * (p - cut) / (1.0 - cut)


def unscale(confidence: float, cut: float, gate: float) -> float:
    """`rescale`'s inverse: the probability a confidence stands for."""
    if confidence < gate:
        return confidence * cut / gate
    return cut + (confidence - gate) * (1.0 - cut) / (1.0 - gate)


def best_cut(probs: np.ndarray, truth: np.ndarray, uncovered: float) -> float:
    """The probability cut with the best micro F1 over the candidates; `truth` is each
    candidate's target (1 or 0; a taught label's weight in between), `uncovered` the targets no
    candidate covers (misses at every cut)."""
    truth = truth.astype(np.float64)
    positives = float(truth.sum()) + uncovered
    best, cut = -1.0, 0.5
    for t in np.round(np.arange(0.1, 0.8, 0.02), 2):
        chosen = probs >= t
        f1 = 2 * float(truth[chosen].sum()) / (int(chosen.sum()) + positives) if positives else 0.0
        if f1 > best:
            best, cut = f1, float(t)
    return cut
