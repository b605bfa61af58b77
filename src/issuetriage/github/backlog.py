"""The backlog sweep's candidates: open, untriaged issues, oldest first, not yet finished.

Candidates come from GitHub's list of open issues, a page (100) at a time, so a sweep costs a few
list calls rather than a full sync; `act/backlog.py` triages each (re-read live) through the one
flow and records it as finished, so a sweep that crashed resumes where it stopped.
"""

from __future__ import annotations

import re
from datetime import datetime, timedelta

from issuetriage.errors import UserError
from issuetriage.github import mirror, reads
from issuetriage.github.client import PER_PAGE, GitHubClient
from issuetriage.models import Issue
from issuetriage.policy import Policy
from issuetriage.store.sqlite import Store

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
