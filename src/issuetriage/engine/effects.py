"""Apply by difference: what a guarded plan still changes on an issue in its current state.

Appliers (the local store, GitHub) compute the effects from the issue as it is now, so a repeated
run, or a webhook delivered twice, changes nothing.
"""

from __future__ import annotations

from dataclasses import dataclass

from issuetriage.evidence.followup import posted_templates
from issuetriage.models import Decision, Issue, Plan
from issuetriage.policy import Policy

_STATE_REASON = {
    Decision.CLOSE_QUESTION: "not_planned",
    Decision.CLOSE_EXPECTED_BEHAVIOR: "not_planned",
    Decision.CLOSE_STALE: "not_planned",
    Decision.FIXED_IN_RELEASE: "completed",
}


@dataclass(frozen=True)
class Effects:
    """The writes still needed, in the order an applier should make them."""

    labels: tuple[str, ...] = ()
    comment: str | None = None
    templates: tuple[str, ...] = ()
    body: str | None = None
    close: bool = False
    state_reason: str | None = None
    transfer_repo: str | None = None

    @property
    def empty(self) -> bool:
        return not (self.labels or self.comment or self.body is not None or self.close
                    or self.transfer_repo)

    def describe(self) -> list[str]:
        """One human-readable line per write."""
        lines = []
        if self.body is not None:
            lines.append("edit body (download links removed)")
        if self.comment:
            lines.append(f"comment ({', '.join(self.templates)})")
        if self.labels:
            lines.append(f"add labels {list(self.labels)}")
        if self.close:
            lines.append(f"close ({self.state_reason})")
        if self.transfer_repo:
            lines.append(f"transfer to {self.transfer_repo}")
        return lines


def diff(plan: Plan, issue: Issue, policy: Policy) -> Effects:
    """The part of `plan` that is not yet true of `issue`."""
    if (plan.repo, plan.number) != (issue.repo, issue.number):
        raise ValueError(f"plan for {plan.repo}#{plan.number} applied to {issue.ref}")
    posted = posted_templates(issue, policy)
    templates = tuple(t for t in plan.templates if t not in posted and t in policy.templates)
    values = plan.fixed_in_release.template_values() if plan.fixed_in_release else {}
    comment = "\n\n---\n\n".join(policy.render_template(t, values) for t in templates) or None
    close = plan.close and issue.state == "open"
    body = plan.body_edit if plan.body_edit is not None and plan.body_edit != issue.body else None
    return Effects(
        labels=tuple(label for label in plan.labels_added if label not in issue.labels),
        comment=comment,
        templates=templates,
        body=body,
        close=close,
        state_reason=_STATE_REASON.get(plan.decision) if close else None,
        transfer_repo=plan.transfer_repo if plan.transfer_repo and plan.transfer_repo != issue.repo else None,
    )
