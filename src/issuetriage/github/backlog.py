"""`issuetriage backlog`: triage open, untriaged issues in bulk within an API-call budget.

Candidates come from the store after an incremental sync; each issue is re-read live before
it is triaged. Finished issues are recorded as they finish, so a sweep that crashed resumes
where it stopped and never handles an issue twice.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

from issuetriage.errors import GitHubClientError, GitHubServerError, UserError
from issuetriage.github import mirror
from issuetriage.github.client import GitHubClient
from issuetriage.github.sync import sync
from issuetriage.github.triage import Report, triage_live
from issuetriage.judgment import Judge
from issuetriage.models import Issue
from issuetriage.policy import Policy
from issuetriage.store import Store

WORST_CASE_CALLS = 10  # read issue + comments, body, comment, close, labels, transfer x2, verify x2
UNITS = {"d": 1, "w": 7, "m": 30, "y": 365}


def parse_age(text: str) -> timedelta:
    """`3m` → 90 days; units d, w, m (30 days), y."""
    match = re.fullmatch(r"(\d+)([dwmy])", text.strip())
    if not match:
        raise UserError(f"--older-than {text!r}: use a number and d, w, m or y (like 3m)")
    return timedelta(days=int(match.group(1)) * UNITS[match.group(2)])


def candidates(store: Store, policy: Policy, repo: str, label: str | None, older_than: timedelta | None,
               now: datetime, limit: int) -> list[Issue]:
    """Untriaged open issues, oldest first, not yet finished by an earlier sweep."""
    done = mirror.finished(store, repo)
    cutoff = now - older_than if older_than else None
    picked = [i for i in store.untriaged(policy, repo)
              if i.number not in done and (label is None or label in i.labels)
              and (cutoff is None or (i.created_at is not None and i.created_at <= cutoff))]
    picked.sort(key=lambda i: (i.created_at or now, i.number))
    return picked[:limit]


@dataclass
class BacklogReport:
    reports: list[Report] = field(default_factory=list)
    skipped_budget: int = 0
    failed: list[tuple[int, str]] = field(default_factory=list)


def backlog(client: GitHubClient, store: Store, repo: str, policy: Policy, judge: Judge | None,
            label: str | None = None, older_than: timedelta | None = None, limit: int = 50,
            budget: int = 500, apply: bool = False, now: datetime | None = None,
            on_issue: Callable[[int], None] = lambda n: None) -> BacklogReport:
    """Sync, pick candidates, triage each while the budget allows the worst case."""
    sync(client, store, repo)
    todo = candidates(store, policy, repo, label, older_than, now or datetime.now(UTC), limit)
    out = BacklogReport()
    for index, issue in enumerate(todo):
        if len(client.calls) + WORST_CASE_CALLS > budget:
            out.skipped_budget = len(todo) - index
            break
        try:
            report = triage_live(client, repo, issue.number, policy, judge, apply=apply,
                                 store=store if apply else None)
        except GitHubServerError as exc:
            out.failed.append((issue.number, str(exc)))
            break  # GitHub is struggling: stop, and resume from here next time
        except GitHubClientError as exc:
            out.failed.append((issue.number, str(exc)))
            continue
        if apply:
            outcome = report.verdict.outcome.value if report.verdict else "unknown"
            mirror.mark_finished(store, repo, issue.number, outcome)
        out.reports.append(report)
        on_issue(issue.number)
    return out
