"""The one way to act on an issue, for every entry point.

    read once → skip checks → decide → guard → apply by difference → verify → audit

`act` is the only function that writes to an issue, and only the use cases beside it in `act/`
call it (one module per writer: `live`, `store_run`, `backlog`, `review`, `stale`, `close_fixed`,
`agent`); entry points call those. Each brings an `Applier` (where the issue lives: GitHub or the
local store), a `Decide` (who proposes: the engine with a judge, an agent's plan, an approved or
scrub-made plan) and a `Mode` (apply, shadow, approved), and gets back a `Report` of what it saw
and did.

- **Read once.** The applier reads the issue, its labels, state and comments (on GitHub one
  GraphQL call, which also brings the release context).
- **Skip checks before deciding.** A pull request is refused; an issue carrying the done marker
  was finished by an earlier run, so a repeated webhook or rerun changes nothing and no judge
  (no LLM call) runs.
- **Guard.** Whatever was proposed passes the one guard; with `strict`, a proposal the guard
  trimmed is not written at all (a person's edited approval is all or nothing).
- **Hold.** Shadow mode and demoted labels are decided once, here (`act.hold`), for every caller.
- **Apply by difference.** Only what the issue does not show yet is written
  (`engine.effects.diff`), so a second run writes nothing.
- **Verify** from the write answers (`act.verify`), without a second read.
- **Audit.** With an audit store, every plan lands in its audit log with its trace, effects,
  judge and outcome, whether it was applied or only recorded (dry run, shadow mode).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from issuetriage.act.applier import Applier
from issuetriage.act.hold import Mode, held
from issuetriage.act.verify import Verdict, classify, verify
from issuetriage.engine.decided import Decided
from issuetriage.engine.effects import Effects, diff
from issuetriage.engine.guard import Rejection, guard
from issuetriage.engine.pipeline import decide
from issuetriage.judges.base import Judge, Judgment
from issuetriage.models import Issue, Plan
from issuetriage.policy import Policy

if TYPE_CHECKING:  # the store loads only where a caller brings one (hooks start without it)
    from issuetriage.store.sqlite import Store

Decide = Callable[[Issue, Policy], Decided]

PULL_REQUEST = "a pull request; issuetriage triages issues"
DONE = "already handled by the bot (it carries the done marker)"
REFUSED = "not written: the guard refused part of it"


@dataclass(frozen=True)
class Report:
    """Everything one run of the flow saw and did.

    `skipped` says why the flow stopped before deciding (then `plan` is None); `writes` are the
    writes made (applied) or that would be made (dry run, held), one line each."""

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

    @property
    def held(self) -> bool:
        """Held for a person (shadow mode, a demoted label) or refused whole (`strict`)."""
        return bool(self.extra.get("shadow") or self.extra.get("held_for_review") or self.extra.get("refused"))


def engine(judge: Judge | None = None) -> Decide:
    """The engine as the decider: signals → `judge` → decision tree."""
    return lambda issue, policy: decide(issue, policy, judge)


def given(plan: Plan, judgment: Judgment | None = None, judge: str = "unknown") -> Decide:
    """A plan decided elsewhere (a reviewer's approval, scrub, a replay) as the decider; it is
    still guarded against the issue as it is now."""
    return lambda issue, policy: Decided(plan, judgment, judgment.judge if judgment else judge)


def act(applier: Applier, repo: str, number: int, policy: Policy, decider: Decide | None = None,
        mode: Mode = Mode(), *, audit: Store | None = None, respect_marker: bool = True,
        strict: bool = False, extra: dict[str, Any] | None = None) -> Report:
    """Run the one flow on `repo#number`; see the module docstring.

    `respect_marker=False` is for a writer that may act on a triaged issue (an agent writing in
    several steps, an approval, a follow-up, a close as fixed): its writes still pass the guard."""
    start = applier.spent()
    before = applier.read(repo, number)
    if before.is_pull_request:
        return Report(before, skipped=PULL_REQUEST)
    if respect_marker and policy.bot.bot_triaged in before.labels:
        verdict = Verdict(classify(before, repo, policy), before) if mode.apply else None
        return Report(before, skipped=DONE, verdict=verdict)
    policy = applier.context(policy, before)
    decided = (decider or engine())(before, policy)
    result = guard(decided.proposed, before, policy)
    result = replace(result, plan=result.plan.model_copy(update={"judge": decided.judge}))  # who decided
    effects = diff(result.plan, before, policy)
    rejections = (*decided.refused, *result.rejections)
    info = {**(extra or {}), "where": applier.where, "rejections": [r.__dict__ for r in rejections]}
    common = dict(plan=result.plan, proposed=decided.proposed, judgment=decided.judgment,
                  judge=decided.judge, rejections=rejections,
                  blocked_everything=result.blocked_everything, effects=effects)
    marks = held(result.plan, policy, mode, audit) if mode.records(policy) else None
    if strict and rejections and mode.apply:
        marks = {"refused": REFUSED}
    if marks is not None:
        info |= marks
    if not mode.records(policy) or marks is not None:
        info["api_calls"] = applier.spent() - start
        audit_id = None
        if audit is not None and not info.get("refused"):
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
