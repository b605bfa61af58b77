"""Scrub: review, re-run, bisect and minimize an issue's reproduction, safely.

Library API: `scrub(issue, Options(...)) -> ScrubReport`; render with `scrub.report`.
One module per feature: pick, actionable, expected, safety, sandbox, outcome, bisect,
minimize (with astedit, transforms, rewrite, holders, modules), report, source.
"""

from issuetriage.scrub.flow import Options, ScrubReport, scrub

__all__ = ["Options", "ScrubReport", "scrub"]
