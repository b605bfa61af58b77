"""Close an issue that scrub showed fixed in a release, through the one flow: scrub's sealed plan
(`scrub/close.py`) is guarded against the issue as it is now (the seal, the issue, its current
repro: `evidence/fixed.py`), applied by difference, verified and audited. The done marker does not
stop it (a triaged issue may be fixed later); shadow mode holds it for review.

Subscription etiquette is the GitHub applier's (`keep_subscription`): the viewer's subscription
is restored only on an issue that stays open, and this one ends closed."""

from __future__ import annotations

from issuetriage.act.applier import Applier
from issuetriage.act.flow import Report, act, given
from issuetriage.act.hold import Mode
from issuetriage.models import Issue
from issuetriage.policy import Policy
from issuetriage.scrub.close import plan
from issuetriage.scrub.flow import ScrubReport
from issuetriage.store.sqlite import Store


def close_as_fixed(applier: Applier, policy: Policy, report: ScrubReport, issue: Issue, *,
                   apply: bool = True, audit: Store | None = None) -> Report | None:
    """Run the one flow with scrub's plan; None when the report does not show the issue fixed, so
    nothing is read or written."""
    proposed = plan(report, issue)
    if proposed is None:
        return None
    return act(applier, issue.repo, issue.number, policy, given(proposed, judge="scrub"), Mode(apply=apply),
               audit=audit, respect_marker=False)
