"""History as a vote: the labels of the most similar earlier issues, merged into a base judge's.

A label most of the k nearest labelled issues carry (similarity-weighted share at least
`agree`) is proposed, or the base judge's confidence in it rises; the base judge still answers
everything else (kind, repro, transfer, escalation). Offline, no download (evidence/history.py).
"""

from __future__ import annotations

from dataclasses import dataclass

from issuetriage.evidence.history import History
from issuetriage.evidence.signals import Signals
from issuetriage.judges.base import Judge, Judgment, LabelScore
from issuetriage.models import Issue
from issuetriage.policy import Policy


@dataclass
class NeighbourVote:
    """A base judge plus the vote of the `k` most similar earlier labelled issues."""

    base: Judge
    history: History
    # tuned by 5-fold on a fixed half of the dev corpus (docs/evaluation.md), the other half untouched
    k: int = 5
    agree: float = 0.4
    weight: float = 0.9

    @property
    def name(self) -> str:
        return f"{self.base.name}+history"

    def judge(self, issue: Issue, signals: Signals, policy: Policy) -> Judgment:
        judgment = self.base.judge(issue, signals, policy)
        votes = {label: share for label, share in self.history.vote(issue, self.k).items()
                 if share >= self.agree and label in policy.nameable_labels}
        if not votes:
            return judgment
        scores = {s.name: s for s in judgment.labels}
        for label, share in votes.items():
            prior = scores[label].confidence if label in scores else 0.0
            boosted = round(1.0 - (1.0 - prior) * (1.0 - self.weight * share), 4)
            reason = f"{share:.0%} of the {self.k} most similar earlier issues carry it"
            old = scores[label].reason + "; " if label in scores else ""
            scores[label] = LabelScore(name=label, confidence=boosted, reason=old + reason)
        labels = tuple(sorted(scores.values(), key=lambda s: (-s.confidence, s.name)))
        return judgment.model_copy(update={"labels": labels, "judge": self.name})
