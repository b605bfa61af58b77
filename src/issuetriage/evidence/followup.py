"""Pure facts about an issue waiting on its reporter, read from its comments (no clock, no I/O):
which of the bot's templates were posted when, and whether the reporter answered since. The
guard and the stale follow-up both ask these, so they cannot disagree."""

from __future__ import annotations

from datetime import UTC, datetime

from issuetriage.models import Issue
from issuetriage.policy import Policy


def posted_at(issue: Issue, policy: Policy, template: str) -> datetime | None:
    """When the bot's comment carrying `template`'s marker was posted (None: never)."""
    marker = policy.template_marker(template)
    for comment in issue.comments:
        if marker in comment.body:
            return utc(comment.created_at or datetime.min)
    return None


def reporter_replied_after(issue: Issue, when: datetime) -> bool:
    """Any comment by the reporter after `when` (a reply stops the clock)."""
    return any(c.author == issue.author and c.created_at is not None and utc(c.created_at) > utc(when)
               for c in issue.comments)


def waiting_since(issue: Issue, policy: Policy) -> datetime | None:
    """When the bot last asked the reporter for something (a waiting template), or None."""
    times = [t for t in (posted_at(issue, policy, n) for n in policy.meta.stale.waiting_templates) if t]
    return max(times) if times else None


def reminded_without_reply(issue: Issue, policy: Policy) -> bool:
    """The bot asked, then reminded, and the reporter has said nothing since the request."""
    asked = waiting_since(issue, policy)
    reminded = posted_at(issue, policy, policy.meta.stale.remind_template)
    return (issue.state == "open" and asked is not None and reminded is not None
            and not reporter_replied_after(issue, asked))


def utc(value: datetime) -> datetime:
    """Naive times (our data files) are UTC."""
    return value if value.tzinfo else value.replace(tzinfo=UTC)
