"""`issuetriage backlog`: triage open, untriaged issues in bulk within an API-call budget.

Candidates come from GitHub's list of open issues, oldest first, a page (100) at a time, so a
sweep costs a few list calls rather than a full sync; each candidate is re-read live before it
is triaged. Finished issues are recorded in the store as they finish, so a sweep that crashed
resumes where it stopped and never handles an issue twice.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

from issuetriage.act.flow import Hold, Report, act, engine
from issuetriage.errors import GitHubClientError, GitHubServerError, UserError
from issuetriage.github import mirror, reads
from issuetriage.github.apply import GitHubApplier
from issuetriage.github.client import PER_PAGE, GitHubClient
from issuetriage.judges.base import Judge
from issuetriage.models import Issue
from issuetriage.policy import Policy
from issuetriage.store.sqlite import Store

WORST_CASE_CALLS = 8  # read, comment, body, close, labels, transfer x2, marker on the moved issue
UNITS = {"h": 1 / 24, "d": 1, "w": 7, "m": 30, "y": 365}


def parse_age(text: str, option: str = "--older-than") -> timedelta:
    """`3m` → 90 days; units h, d, w, m (30 days), y."""
    match = re.fullmatch(r"(\d+)([hdwmy])", text.strip())
    if not match:
        raise UserError(f"{option} {text!r}: use a number and h, d, w, m or y (like 3m)")
    return timedelta(days=int(match.group(1)) * UNITS[match.group(2)])


def is_untriaged(issue: Issue, policy: Policy) -> bool:
    """Open issue with no triage marker and no oncall routing (the store's rule, applied live)."""
    return policy.skip_reason(issue) is None


def candidates(client: GitHubClient, store: Store, policy: Policy, repo: str, label: str | None,
               older_than: timedelta | None, now: datetime, limit: int, budget: int) -> list[Issue]:
    """Untriaged open issues, oldest first, not yet finished by an earlier sweep."""
    done = mirror.finished(store, repo)
    cutoff = now - older_than if older_than else None
    picked: list[Issue] = []
    page = 1
    while len(picked) < limit and len(client.calls) + 1 <= budget:
        batch = reads.open_issues_page(client, repo, page, label)
        for issue in batch:
            if cutoff is not None and (issue.created_at is None or issue.created_at > cutoff):
                return picked  # oldest first: everything after is younger still
            if issue.number not in done and is_untriaged(issue, policy) and len(picked) < limit:
                picked.append(issue)
        if len(batch) < PER_PAGE:
            break
        page += 1
    return picked


@dataclass
class BacklogReport:
    reports: list[Report] = field(default_factory=list)
    skipped_budget: int = 0
    failed: list[tuple[int, str]] = field(default_factory=list)


def backlog(client: GitHubClient, store: Store, repo: str, policy: Policy, judge: Judge | None,
            label: str | None = None, older_than: timedelta | None = None, limit: int = 50,
            budget: int = 500, apply: bool = False, now: datetime | None = None,
            on_issue: Callable[[int], None] = lambda n: None, hold: Hold | None = None) -> BacklogReport:
    """Pick candidates, triage each while the budget allows the worst case; `hold` may keep a
    plan back for review (shadow mode, a demoted label): it is recorded, not written."""
    todo = candidates(client, store, policy, repo, label, older_than, now or datetime.now(UTC), limit, budget)
    out = BacklogReport()
    applier = GitHubApplier(client)
    for index, issue in enumerate(todo):
        if len(client.calls) + WORST_CASE_CALLS > budget:
            out.skipped_budget = len(todo) - index
            break
        try:
            report = act(applier, repo, issue.number, policy, engine(judge), apply=apply,
                         audit=store if apply else None, hold=hold)
        except GitHubServerError as exc:
            out.failed.append((issue.number, str(exc)))
            break  # GitHub is struggling: stop, and resume from here next time
        except GitHubClientError as exc:
            out.failed.append((issue.number, str(exc)))
            continue
        if report.applied:
            outcome = report.verdict.outcome.value if report.verdict else "unknown"
            mirror.mark_finished(store, repo, issue.number, outcome)
        out.reports.append(report)
        on_issue(issue.number)
    return out
