"""One live issue through the one flow: what `issuetriage triage OWNER/REPO#N` and a service
worker both run, so both reach the same state for the same issue and profile."""

from __future__ import annotations

from typing import Any

from issuetriage.act.applier import Applier
from issuetriage.act.flow import Report, act, engine
from issuetriage.act.hold import Mode
from issuetriage.judges.base import Judge
from issuetriage.policy import Policy
from issuetriage.store.sqlite import Store


def triage_issue(applier: Applier, repo: str, number: int, policy: Policy, judge: Judge | None,
                 store: Store | None, apply: bool, *, respect_marker: bool = True,
                 extra: dict[str, Any] | None = None) -> Report:
    """The engine's plan for `repo#number`, applied when `apply` (held in shadow mode or for a
    demoted label), audited in `store` when given."""
    return act(applier, repo, number, policy, engine(judge), Mode(apply=apply), audit=store,
               respect_marker=respect_marker, extra=extra)
