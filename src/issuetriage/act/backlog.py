"""`issuetriage backlog`: triage open, untriaged issues in bulk within an API-call budget.

Candidates come from `github.backlog.candidates`; each is re-read live and triaged through the one
flow. Finished issues are recorded in the store as they finish, so a sweep that crashed resumes
where it stopped and never handles an issue twice."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

from issuetriage.act.flow import Report, act, engine
from issuetriage.act.hold import Mode
from issuetriage.errors import GitHubClientError, GitHubServerError
from issuetriage.github import mirror
from issuetriage.github.apply import GitHubApplier
from issuetriage.github.backlog import candidates
from issuetriage.github.client import GitHubClient
from issuetriage.judges.base import Judge
from issuetriage.policy import Policy
from issuetriage.store.sqlite import Store

WORST_CASE_CALLS = 8  # read, comment, body, close, labels, transfer x2, marker on the moved issue


@dataclass
class BacklogReport:
    reports: list[Report] = field(default_factory=list)
    skipped_budget: int = 0
    failed: list[tuple[int, str]] = field(default_factory=list)


def backlog(client: GitHubClient, store: Store, repo: str, policy: Policy, judge: Judge | None,
            label: str | None = None, older_than: timedelta | None = None, limit: int = 50,
            budget: int = 500, mode: Mode = Mode(), now: datetime | None = None,
            on_issue: Callable[[int], None] = lambda n: None) -> BacklogReport:
    """Pick candidates and triage each while the budget allows the worst case; shadow mode and
    demoted labels hold a plan for review (recorded, not written)."""
    todo = candidates(client, store, policy, repo, label, older_than, now or datetime.now(UTC), limit, budget)
    out = BacklogReport()
    applier = GitHubApplier(client)
    records = mode.records(policy)
    for index, issue in enumerate(todo):
        if len(client.calls) + WORST_CASE_CALLS > budget:
            out.skipped_budget = len(todo) - index
            break
        try:
            report = act(applier, repo, issue.number, policy, engine(judge), mode,
                         audit=store if records else None)
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
