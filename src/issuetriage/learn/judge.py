"""The learned judge: a trained model's calibrated label probabilities on top of a base judge.

The base (normally the offline HeuristicJudge) answers what the labelled history cannot teach
(kind, missing reproduction, transfer, escalation) and its label scores are the model's prior.
The judge only proposes labels whose probability reaches that label's held-out threshold, so
below threshold nothing is proposed and the tree abstains (`triage review`).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from issuetriage.errors import ModelError
from issuetriage.judgment import Judge, Judgment, Kind, LabelScore
from issuetriage.learn.model import LearnedModel, load_model
from issuetriage.models import Issue
from issuetriage.policy import Policy
from issuetriage.signals import Signals


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

    def probabilities(self, issue: Issue, signals: Signals, policy: Policy
                      ) -> tuple[Judgment | None, dict[str, float]]:
        """The base judgment and the model's probability for every label it knows."""
        base = self.base.judge(issue, signals, policy) if self.base else None
        prior = {s.name: s.confidence for s in base.labels} if base else {}
        probs = self.model.probabilities(signals, prior)
        return base, dict(zip(self.model.labels, probs.tolist()))

    def judge(self, issue: Issue, signals: Signals, policy: Policy) -> Judgment:
        """Labels above their learned thresholds; everything else from the base judge."""
        if policy.name != self.model.profile:
            raise ModelError(f"model was trained for profile {self.model.profile!r}, "
                             f"not {policy.name!r}")
        base, probs = self.probabilities(issue, signals, policy)
        thresholds = self.model.thresholds
        scores = [
            LabelScore(name=label, confidence=round(min(p, 1.0), 4),
                       reason=f"learned: p={p:.2f} >= threshold {t:.2f}")
            for label, p, t in zip(self.model.labels, probs.values(), thresholds.tolist())
            if p >= t and label in policy.labels
        ]
        known = set(self.model.labels)
        if base:
            scores += [s for s in base.labels
                       if s.name not in known and s.confidence >= self.model.prior_threshold]
        scores.sort(key=lambda s: -s.confidence)
        top = ", ".join(f"{lab} {p:.2f}" for lab, p in
                        sorted(probs.items(), key=lambda kv: -kv[1])[:3])
        if base is None:
            return Judgment(judge=self.name, kind=Kind.UNCLEAR, kind_confidence=0.0,
                            labels=tuple(scores), reasoning=f"model top labels: {top}")
        return base.model_copy(update={
            "judge": self.name, "labels": tuple(scores),
            "reasoning": f"{base.reasoning} | model top labels: {top}".strip(" |"),
        })


def max_probability(probs: dict[str, float]) -> float:
    """The model's highest label probability (0 for an empty model)."""
    return float(np.max(list(probs.values()))) if probs else 0.0
