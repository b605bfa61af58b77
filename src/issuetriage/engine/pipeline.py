"""The pipeline for one issue: signals → judge → decision tree → guard. No I/O."""

from __future__ import annotations

from dataclasses import dataclass

from issuetriage.engine.decided import Decided
from issuetriage.engine.guard import GuardResult, Rejection, guard
from issuetriage.engine.tree import propose
from issuetriage.evidence.signals import extract_signals
from issuetriage.judges.base import Judge, Judgment
from issuetriage.judges.heuristic import HeuristicJudge
from issuetriage.models import Issue, Plan
from issuetriage.policy import Policy

DEFAULT_JUDGE = HeuristicJudge()


@dataclass(frozen=True)
class Outcome:
    """A guarded plan with the judgment behind it and what the guard refused."""

    plan: Plan
    judgment: Judgment
    proposed: Plan
    rejections: tuple[Rejection, ...]
    blocked_everything: bool


def decide(issue: Issue, policy: Policy, judge: Judge | None = None) -> Decided:
    """Signals → judge → decision tree: the engine's proposal for one issue."""
    signals = extract_signals(issue)
    judgment = (judge or DEFAULT_JUDGE).judge(issue, signals, policy)
    return Decided(propose(issue, signals, judgment, policy), judgment, judgment.judge)


def triage_with(issue: Issue, policy: Policy, judge: Judge | None = None) -> Outcome:
    """Run the whole engine on one issue and keep every intermediate result."""
    decided = decide(issue, policy, judge)
    assert decided.judgment is not None
    result: GuardResult = guard(decided.proposed, issue, policy)
    plan = result.plan.model_copy(update={"judge": decided.judge})
    return Outcome(plan, decided.judgment, decided.proposed, result.rejections, result.blocked_everything)


def triage(issue: Issue, policy: Policy, judge: Judge | None = None) -> Plan:
    """The guarded plan for one issue."""
    return triage_with(issue, policy, judge).plan
