"""Steps 0, 1, 2 and 3: already routed, usage questions, sibling repos, secondary queues."""

from __future__ import annotations

from issuetriage.engine.tree.base import Context, Draft, Outcome, routed_by_implication
from issuetriage.judges.base import Kind
from issuetriage.models import Decision


def already_routed(ctx: Context, draft: Draft) -> Outcome | None:
    """Step 0: an issue that already carries an oncall label belongs to that oncall."""
    routed = [label for label in ctx.issue.labels if ctx.policy.is_oncall(label)]
    if not routed:
        return None
    return Outcome(f"already routed to {', '.join(routed)}", Decision.SKIP_ALREADY_ROUTED, stop=True)


def usage_question(ctx: Context, draft: Draft) -> Outcome | None:
    """Step 1: close plain usage questions; ask for details when we can't tell what it is."""
    j, thresholds = ctx.judgment, ctx.policy.meta.thresholds
    if j.kind is Kind.QUESTION and j.kind_confidence >= thresholds.question_close:
        return Outcome(f"usage question ({j.kind_confidence:.2f}): {j.reasoning}".rstrip(": "),
                       Decision.CLOSE_QUESTION, templates=("redirect_to_forum",), close=True, stop=True)
    if j.kind is Kind.EXPECTED_BEHAVIOR and j.kind_confidence >= thresholds.question_close:
        return Outcome("documented, intended behaviour", Decision.CLOSE_EXPECTED_BEHAVIOR,
                       templates=("redirect_to_forum",), close=True, stop=True)
    if j.kind is Kind.UNCLEAR or (j.kind is Kind.QUESTION and j.kind_confidence < thresholds.question_close):
        return Outcome(f"cannot tell question from bug or feature ({j.kind.value})",
                       Decision.REQUEST_INFO, templates=("request_more_info",), stop=True)
    return None


def sibling_repo(ctx: Context, draft: Draft) -> Outcome | None:
    """Step 2: issues about a sibling project's code move to that repository."""
    target = ctx.judgment.transfer_repo
    if not target or ctx.judgment.transfer_confidence < ctx.policy.meta.thresholds.route:
        return None
    if target not in ctx.policy.transfer_repos or target == ctx.issue.repo:
        return None
    return Outcome(f"belongs to {target} ({ctx.judgment.transfer_confidence:.2f})",
                   Decision.TRANSFER, transfer_repo=target, stop=True, reset=True)


def secondary_queue(ctx: Context, draft: Draft) -> Outcome | None:
    """Step 3: a secondary oncall queue gets exactly one oncall label and nothing else. The queue
    is a confident queue label, or else the queue a confident label implies (`module: dtensor`
    is distributed's)."""
    policy = ctx.policy
    best = next((s for s in ctx.judgment.confident(policy.meta.thresholds.route)
                 if s.name in policy.redirect_labels), None)
    if best is not None:
        queue, why = best.name, f"({best.confidence:.2f}): {best.reason}".rstrip(": ")
    elif (implied := routed_by_implication(ctx, policy.redirect_labels)) is not None:
        queue, by = implied
        why = f"implied by {by.name} ({by.confidence:.2f})"
    else:
        return None
    return Outcome(f"{queue} queue {why}", Decision.REDIRECT_ONCALL, labels=(queue,), stop=True,
                   reset=True)
