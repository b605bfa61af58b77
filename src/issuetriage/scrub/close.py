"""Close an issue that bisection shows fixed in a release, through the one flow (`act`).

Only a report whose newest version no longer fails, and whose bisection found the release where
the reported failure stopped, becomes a plan: decision `fixed_in_release`, the profile's
`fixed_in_release` template (its variables are the package and the version, nothing else) and a
close as completed. The plan carries the evidence (`models.FixedInRelease`), made here from the
verdict and sealed with a key that lives only in this process, so a plan read back from JSON, a
store or an agent never carries a valid seal. The guard closes as fixed only when `refusal` finds
nothing wrong: the seal holds, the evidence is about this issue, and the repro the issue shows now
is the one scrub ran. The scrub report itself is printed, never posted.

Subscription etiquette is the GitHub applier's (`keep_subscription`): the viewer's subscription
is restored only on an issue that stays open, and this one ends closed.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import secrets
from typing import TYPE_CHECKING

from pydantic import ValidationError

from issuetriage.models import Decision, FixedInRelease, Issue, Plan, TraceStep
from issuetriage.scrub.model import Outcome, Stop
from issuetriage.scrub.pick import pick_repro

if TYPE_CHECKING:
    from issuetriage.act.flow import Applier, Report
    from issuetriage.policy import Policy
    from issuetriage.scrub.flow import ScrubReport
    from issuetriage.store.sqlite import Store

TEMPLATE = "fixed_in_release"
_KEY = secrets.token_bytes(32)  # this process's; never written anywhere


def fixed_in(report: ScrubReport) -> str | None:
    """The release where the reported failure stopped, when that is what bisection found."""
    b = report.bisect
    if report.outcome is not Outcome.PASSES or b is None or not b.first_changed:
        return None
    outcomes = dict(b.outcomes)
    if outcomes.get(b.last_same or "") != Outcome.SAME_ERROR or outcomes.get(b.first_changed) != Outcome.PASSES:
        return None
    return b.first_changed


def evidence(report: ScrubReport, issue: Issue) -> FixedInRelease | None:
    """Sealed evidence that `issue` is fixed in a release, from scrub's verdict on it; None when the
    report does not show that, or its labels are not `package-version` of one package."""
    label = fixed_in(report)
    if label is None or report.bisect is None or report.repro_source is None:
        return None
    package, _, version = label.rpartition("-")
    before, _, last = (report.bisect.last_same or "").rpartition("-")
    if not package or before != package:
        return None
    try:
        found = FixedInRelease(issue=issue.ref, package=package, version=version, last_affected=last,
                               outcomes=report.bisect.outcomes,
                               repro_sha256=_digest(report.repro_source.code))
    except ValidationError:
        return None
    return found.model_copy(update={"seal": _seal(found)})


def refusal(found: FixedInRelease, issue: Issue) -> str | None:
    """Why `found` does not show that `issue`, as it is now, is fixed (None when it does)."""
    if not hmac.compare_digest(found.seal, _seal(found)):
        return "not corroborated: this evidence was not made by scrub in this run"
    if found.issue != issue.ref:
        return f"the evidence is about {found.issue}, not {issue.ref}"
    picked = pick_repro(issue)
    if isinstance(picked, Stop) or _digest(picked.code) != found.repro_sha256:
        return "the issue's reproduction is not the one scrub ran (edited since?)"
    return None


def plan(report: ScrubReport, issue: Issue) -> Plan | None:
    """The close-as-fixed plan for `issue` (None when the report does not show it fixed)."""
    found = evidence(report, issue)
    if found is None:
        return None
    why = (f"the repro fails as reported on {found.package} {found.last_affected} and passes "
           f"from {found.version} on")
    return Plan(repo=issue.repo, number=issue.number, decision=Decision.FIXED_IN_RELEASE,
                templates=(TEMPLATE,), close=True, fixed_in_release=found,
                trace=(TraceStep(step="scrub", outcome=Decision.FIXED_IN_RELEASE.value, reason=why),))


def close_as_fixed(applier: Applier, policy: Policy, report: ScrubReport, issue: Issue, *,
                   apply: bool = True, audit: Store | None = None) -> Report | None:
    """Run the one flow with scrub's plan (guarded, applied by difference, verified, audited);
    None when the report does not show the issue fixed, so nothing is read or written. The done
    marker does not stop it: a triaged issue may be fixed later."""
    from issuetriage.act.flow import act, given

    proposed = plan(report, issue)
    if proposed is None:
        return None
    hold = (lambda _plan: {"shadow": True}) if policy.meta.live.shadow else None  # the profile wins
    return act(applier, issue.repo, issue.number, policy, given(proposed, judge="scrub"),
               apply=apply or hold is not None, audit=audit, respect_marker=False, hold=hold)


def _digest(code: str) -> str:
    return hashlib.sha256(code.encode()).hexdigest()


def _seal(found: FixedInRelease) -> str:
    body = json.dumps(found.model_dump(mode="json"), sort_keys=True).encode()  # the seal is excluded
    return hmac.new(_KEY, body, hashlib.sha256).hexdigest()
