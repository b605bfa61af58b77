"""The Applier protocol: where an issue lives and how writes reach it (GitHub, the local store).

The one flow (`act.flow.act`) reads through an applier, decides, guards, and writes through it.
Adapters implement it (`github.apply.GitHubApplier`, `store.applier.StoreApplier`); `ReadOnly`
serves a caller that only judges (a hook: the agent sends the call itself).
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager
from typing import Protocol

from issuetriage.engine.effects import Effects
from issuetriage.models import Issue, Plan
from issuetriage.policy import Policy


class Applier(Protocol):
    """Where an issue lives and how writes reach it."""

    @property
    def where(self) -> str: ...

    def spent(self) -> int: ...

    def read(self, repo: str, number: int) -> Issue: ...

    def context(self, policy: Policy, issue: Issue) -> Policy: ...

    def atomic(self) -> AbstractContextManager[None]: ...

    def planned(self, effects: Effects, issue: Issue, policy: Policy) -> tuple[str, ...]: ...

    def write(self, plan: Plan, effects: Effects, issue: Issue, policy: Policy) -> tuple[Issue, tuple[str, ...]]: ...


class ReadOnly:
    """An applier that only reads (a hook judges a call that the agent itself will send)."""

    where = "read-only"

    def __init__(self, read: Callable[[str, int], Issue]) -> None:
        self._read = read

    def spent(self) -> int:
        return 0

    def read(self, repo: str, number: int) -> Issue:
        return self._read(repo, number)

    def context(self, policy: Policy, issue: Issue) -> Policy:
        return policy

    def atomic(self) -> AbstractContextManager[None]:
        raise RuntimeError("a read-only applier cannot write")

    def planned(self, effects: Effects, issue: Issue, policy: Policy) -> tuple[str, ...]:
        return tuple(effects.describe())

    def write(self, plan: Plan, effects: Effects, issue: Issue, policy: Policy) -> tuple[Issue, tuple[str, ...]]:
        raise RuntimeError("a read-only applier cannot write")
