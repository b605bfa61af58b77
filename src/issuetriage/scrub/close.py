"""The close-as-fixed plan from a scrub verdict: pure, no I/O (`act/close_fixed.py` runs it).

Only a report whose newest version no longer fails, and whose bisection found the release where
the reported failure stopped, becomes a plan: decision `fixed_in_release`, the profile's
`fixed_in_release` template (its variables are the package and the version, nothing else) and a
close as completed. The plan carries the evidence (`models.FixedInRelease`), made here from the
verdict and sealed by `evidence.fixed`, whose `refusal` the guard asks before any close as fixed.
The scrub report itself is printed, never posted.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pydantic import ValidationError

from issuetriage.evidence.fixed import digest, sealed
from issuetriage.models import Decision, FixedInRelease, Issue, Plan, TraceStep
from issuetriage.scrub.model import Outcome

if TYPE_CHECKING:
    from issuetriage.scrub.flow import ScrubReport

TEMPLATE = "fixed_in_release"


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
                               repro_sha256=digest(report.repro_source.code))
    except ValidationError:
        return None
    return sealed(found)


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
