"""Steps 5a, 5b, 6 and 7: escalation, release triage, and the bot's own markers."""

from __future__ import annotations

from issuetriage.engine.tree.base import Context, Draft, Outcome
from issuetriage.models import Decision

_UNREVIEWED = {Decision.LABEL, Decision.TRIAGE_REVIEW}


def escalate(ctx: Context, draft: Draft) -> Outcome | None:
    """Step 5a: crashes, silent wrong results, regressions and internal asserts go to triage review;
    a reproduction request keeps its decision (its comment and body edit) and gets the label."""
    if draft.decision not in _UNREVIEWED and draft.decision is not Decision.REQUEST_REPRODUCTION:
        return None
    reasons = list(ctx.judgment.escalate_reasons)
    if ctx.judgment.high_priority:
        reasons.append("high impact")
    if not reasons:
        return None
    decision = Decision.TRIAGE_REVIEW if draft.decision in _UNREVIEWED else None
    return Outcome(f"escalated for human review: {', '.join(reasons)}", decision,
                   labels=(ctx.policy.bot.triage_review,), review=True)


def release_triage(ctx: Context, draft: Draft) -> Outcome | None:
    """Step 5b: flag for release triage when the issue is on the latest minor or a human set high priority."""
    if draft.decision not in _UNREVIEWED:
        return None
    latest = ctx.policy.meta.release.latest_minor
    if latest == "unknown" or not ctx.policy.bot.release_triage:
        return None
    if ctx.policy.bot.high_priority and ctx.policy.bot.high_priority in ctx.issue.labels:
        return Outcome("a maintainer marked it high priority", labels=(ctx.policy.bot.release_triage,))
    if latest in ctx.signals.versions:
        return Outcome(f"reported on the latest release {latest}",
                       labels=(ctx.policy.bot.release_triage,))
    return None


def mark_bot_triaged(ctx: Context, draft: Draft) -> Outcome | None:
    """Step 6: any change carries `bot-triaged`, so humans can find (and audit) the bot's work."""
    if draft.decision is Decision.SKIP_ALREADY_ROUTED:
        return None
    if draft.review and ctx.policy.bot.triage_review not in draft.labels:
        return Outcome("abstained", labels=(ctx.policy.bot.triage_review, ctx.policy.bot.bot_triaged))
    return Outcome("the bot changed this issue", labels=(ctx.policy.bot.bot_triaged,))


def mark_triaged(ctx: Context, draft: Draft) -> Outcome | None:
    """Step 7: `triaged` when the bot fully handled it (not transferred, redirected, waiting or under review)."""
    if draft.decision is not Decision.LABEL or draft.review:
        return None
    return Outcome("fully triaged", labels=(ctx.policy.bot.triaged,))
