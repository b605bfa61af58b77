"""Whether a guarded plan is written now or held for a person: decided here, once, for every
caller of the one flow (CLI, service, backlog, store run, MCP, hooks, stale, close as fixed).

- **Shadow mode** (the profile's `[live] shadow`, or a command's `--shadow`): the bot records its
  plans for review and writes nothing.
- **Demotion**: a plan adding a label whose live precision fell below the profile's target waits
  for review (`live/demotion.py` keeps the status in the audit store, `Store.demoted`, so without an
  audit store there are no live figures and nothing is demoted).
- **A person's approval** (the review app) is what both wait for: an approved plan is not held.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from issuetriage.models import Plan
from issuetriage.policy import Policy

if TYPE_CHECKING:  # the store loads only where a caller brings one (hooks start without it)
    from issuetriage.store.sqlite import Store


@dataclass(frozen=True)
class Mode:
    """How a caller wants its plans written: `apply` (else a dry run), `shadow` (the command's
    switch; the profile's is added here), `approved` (a person approved the plan)."""

    apply: bool = False
    shadow: bool = False
    approved: bool = False

    def shadowed(self, policy: Policy) -> bool:
        return not self.approved and (self.shadow or policy.meta.live.shadow)

    def records(self, policy: Policy) -> bool:
        """Whether the flow goes as far as the write decision: applying, or shadowing (a shadow
        plan is recorded as held, so the review queue shows it, even on a dry run)."""
        return self.apply or self.shadowed(policy)


def held(plan: Plan, policy: Policy, mode: Mode, audit: Store | None) -> dict[str, Any] | None:
    """The audit marks saying why `plan` waits for a person, or None to write it now."""
    if mode.approved:
        return None
    if mode.shadowed(policy):
        return {"shadow": True}
    waiting = sorted(set(plan.labels_added) & audit.demoted(plan.repo)) if audit is not None else []
    return {"shadow": True, "held_for_review": waiting} if waiting else None
