"""The one way to act on an issue, for every entry point.

    read once → skip checks → decide → guard → apply by difference → verify → audit

`act` is the only function that writes to an issue. The CLI (`triage`, `run --store`, `demo`),
the backlog sweep, the MCP agent session and the Claude Code hooks are callers: each brings an
`Applier` (where the issue lives: GitHub or the local store) and a `Decide` (who proposes: the
engine with a judge, or an agent's plan), and gets back a `Report` of what it saw and did.

- **Read once.** The applier reads the issue, its labels, state and comments (on GitHub one
  GraphQL call, which also brings the release context).
- **Skip checks before deciding.** A pull request is refused; an issue carrying the done marker
  was finished by an earlier run, so a repeated webhook or rerun changes nothing and no judge
  (no LLM call) runs.
- **Guard.** Whatever was proposed passes the one guard.
- **Apply by difference.** Only what the issue does not show yet is written
  (`engine.effects.diff`), so a second run writes nothing.
- **Verify** from the write answers (`act.verify`), without a second read.
- **Audit.** With an audit store, every plan lands in its audit log with its trace, effects,
  judge and outcome, whether it was applied or only recorded (dry run, shadow mode).
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Protocol

from issuetriage.act.verify import Verdict, classify, verify
from issuetriage.engine.decided import Decided
from issuetriage.engine.effects import Effects, diff
from issuetriage.engine.guard import Rejection, guard
from issuetriage.judges.base import Judge, Judgment
from issuetriage.models import Issue, Plan
from issuetriage.policy import Policy

if TYPE_CHECKING:
    from issuetriage.store.sqlite import Store

Decide = Callable[[Issue, Policy], Decided]
Hold = Callable[[Plan], "dict[str, Any] | None"]

PULL_REQUEST = "a pull request; issuetriage triages issues"
DONE = "already handled by the bot (it carries the done marker)"


class Applier(Protocol):
    """Where an issue lives and how writes reach it (GitHub, the local store)."""

    @property
    def where(self) -> str: ...

    def spent(self) -> int: ...

    def read(self, repo: str, number: int) -> Issue: ...

    def context(self, policy: Policy, issue: Issue) -> Policy: ...

    def atomic(self) -> AbstractContextManager[None]: ...

    def planned(self, effects: Effects, issue: Issue, policy: Policy) -> tuple[str, ...]: ...

    def write(self, plan: Plan, effects: Effects, issue: Issue, policy: Policy) -> tuple[Issue, tuple[str, ...]]: ...


@dataclass(frozen=True)
class Report:
    """Everything one run of the flow saw and did.

    `skipped` says why the flow stopped before deciding (then `plan` is None); `writes` are the
    writes made (applied) or that would be made (dry run), one line each."""

    before: Issue
    skipped: str | None = None
    plan: Plan | None = None
    proposed: Plan | None = None
    judgment: Judgment | None = None
    judge: str = ""
    rejections: tuple[Rejection, ...] = ()
    blocked_everything: bool = False
    effects: Effects | None = None
    writes: tuple[str, ...] = ()
    applied: bool = False
    verdict: Verdict | None = None
    audit_id: int | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def done_before(self) -> bool:
        return self.skipped == DONE


def engine(judge: Judge | None = None) -> Decide:
    """The engine as the decider: signals → `judge` → decision tree."""
    from issuetriage.engine.pipeline import decide

    return lambda issue, policy: decide(issue, policy, judge)


def given(plan: Plan, judgment: Judgment | None = None, judge: str = "unknown") -> Decide:
    """A plan decided elsewhere (a reviewer's approval, a replay) as the decider; it is still
    guarded against the issue as it is now."""
    return lambda issue, policy: Decided(plan, judgment, judgment.judge if judgment else judge)


def act(applier: Applier, repo: str, number: int, policy: Policy, decider: Decide | None = None, *,
        apply: bool = False, audit: Store | None = None, respect_marker: bool = True,
        extra: dict[str, Any] | None = None, hold: Hold | None = None) -> Report:
    """Run the one flow on `repo#number`; see the module docstring. Dry run unless `apply`.

    `respect_marker=False` is for an agent that writes in several steps (the hooks): its later
    writes still pass the guard, though the marker is already there. `hold` sees the guarded plan
    before it is applied and may hold it back for a human (shadow mode, a demoted label): the
    marks it returns go into the audit row and nothing is written."""
    start = applier.spent()
    before = applier.read(repo, number)
    if before.is_pull_request:
        return Report(before, skipped=PULL_REQUEST)
    if respect_marker and policy.bot.bot_triaged in before.labels:
        verdict = Verdict(classify(before, repo, policy), before) if apply else None
        return Report(before, skipped=DONE, verdict=verdict)
    policy = applier.context(policy, before)
    decided = (decider or engine())(before, policy)
    result = guard(decided.proposed, before, policy)
    result = replace(result, plan=result.plan.model_copy(update={"judge": decided.judge}))  # who decided
    effects = diff(result.plan, before, policy)
    info = {**(extra or {}), "where": applier.where,
            "rejections": [r.__dict__ for r in (*decided.refused, *result.rejections)]}
    common = dict(plan=result.plan, proposed=decided.proposed, judgment=decided.judgment,
                  judge=decided.judge, rejections=(*decided.refused, *result.rejections),
                  blocked_everything=result.blocked_everything, effects=effects)
    held = hold(result.plan) if hold is not None and apply else None
    if held is not None:
        info |= held
    if not apply or held is not None:
        info["api_calls"] = applier.spent() - start
        audit_id = None
        if audit is not None:
            if applier.where == "github":
                audit.put_issue(before)  # the mirror shows the issue the plan was made for
            audit_id = audit.record(result.plan, decided.judgment, applied=False, effects=effects,
                                    judge=decided.judge, extra=info)
        return Report(before, writes=applier.planned(effects, before, policy), audit_id=audit_id,
                      extra=info, **common)  # type: ignore[arg-type]
    with applier.atomic():
        after, written = applier.write(result.plan, effects, before, policy)
        verdict = verify(applier, result.plan, after, policy, blocked=result.blocked_everything)
        info |= {"outcome": verdict.outcome.value, "fixed": list(verdict.fixed),
                 "missing": list(verdict.missing), "writes": list(written),
                 "api_calls": applier.spent() - start}
        audit_id = None
        if audit is not None:
            if applier.where != "store":
                audit.put_issue(verdict.issue)  # the mirror follows what GitHub shows
            audit_id = audit.record(result.plan, decided.judgment, applied=True, effects=effects,
                                    judge=decided.judge, extra=info)
    return Report(before, writes=written, applied=True, verdict=verdict, audit_id=audit_id,
                  extra=info, **common)  # type: ignore[arg-type]


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
