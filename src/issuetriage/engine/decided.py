"""What a decider hands the one flow: a proposed plan before the guard, and who proposed it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from issuetriage.engine.guard import Rejection
from issuetriage.models import Plan

if TYPE_CHECKING:
    from issuetriage.judges.base import Judgment


@dataclass(frozen=True)
class Decided:
    """A proposed (not yet guarded) plan, the judgment behind it, who decided, and what was
    refused before the guard (an agent's uncorroborated close, say)."""

    proposed: Plan
    judgment: Judgment | None
    judge: str
    refused: tuple[Rejection, ...] = ()
