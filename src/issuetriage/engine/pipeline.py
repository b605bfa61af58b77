"""The pipeline for one issue: signals → judge → decision tree → guard. No I/O."""

from __future__ import annotations

from dataclasses import dataclass

from issuetriage.engine.guard import GuardResult, Rejection, guard
from issuetriage.judges.heuristic import HeuristicJudge
from issuetriage.judges.base import Judge, Judgment
from issuetriage.models import Issue, Plan
from issuetriage.policy import Policy
from issuetriage.evidence.signals import extract_signals
from issuetriage.engine.tree import propose

DEFAULT_JUDGE = HeuristicJudge()


@dataclass(frozen=True)
class Outcome:
    """A guarded plan with the judgment behind it and what the guard refused."""

    plan: Plan
    judgment: Judgment
    proposed: Plan
    rejections: tuple[Rejection, ...]
    blocked_everything: bool


def triage_with(issue: Issue, policy: Policy, judge: Judge | None = None) -> Outcome:
    """Run the whole engine on one issue and keep every intermediate result."""
    signals = extract_signals(issue)
    judgment = (judge or DEFAULT_JUDGE).judge(issue, signals, policy)
    proposed = propose(issue, signals, judgment, policy)
    result: GuardResult = guard(proposed, issue, policy)
    plan = result.plan.model_copy(update={"judge": judgment.judge})
    return Outcome(plan, judgment, proposed, result.rejections, result.blocked_everything)


def triage(issue: Issue, policy: Policy, judge: Judge | None = None) -> Plan:
    """The guarded plan for one issue."""
    return triage_with(issue, policy, judge).plan
