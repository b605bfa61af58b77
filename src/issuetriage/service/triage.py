"""One live triage on GitHub through the one flow: what `issuetriage triage OWNER/REPO#N` and a
service worker both run, so both reach the same state for the same issue and profile."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from issuetriage.act.flow import Report
    from issuetriage.github.apply import GitHubApplier
    from issuetriage.judges.base import Judge
    from issuetriage.policy import Policy
    from issuetriage.store.sqlite import Store


def triage_live(applier: GitHubApplier, repo: str, number: int, policy: Policy, judge: Judge | None,
                store: Store | None, apply: bool, *, respect_marker: bool = True,
                extra: dict[str, Any] | None = None) -> Report:
    """`act` with the engine; the profile's shadow mode wins over `apply` (fail closed), and with a
    store, demoted labels and shadow plans are held for review."""
    from issuetriage.act.flow import act, engine
    from issuetriage.live.demotion import holder

    shadow = policy.meta.live.shadow
    hold = holder(store, policy, shadow) if store is not None else (
        (lambda plan: {"shadow": True}) if shadow else None)
    return act(applier, repo, number, policy, engine(judge), apply=apply or shadow, audit=store,
               hold=hold, respect_marker=respect_marker, extra=extra)
