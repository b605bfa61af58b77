"""Close an issue that bisection shows fixed in a release: one comment naming the version, then
close as completed, through the GitHub adapter's one writer (`github.apply`).

Only a report whose newest version no longer fails, and whose bisection found the release where
the reported failure stopped, closes anything; every other outcome writes nothing. Subscription
etiquette is apply_plan's: the viewer's subscription is restored only on issues that stay open,
and this one ends closed.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from issuetriage.engine.effects import Effects
from issuetriage.models import Issue
from issuetriage.scrub.flow import ScrubReport
from issuetriage.scrub.model import Outcome
from issuetriage.scrub.report import to_markdown

if TYPE_CHECKING:
    from issuetriage.github.apply import Write
    from issuetriage.github.client import GitHubClient


def fixed_in(report: ScrubReport) -> str | None:
    """The release where the reported failure stopped, when that is what bisection found."""
    b = report.bisect
    if report.outcome is not Outcome.PASSES or b is None or not b.first_changed:
        return None
    outcomes = dict(b.outcomes)
    if outcomes.get(b.last_same or "") != Outcome.SAME_ERROR or outcomes.get(b.first_changed) != Outcome.PASSES:
        return None
    return b.first_changed


def close_calls(report: ScrubReport, issue: Issue) -> tuple[Write, ...]:
    """The writes closing `issue` as fixed (empty when it is not shown fixed or already closed)."""
    from issuetriage.github.apply import writes_for

    if fixed_in(report) is None or issue.state == "closed" or issue.is_pull_request:
        return ()
    effects = Effects(comment=to_markdown(report), close=True, state_reason="completed")
    return writes_for(effects, marker="")


def close_as_fixed(client: GitHubClient, report: ScrubReport, issue: Issue) -> tuple[Write, ...]:
    """Send `close_calls` with the adapter's typed writes: the comment first, so a crash never
    leaves a silent close."""
    calls = close_calls(report, issue)
    current = issue
    for call in calls:
        current = call.send(client, current)
    return calls
