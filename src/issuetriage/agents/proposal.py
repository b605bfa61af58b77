"""One proposal rule for every agent path: what an agent asks for becomes a Plan here.

The hooks (an agent's own GitHub calls) and `issuetriage mcp` (`submit_plan`) both build their
plan through `build`, so both refuse the same things for the same reasons before the guard runs:
a close the offline judge does not read as a usage question or documented behaviour, a close as
fixed in a release (only scrub's own code path carries the evidence for one), a transfer
to a sibling repo the offline judge does not name, a template that does not go with the
decision (and so a refused close loses its closing comment too) or that the engine's own plan for
the issue (the decision tree over the offline judge) does not post.
"""

from __future__ import annotations

from dataclasses import dataclass

from issuetriage.engine.guard import Rejection
from issuetriage.evidence.signals import extract_signals
from issuetriage.judges.base import CLOSING_KINDS, Judge, Judgment, Kind
from issuetriage.models import CLOSING_DECISIONS, Decision, Issue, Plan, TraceStep
from issuetriage.policy import Policy

# The templates the decision tree posts with each decision (engine/tree: steps 1, 1.5, 1.55, 1.6);
# an agent may post no other for that decision. Names are the ones every profile must define.
DECISION_TEMPLATES: dict[Decision, frozenset[str]] = {
    Decision.CLOSE_QUESTION: frozenset({"redirect_to_forum"}),
    Decision.CLOSE_EXPECTED_BEHAVIOR: frozenset({"redirect_to_forum"}),
    Decision.REQUEST_INFO: frozenset({"request_more_info"}),
    Decision.REQUEST_REPRODUCTION: frozenset({"request_self_contained_reproduction"}),
    Decision.LABEL: frozenset({"numerical_accuracy"}),
    Decision.TRIAGE_REVIEW: frozenset({"numerical_accuracy"}),
}
_DECISION_OF_TEMPLATE = {"request_more_info": Decision.REQUEST_INFO,
                         "request_self_contained_reproduction": Decision.REQUEST_REPRODUCTION}


@dataclass(frozen=True)
class Ask:
    """What an agent asked for on one issue. `decision` None: infer it from the change (hooks)."""

    decision: Decision | None
    labels: tuple[str, ...] = ()
    templates: tuple[str, ...] = ()
    close: bool = False
    body_edit: str | None = None
    transfer_repo: str | None = None
    reasoning: str = ""


def infer_decision(ask: Ask, policy: Policy) -> Decision:
    """The tree's decision a raw change amounts to (a hook sees calls, not decisions)."""
    if ask.transfer_repo:
        return Decision.TRANSFER
    if ask.close:
        return Decision.CLOSE_QUESTION
    if ask.body_edit is not None:
        return Decision.REQUEST_REPRODUCTION
    if any(label in policy.redirect_labels for label in ask.labels):
        return Decision.REDIRECT_ONCALL
    implied = {_DECISION_OF_TEMPLATE[t] for t in ask.templates if t in _DECISION_OF_TEMPLATE}
    if len(implied) == 1 and not ask.labels:
        return implied.pop()
    return Decision.LABEL


def build(ask: Ask, issue: Issue, policy: Policy, offline: Judge,
          agent: str) -> tuple[Plan, list[Rejection]]:
    """The plan `ask` amounts to on `issue`, corroborated, and what was refused on the way."""
    refused: list[Rejection] = []
    decision = ask.decision or infer_decision(ask, policy)
    transfer = ask.transfer_repo or None
    seen: Judgment | None = None
    planned: frozenset[str] | None = None

    def judged() -> Judgment:
        nonlocal seen
        seen = seen or offline.judge(issue, extract_signals(issue), policy)
        return seen

    def plan_templates() -> frozenset[str]:
        nonlocal planned
        if planned is None:  # the tree is loaded only when an agent asks for a template
            from issuetriage.engine.tree import (
                propose,  # lazy: hook start-up: the tree only when an agent asks for a template
            )

            planned = frozenset(propose(issue, extract_signals(issue), judged(), policy).templates)
        return planned

    if decision is Decision.FIXED_IN_RELEASE:
        refused.append(Rejection("close as fixed", "not corroborated: only `issuetriage scrub --apply`, "
                                                   "from its own re-run and bisection, closes as fixed"))
        decision = Decision.TRIAGE_REVIEW
    elif decision in CLOSING_DECISIONS or ask.close:
        kind = judged().kind
        if kind in CLOSING_KINDS:
            decision = (Decision.CLOSE_EXPECTED_BEHAVIOR if kind is Kind.EXPECTED_BEHAVIOR
                        else Decision.CLOSE_QUESTION)
        else:
            refused.append(Rejection("close", f"not corroborated: the offline judge reads a "
                                              f"{kind.value}, not a usage question"))
            decision = Decision.TRIAGE_REVIEW
    if decision is Decision.TRANSFER or transfer:
        sibling = judged().transfer_repo
        if transfer is None or sibling != transfer:
            refused.append(Rejection(f"transfer to {transfer}", f"not corroborated: the offline "
                                     f"judge names {sibling or 'no sibling repo'}"))
            decision, transfer = Decision.TRIAGE_REVIEW, None
    templates: list[str] = []
    for name in dict.fromkeys(ask.templates):
        if name in policy.templates and name not in DECISION_TEMPLATES.get(decision, frozenset()):
            refused.append(Rejection(f"template {name}", f"does not go with a {decision.value} decision"))
        elif name in policy.templates and name not in plan_templates():
            refused.append(Rejection(f"template {name}", "the plan for this issue does not call for it"))
        else:
            templates.append(name)  # unknown names: the guard refuses them
    if decision in CLOSING_DECISIONS:  # a close always says why, with the tree's comment
        templates += sorted(DECISION_TEMPLATES.get(decision, frozenset()) - set(templates))
    labels = list(ask.labels)
    if decision is Decision.TRIAGE_REVIEW:
        labels.append(policy.bot.triage_review)
    trace = (TraceStep(step=agent, outcome=decision.value, reason=" ".join(ask.reasoning.split())[:500]),)
    plan = Plan(repo=issue.repo, number=issue.number, decision=decision, labels_added=tuple(labels),
                templates=tuple(templates), close=decision in CLOSING_DECISIONS,
                body_edit=ask.body_edit, transfer_repo=transfer, trace=trace)
    return plan, refused
