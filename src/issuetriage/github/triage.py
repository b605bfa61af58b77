"""Triage one live issue: read it, run the engine, apply the difference, verify the outcome."""

from __future__ import annotations

import copy
from dataclasses import dataclass

from issuetriage.engine.effects import diff
from issuetriage.errors import UserError
from issuetriage.engine.pipeline import Outcome as EngineOutcome
from issuetriage.engine.pipeline import triage_with
from issuetriage.github import reads
from issuetriage.github.apply import Applied, Call, apply_plan, plan_calls
from issuetriage.github.client import GitHubClient
from issuetriage.github.outcome import Verdict, classify, verify
from issuetriage.judges.base import Judge
from issuetriage.models import Issue
from issuetriage.policy import Policy, Release
from issuetriage.store.sqlite import Store


@dataclass(frozen=True)
class Report:
    """Everything one triage run saw and did, with the number of API calls it spent."""

    before: Issue
    result: EngineOutcome
    calls: tuple[Call, ...]
    applied: Applied | None = None
    verdict: Verdict | None = None
    api_calls: int = 0
    apply_calls: int = 0
    already_done: bool = False


def with_release(policy: Policy, minor: str | None) -> Policy:
    """The policy with the latest release's MAJOR.MINOR filled in (it is data, so we copy)."""
    if not minor or policy.meta.release.latest_minor != "unknown":
        return policy
    updated = copy.copy(policy)
    updated.meta = policy.meta.model_copy(update={"release": Release(latest_minor=minor)})
    return updated


def release_policy(client: GitHubClient, repo: str, policy: Policy) -> Policy:
    """Read releases/latest only when the profile does not pin the release (one call, or none)."""
    if policy.meta.release.latest_minor != "unknown":
        return policy
    return with_release(policy, reads.latest_minor(client, repo))


def triage_live(client: GitHubClient, repo: str, number: int, policy: Policy, judge: Judge | None = None,
                apply: bool = False, store: Store | None = None, keep_subscription: bool = False) -> Report:
    """Dry run by default; with `apply`, write the difference and check the outcome."""
    start = len(client.calls)
    before = reads.fetch_issue(client, repo, number)
    if before.is_pull_request:
        raise UserError(f"{repo}#{number} is a pull request; issuetriage triages issues")
    result = triage_with(before, policy, judge)
    if policy.bot.bot_triaged in before.labels:
        # The marker is written last, so the bot finished here before: a repeated webhook or a
        # rerun changes nothing, even if the engine would now decide differently.
        verdict = Verdict(classify(before, repo, policy), before) if apply else None
        return Report(before, result, (), verdict=verdict, api_calls=len(client.calls) - start,
                      already_done=True)
    calls = plan_calls(result.plan, before, policy)
    if not apply:
        return Report(before, result, calls, api_calls=len(client.calls) - start)
    effects = diff(result.plan, before, policy)
    applied = apply_plan(client, result.plan, before, policy, keep_subscription)
    apply_calls = len(client.calls) - start
    verdict = verify(client, result.plan, applied.repo, applied.number, policy,
                     blocked=result.blocked_everything)
    if store is not None:
        with store.transaction():
            store.put_issue(verdict.issue)
            store.record(result.plan, result.judgment, applied=True, effects=effects,
                         extra={"outcome": verdict.outcome.value, "fixed": list(verdict.fixed),
                                "missing": list(verdict.missing), "api_calls": len(client.calls) - start,
                                "where": "github"})
    return Report(before, result, calls, applied, verdict, len(client.calls) - start, apply_calls)
