"""The decision tree: every step, in order, in one visible list."""

from __future__ import annotations

from issuetriage.engine.tree.base import Context, Draft, Outcome, Step
from issuetriage.engine.tree.finish import escalate, mark_bot_triaged, mark_triaged, release_triage
from issuetriage.engine.tree.general import general_queue
from issuetriage.engine.tree.pt2 import compile_issue
from issuetriage.engine.tree.reproduction import downloaded_files, missing_reproduction, numerical_edge_case
from issuetriage.engine.tree.routing import already_routed, secondary_queue, sibling_repo, usage_question
from issuetriage.evidence.signals import Signals
from issuetriage.judges.base import Judgment
from issuetriage.models import Decision, Issue, Plan, TraceStep
from issuetriage.policy import Policy

# (number, name, function). Content steps stop at the first Outcome with stop=True.
CONTENT_STEPS: tuple[tuple[str, str, Step], ...] = (
    ("0", "already_routed", already_routed),
    ("1", "usage_question", usage_question),
    ("1.5", "downloaded_files", downloaded_files),
    ("1.55", "missing_reproduction", missing_reproduction),
    ("1.6", "numerical_edge_case", numerical_edge_case),
    ("2", "sibling_repo", sibling_repo),
    ("2.5", "compile_issue", compile_issue),
    ("3", "secondary_queue", secondary_queue),
    ("4", "general_queue", general_queue),
)
# Finishing steps always run after the content steps (each decides whether it applies).
FINISH_STEPS: tuple[tuple[str, str, Step], ...] = (
    ("5a", "escalate", escalate),
    ("5b", "release_triage", release_triage),
    ("6", "mark_bot_triaged", mark_bot_triaged),
    ("7", "mark_triaged", mark_triaged),
)


def propose(issue: Issue, signals: Signals, judgment: Judgment, policy: Policy) -> Plan:
    """Run the tree and return the proposed (unguarded) plan with its trace."""
    ctx = Context(issue, signals, judgment, policy)
    draft, trace = Draft(), []
    for number, name, step in CONTENT_STEPS:
        outcome = step(ctx, draft)
        if outcome is not None:
            routing_only = draft.routing_only
            draft.add(outcome)
            trace.append(_trace(number, name, outcome, routing_only))
            if draft.stopped:
                break
    draft.routing_only = False  # the finishing steps see the whole draft
    if draft.decision is not Decision.SKIP_ALREADY_ROUTED:
        for number, name, step in FINISH_STEPS:
            outcome = step(ctx, draft)
            if outcome is not None:
                draft.add(outcome)
                trace.append(_trace(number, name, outcome))
    return Plan(
        repo=issue.repo,
        number=issue.number,
        decision=draft.decision or Decision.TRIAGE_REVIEW,
        labels_added=tuple(draft.labels),
        templates=tuple(draft.templates),
        close=draft.close,
        body_edit=draft.body_edit,
        transfer_repo=draft.transfer_repo,
        trace=tuple(trace),
    )


def _trace(number: str, name: str, outcome: Outcome, routing_only: bool = False) -> TraceStep:
    if routing_only:  # after a reproduction request only the step's labels were taken
        return TraceStep(step=f"{number} {name}",
                         outcome="+" + ", ".join(outcome.labels) if outcome.labels else "noted",
                         reason=f"{outcome.reason} (its labels only: the reproduction request stands)")
    decided = outcome.decision.value if outcome.decision else "+" + ", ".join(
        outcome.labels + outcome.templates) if (outcome.labels or outcome.templates) else "noted"
    return TraceStep(step=f"{number} {name}", outcome=decided, reason=outcome.reason)


__all__ = ["CONTENT_STEPS", "FINISH_STEPS", "Context", "Draft", "Outcome", "propose"]
