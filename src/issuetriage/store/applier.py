"""The local store's side of the one flow (`issuetriage.act.act`): the SQLite mirror as the issue's home.

Writes change the stored issue the way GitHub would (labels appended, the one comment posted by
the bot, body edited, closed, a transfer closes the local copy and notes where it went), inside
the store's transaction together with the audit row.

Many workers may share the store, so the write first locks the issue's row and checks that the
issue is still the one the flow read and decided on; if another worker changed it in between,
the write refuses (`StoreConflict`) and the whole transaction, audit row included, rolls back.
Running the flow again then reads the new state: usually the done marker, so it skips.
"""

from __future__ import annotations

from contextlib import AbstractContextManager
from datetime import UTC, datetime
from typing import ClassVar

from issuetriage.engine.effects import Effects
from issuetriage.models import Comment, Issue, Plan
from issuetriage.policy import Policy
from issuetriage.store.sqlite import BOT_AUTHOR, Store, StoreConflict


class StoreApplier:
    """Read from and write to the local mirror."""

    where: ClassVar[str] = "store"

    def __init__(self, store: Store, at: datetime | None = None) -> None:
        self.store, self.at = store, at  # `at`: when comments are posted (default: now)

    def read(self, repo: str, number: int) -> Issue:
        return self.store.get_issue(repo, number)

    def spent(self) -> int:
        return 0

    def context(self, policy: Policy, issue: Issue) -> Policy:
        return policy  # the release context is the profile's own

    def atomic(self) -> AbstractContextManager[None]:
        return self.store.transaction()

    def planned(self, effects: Effects, issue: Issue, policy: Policy) -> tuple[str, ...]:
        return tuple(effects.describe())

    def write(self, plan: Plan, effects: Effects, issue: Issue, policy: Policy) -> tuple[Issue, tuple[str, ...]]:
        with self.store.transaction():  # within atomic(): the lock is held until the audit row is in
            if self.store.get_issue(issue.repo, issue.number, lock=True) != issue:
                raise StoreConflict(f"{issue.ref} changed in {self.store.path} while it was being "
                                    "triaged (another worker?); nothing written, run again")
        if effects.empty:
            return issue, ()
        comments = issue.comments
        if effects.comment:
            comments += (Comment(author=BOT_AUTHOR, body=effects.comment, created_at=self.at or datetime.now(UTC),
                                by_bot=True),)
        after = issue.model_copy(update={
            "labels": issue.labels + effects.labels,
            "body": effects.body if effects.body is not None else issue.body,
            "state": "closed" if effects.close or effects.transfer_repo else issue.state,
            "comments": comments,
        })
        with self.store.transaction():
            self.store._put(after, transferred_to=effects.transfer_repo)
        if effects.transfer_repo:  # the local copy is closed; the issue lives on where it went
            after = after.model_copy(update={"repo": effects.transfer_repo, "state": "open"})
        return after, tuple(effects.describe())
