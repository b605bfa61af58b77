"""The learned judge: a trained model's calibrated label probabilities on top of a base judge.

The base (normally the offline HeuristicJudge) answers what the labelled history cannot teach
(kind, missing reproduction, transfer, escalation) and its label scores are the model's prior.
Labels whose probability reaches their held-out threshold are proposed with a confidence in the
upper half above the tree's gate. The base's own confident labels are kept in the lower half,
ordered by the model's probability, unless the model vetoes them (probability below the model's
`prior_veto`): the heuristic's recall, the model's precision. With keeping off (`prior_veto`
1.01) only learned labels are proposed, over the whole range above the gate, and with nothing
confident the tree abstains (`triage review`). Reasons keep the raw p. docs/learned-judge.md
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from issuetriage.errors import ModelError
from issuetriage.evidence.signals import Signals
from issuetriage.judges.base import Judge, Judgment, Kind, LabelScore
from issuetriage.judges.learned.model import LearnedModel, load_model
from issuetriage.judges.learned.thresholds import NEVER
from issuetriage.models import Issue
from issuetriage.policy import Policy

# Labels below their threshold are still reported from this probability on, scaled below the
# tree's gate, so a step that must pick one (the PT2 rubric) can rank them.
_HINT = 0.1


class LearnedJudge:
    """Judge protocol implementation backed by a `LearnedModel`."""

    name = "learned"

    def __init__(self, model: LearnedModel, base: Judge | None = None) -> None:
        self.model = model
        self.base = base

    @classmethod
    def from_dir(cls, model_dir: str | Path, policy: Policy, base: Judge | None = None
                 ) -> LearnedJudge:
        """Load the model made for `policy`'s profile (a ModelError otherwise)."""
        return cls(load_model(model_dir, profile=policy.name), base)

    def _scores(self, issue: Issue, signals: Signals, policy: Policy
                ) -> tuple[Judgment | None, np.ndarray]:
        base = self.base.judge(issue, signals, policy) if self.base else None
        prior = {s.name: s.confidence for s in base.labels} if base else {}
        return base, self.model.probabilities(signals, prior)

    def probabilities(self, issue: Issue, signals: Signals, policy: Policy
                      ) -> tuple[Judgment | None, dict[str, float]]:
        """The base judgment and the model's probability for every label it knows."""
        base, probs = self._scores(issue, signals, policy)
        return base, dict(zip(self.model.labels, probs.tolist()))

    def judge(self, issue: Issue, signals: Signals, policy: Policy) -> Judgment:
        """Labels above their learned thresholds, the base's labels the model does not veto;
        everything else from the base judge."""
        if policy.name != self.model.profile:
            raise ModelError(f"model was trained for profile {self.model.profile!r}, "
                             f"not {policy.name!r}")
        base, probs = self._scores(issue, signals, policy)
        labels, thresholds = self.model.labels, self.model.thresholds
        veto = self.model.prior_veto
        keeping = base is not None and veto < NEVER
        confident = {s.name for s in base.labels
                     if s.confidence >= _gate(s.name, policy)} if base and keeping else set()
        candidates = set(np.flatnonzero(probs >= np.minimum(thresholds, _HINT)).tolist())
        candidates |= {j for j in map(self.model.index, confident) if j is not None}
        scores = []
        for j in sorted(candidates):
            label, p, t = labels[j], float(probs[j]), float(thresholds[j])
            if label not in policy.labels:
                continue
            gate = _gate(label, policy)
            low, high = bands(gate, keeping)
            if p >= t:
                scores.append(LabelScore(
                    name=label, reason=f"learned: p={p:.2f} >= threshold {t:.2f}",
                    confidence=engine_confidence(p, t, high)))
            elif label in confident and p >= veto:
                scores.append(LabelScore(
                    name=label, reason=f"kept from {base.judge if base else 'the prior'}: p={p:.2f} >= veto {veto:.2f}",
                    confidence=round(low + (high - low) * min(p / t, 1.0) * 0.99, 4)))
            elif p >= min(t, _HINT):  # below the gate: the tree never acts on it, may rank by it
                scores.append(LabelScore(
                    name=label, reason=f"hint: p={p:.2f} < threshold {t:.2f}",
                    confidence=round(gate * min(p / t, 1.0) * 0.99, 4)))
        if base:
            scores += self._unknown(base, policy, keeping)
        scores.sort(key=lambda s: (-s.confidence, s.name))  # ties must not depend on hashing
        top = ", ".join(f"{labels[j]} {probs[j]:.2f}" for j in np.argsort(-probs)[:3].tolist())
        if base is None:
            return Judgment(judge=self.name, kind=Kind.UNCLEAR, kind_confidence=0.0,
                            labels=tuple(scores), reasoning=f"model top labels: {top}")
        kind, kind_confidence = _kind(base, scores, policy, self.model.question_threshold)
        return base.model_copy(update={
            "judge": self.name, "labels": tuple(scores), "kind": kind,
            "kind_confidence": kind_confidence,
            "reasoning": f"{base.reasoning} | model top labels: {top}".strip(" |"),
        })

    def _unknown(self, base: Judgment, policy: Policy, keeping: bool) -> list[LabelScore]:
        """The base's labels the model has no classifier for (too few examples): above the
        pooled prior threshold like learned labels; when keeping, any confident one below them."""
        known, fallback, out = set(self.model.labels), self.model.prior_threshold, []
        for s in base.labels:
            gate = _gate(s.name, policy)
            low, high = bands(gate, keeping)
            if s.name in known:
                continue
            if s.confidence >= fallback:
                out.append(s.model_copy(update={
                    "confidence": engine_confidence(s.confidence, fallback, high)}))
            elif keeping and s.confidence >= gate:
                share = (s.confidence - gate) / (1.0 - gate) if gate < 1.0 else 0.0
                out.append(s.model_copy(update={
                    "confidence": round(low + (high - low) * min(share, 1.0) * 0.99, 4),
                    "reason": f"kept from {base.judge} (no model for it): {s.reason}"}))
        return out


def _kind(base: Judgment, scores: list[LabelScore], policy: Policy, question_threshold: float
          ) -> tuple[Kind, float]:
    """The base judge's kind, overruled where the model knows better.

    A feature needs a learned type label (the tree adds one for every feature); a "question" the
    model can confidently route to a module or queue is a report, not a usage question to close;
    a question below the learned close threshold stays a question the tree will not close.
    """
    learned = [s for s in scores if s.reason.startswith("learned")]
    if base.kind is Kind.FEATURE and not any(s.name in policy.meta.type_labels for s in learned):
        return Kind.BUG, 0.5
    if base.kind is Kind.QUESTION and any(s.name not in policy.meta.type_labels for s in learned):
        return Kind.BUG, 0.5
    if base.kind is Kind.QUESTION:
        gate = policy.meta.thresholds.question_close
        if base.kind_confidence >= question_threshold:
            return Kind.QUESTION, engine_confidence(base.kind_confidence, question_threshold, gate)
        return Kind.QUESTION, round(min(base.kind_confidence, gate) * 0.99, 4)
    return base.kind, base.kind_confidence


def _gate(label: str, policy: Policy) -> float:
    """The confidence the decision tree asks of this label before it acts on it."""
    thresholds = policy.meta.thresholds
    return thresholds.route if policy.is_oncall(label) else thresholds.label


def bands(gate: float, keeping: bool) -> tuple[float, float]:
    """Confidence bands above the tree's gate: kept base labels in [low, high), labels past their
    learned thresholds in [high, 1]. Without keeping, learned labels use all of [gate, 1]."""
    return gate, (gate + (1.0 - gate) / 2 if keeping else gate)


def engine_confidence(p: float, threshold: float, gate: float) -> float:
    """Map [threshold, 1] linearly onto [gate, 1]: a label that passed its learned threshold
    passes the tree's gate too, and order between labels is kept."""
    if threshold >= 1.0:
        return round(min(p, 1.0), 4)
    scaled = gate + (min(p, 1.0) - threshold) / (1.0 - threshold) * (1.0 - gate)
    return round(min(max(scaled, gate), 1.0), 4)
