"""Pure facts about the bot's conversation on an issue, read from its comments (no clock, no I/O):
which of the bot's templates were posted and when, and whether the reporter answered since. The
guard, apply by difference, the outcome check and the stale follow-up all ask these, so they
cannot disagree.

A template counts as posted only from a comment the bot's own account wrote (`Comment.by_bot`)
that carries its marker and, for a template without variables, the text the template produces:
anyone can paste `<!-- issuetriage:template=NAME -->` into a comment."""

from __future__ import annotations

from datetime import UTC, datetime

from issuetriage.models import Comment, Issue
from issuetriage.policy import Policy


def _posts(comment: Comment, policy: Policy, template: str) -> bool:
    """`comment` is the bot's posting of `template`."""
    if not comment.by_bot or template not in policy.templates or policy.template_marker(template) not in comment.body:
        return False
    if policy.templates[template].variables:
        return True  # filled from evidence; the marker in the bot's own comment says which
    return _folded(policy.render_template(template)) in _folded(comment.body)


def _folded(text: str) -> str:
    return " ".join(text.split())


def posted_templates(issue: Issue, policy: Policy) -> frozenset[str]:
    """The templates the bot has posted on `issue`."""
    return frozenset(name for name in policy.templates
                     if any(_posts(c, policy, name) for c in issue.comments))


def posted_at(issue: Issue, policy: Policy, template: str) -> datetime | None:
    """When the bot posted `template` (None: never)."""
    for comment in issue.comments:
        if _posts(comment, policy, template):
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
