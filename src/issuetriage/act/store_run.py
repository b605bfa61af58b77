"""A run over the local store through the one flow: `issuetriage run --store` and `demo`.

The store is the issues' home here (`store.applier.StoreApplier`): applying writes to the mirror
only, never to GitHub."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from issuetriage.act.flow import Decide, Report, act, engine
from issuetriage.act.hold import Mode
from issuetriage.judges.base import Judge
from issuetriage.models import Issue, Plan
from issuetriage.policy import Policy
from issuetriage.store.applier import StoreApplier
from issuetriage.store.sqlite import Store


@dataclass
class StoreRun:
    """What a run decided per issue, and which issues it left alone and why."""

    plans: list[Plan] = field(default_factory=list)
    skipped: list[tuple[str, str]] = field(default_factory=list)


def triage_store(store: Store, policy: Policy, judge: Judge | None, mode: Mode, repo: str | None = None,
                 on_total: Callable[[int], None] = lambda n: None,
                 on_issue: Callable[[Issue], None] = lambda issue: None) -> StoreRun:
    """Triage every untriaged issue of `repo` (default: the profile's) in the store, auditing each
    plan; a profile is one repository's policy, so other repositories are left alone."""
    repo = repo or policy.meta.repo
    run = StoreRun()
    run.skipped += [(i.ref, why) for i in store.issues(repo) if (why := policy.skip_reason(i))]
    todo = store.untriaged(policy, repo)
    on_total(len(todo))
    for report in triage_each(store, policy, todo, engine(judge), mode, on_issue):
        if report.plan is not None:
            run.plans.append(report.plan)
        else:
            run.skipped.append((report.before.ref, report.skipped or "skipped"))
    return run


def triage_each(store: Store, policy: Policy, issues: Iterable[Issue], decider: Decide, mode: Mode,
                on_issue: Callable[[Issue], None] = lambda issue: None) -> list[Report]:
    """The one flow on each of `issues` in the store, audited there."""
    applier, reports = StoreApplier(store), []
    for issue in list(issues):
        reports.append(act(applier, issue.repo, issue.number, policy, decider, mode, audit=store))
        on_issue(issue)
    return reports
