"""The judgment interface: the few fuzzy questions the decision tree asks a judge.

Judges (heuristic, learned, LLM, hybrid) answer them from the issue and its signals; the tree
decides what to do with the answers and the guard decides what may be written.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict, Field

from issuetriage.evidence.signals import Signals
from issuetriage.models import Issue
from issuetriage.policy import Policy


class Kind(StrEnum):
    """What the issue is."""

    QUESTION = "question"
    BUG = "bug"
    FEATURE = "feature"
    EXPECTED_BEHAVIOR = "expected_behavior"
    UNCLEAR = "unclear"


# The kinds whose reading lets the bot close. A bug closes only as `fixed_in_release`, and only on
# scrub's own evidence (engine/guard, scrub/close), never on a judge's reading.
CLOSING_KINDS = frozenset({Kind.QUESTION, Kind.EXPECTED_BEHAVIOR})

class MissingRepro(StrEnum):
    """Why the issue cannot be reproduced from what it contains."""

    DOWNLOAD = "download"
    HARDWARE = "hardware"
    PRIVATE_MODEL = "private_model"
    VAGUE_UPGRADE = "vague_upgrade"
    INFRASTRUCTURE = "infrastructure"


class LabelScore(BaseModel):
    """One proposed label with the judge's confidence and a one-line reason."""

    model_config = ConfigDict(frozen=True)

    name: str
    confidence: float = Field(ge=0.0, le=1.0)
    reason: str = ""


class Judgment(BaseModel):
    """A judge's answers for one issue. Labels cover module/topic/other and oncall routing."""

    model_config = ConfigDict(frozen=True)

    judge: str
    kind: Kind
    kind_confidence: float = Field(ge=0.0, le=1.0)
    labels: tuple[LabelScore, ...] = ()
    transfer_repo: str | None = None
    transfer_confidence: float = 0.0
    missing_repro: MissingRepro | None = None
    high_priority: bool = False
    escalate_reasons: tuple[str, ...] = ()
    reasoning: str = ""
    # Accounting for the audit log (LLM judges fill these in).
    tokens_in: int = 0
    tokens_out: int = 0
    cost_usd: float = 0.0

    def confident(self, threshold: float) -> tuple[LabelScore, ...]:
        """Labels at or above `threshold`, best first (ties by name, so plans are deterministic)."""
        return tuple(sorted((s for s in self.labels if s.confidence >= threshold),
                            key=lambda s: (-s.confidence, s.name)))

    def score(self, name: str) -> float:
        """Confidence for one label (0 when not proposed)."""
        return max((s.confidence for s in self.labels if s.name == name), default=0.0)


@runtime_checkable
class Judge(Protocol):
    """Anything that answers the tree's questions for one issue."""

    name: str

    def judge(self, issue: Issue, signals: Signals, policy: Policy) -> Judgment:
        """Answer for one issue. Never raises for odd issue text; may raise for outages."""
        ...
