"""Step 4: the general queue gets area labels (specific over generic) and at most one type label."""

from __future__ import annotations

from issuetriage.engine.tree.base import Context, Draft, Outcome, type_label
from issuetriage.models import Decision
from issuetriage.policy import Policy

MAX_MODULES = 3


def general_queue(ctx: Context, draft: Draft) -> Outcome | None:
    """Module labels (at most MAX_MODULES, besides the commonly missed ones, and the labels they
    imply), other labels and one type label;
    abstain when no module label is confident (or came from step 1.6)."""
    policy, judgment = ctx.policy, ctx.judgment
    threshold = policy.meta.thresholds.label
    # names outside the catalog go on to the guard, which rejects and reports them
    confident = [s for s in judgment.confident(threshold) if not policy.is_oncall(s.name)
                 and s.name not in policy.meta.type_labels and s.name not in policy.bot_label_names]
    # the skill's "commonly missed" labels (crash, regression, windows, ...) are always checked
    # for, so they never count against the cap on ordinary module labels
    missed = policy.rules.commonly_missed
    modules = [s.name for s in confident if policy.is_area(s.name) and s.name not in missed]
    modules = modules[:MAX_MODULES] + [s.name for s in confident
                                       if policy.is_area(s.name) and s.name in missed]
    others = [s.name for s in confident if not policy.is_area(s.name)]
    labels = modules + others
    labels += [label for label in policy.implied(labels) if not policy.is_oncall(label)]
    kind = type_label(ctx)
    if kind:
        labels.append(kind)
    if not any(policy.is_area(label) for label in (*modules, *draft.labels)):
        return Outcome(f"no {_area_word(policy)} label is confident enough: a human should route it",
                       Decision.TRIAGE_REVIEW, labels=tuple(labels), review=True)
    why = "; ".join(f"{s.name} ({s.confidence:.2f}{': ' + s.reason if s.reason else ''})"
                    for s in confident[:6])
    return Outcome(f"general queue: {why}" if why else "general queue", Decision.LABEL,
                   labels=tuple(labels))


def _area_word(policy: Policy) -> str:
    """What the profile calls its area labels (`module:` → module), for reasons."""
    area = policy.meta.families.area
    return area[0].rstrip(":/ ") if area else "area"
