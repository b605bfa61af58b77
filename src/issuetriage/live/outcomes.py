"""What humans did after each plan the bot made (applied) or would have made (shadow), read
from the label events `sync` stores, and the live precision and recall that follows.

Scoring reuses `eval`'s definitions (evaluate/scoring.py): the gold of an issue is the content
labels it carries once humans have acted, so on a replayed history the live table and `eval`'s
per-label table measure the same thing (docs/live.md)."""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from issuetriage.errors import UserError
from issuetriage.evaluate.scoring import PRF, IssueResult, per_label, score_issue, set_prf
from issuetriage.evidence.followup import utc
from issuetriage.judges.learned.corpus import Example, content_labels, gold_labels
from issuetriage.live import events as label_events
from issuetriage.live.events import LabelEvent
from issuetriage.models import Issue, Plan
from issuetriage.policy import Policy
from issuetriage.store.sqlite import Store

MISLABELED = "bot-mislabeled"


@dataclass(frozen=True)
class PlanRow:
    """One audited plan, decoded."""

    audit_id: int
    plan: Plan
    recorded_at: datetime
    judge: str
    applied: bool
    shadow: bool


@dataclass(frozen=True)
class Outcome:
    """What happened to one plan's labels after it was made."""

    row: PlanRow
    issue: Issue
    bot_labels: frozenset[str]
    kept: frozenset[str]
    removed: dict[str, str]  # label -> who removed it
    missed: frozenset[str]  # content labels humans added that the plan did not have
    mislabeled: bool
    reopened: bool
    triaged_at: datetime | None  # first human label or state event after the plan
    final_labels: frozenset[str] = field(default_factory=frozenset)
    human_added: frozenset[str] = field(default_factory=frozenset)

    @property
    def humans_acted(self) -> bool:
        return self.triaged_at is not None


def plan_rows(store: Store, repo: str, since: datetime | None = None,
              until: datetime | None = None) -> list[PlanRow]:
    """Audited plans of `repo` recorded in [since, until], oldest first."""
    rows = []
    for r in store.db.execute("SELECT * FROM audit WHERE repo=? ORDER BY id", (repo,)):
        at = utc(datetime.fromisoformat(r["recorded_at"]))
        if (since and at < since) or (until and at > until):
            continue
        extra = json.loads(r["extra"])
        rows.append(PlanRow(r["id"], Plan.model_validate(json.loads(r["plan"])), at, r["judge"],
                            bool(r["applied"]), bool(extra.get("shadow"))))
    return rows


def latest_per_issue(rows: Iterable[PlanRow]) -> list[PlanRow]:
    """The newest plan of each issue: a re-run replaces what an earlier one proposed."""
    newest: dict[int, PlanRow] = {}
    for row in rows:
        newest[row.plan.number] = row
    return sorted(newest.values(), key=lambda r: r.plan.number)


def outcome(row: PlanRow, issue: Issue, history: Sequence[LabelEvent], policy: Policy,
            applied_here: frozenset[str] = frozenset()) -> Outcome:
    """Compare one plan with what humans did after it. `applied_here`: labels plans applied to
    the local mirror, which leave no GitHub event."""
    bots = set(policy.meta.live.bot_accounts)
    content = content_labels(policy)
    bot_labels = frozenset(l for l in row.plan.labels_added if l in content)
    after = [e for e in history if e.created_at >= row.recorded_at and e.actor not in bots]
    final = (frozenset(label_events.labels_at(history)) | (applied_here & set(issue.labels))
             if history else frozenset(issue.labels))
    removed = {e.label: e.actor for e in after if e.event == "unlabeled" and e.label in bot_labels}
    added = {e.label for e in after if e.event == "labeled" and e.label}
    reopened = row.applied and row.plan.close and any(e.event == "reopened" for e in after)
    return Outcome(
        row=row, issue=issue, bot_labels=bot_labels,
        kept=frozenset(l for l in bot_labels if l in final and l not in removed),
        removed=removed, missed=frozenset(l for l in added & final if l in content) - bot_labels,
        mislabeled=MISLABELED in added, reopened=reopened,
        triaged_at=min((e.created_at for e in after), default=None), final_labels=final,
        human_added=frozenset(added))


def outcomes(store: Store, policy: Policy, repo: str | None = None, since: datetime | None = None,
             until: datetime | None = None) -> list[Outcome]:
    """The outcome of the newest plan of every audited issue of `repo` (default: the profile's).

    Fails closed when the stored events cannot explain an issue's labels (a gap)."""
    repo = repo or policy.meta.repo
    check_profile(store, policy, repo)
    history = label_events.load(store, repo)
    applied_here: dict[int, set[str]] = defaultdict(set)
    for row in plan_rows(store, repo):
        if row.applied:
            applied_here[row.plan.number] |= set(row.plan.labels_added)
    out = []
    for row in latest_per_issue(plan_rows(store, repo, since, until)):
        issue = store.get_issue(repo, row.plan.number)
        mine = frozenset(applied_here[issue.number])
        if history:  # events were synced for this repo: each issue's must be complete
            label_events.check_complete(issue, history.get(issue.number, []), mine)
        out.append(outcome(row, issue, history.get(issue.number, []), policy, mine))
    return out


def check_profile(store: Store, policy: Policy, repo: str) -> None:
    """A store holding only other repositories' issues is not this profile's store."""
    repos = [r[0] for r in store.db.execute("SELECT DISTINCT repo FROM issues ORDER BY repo")]
    if repos and repo not in repos:
        raise UserError(f"{store.path}: holds issues of {', '.join(repos[:3])}, not of {repo} "
                        f"(profile {policy.name}); pass the profile of that store")


def gold(o: Outcome, policy: Policy) -> frozenset[str]:
    """The labels humans stand by: final content labels; a `bot-mislabeled` mark with no label
    removed disowns the bot's labels that no human added too (the human said wrong without
    saying which; a shadow plan's labels are on the issue only if a human added them)."""
    labels = gold_labels(o.final_labels, policy)
    if o.mislabeled and not o.removed:
        return labels - (o.bot_labels - o.human_added)
    return labels


def scored(found: Sequence[Outcome], policy: Policy) -> list[tuple[Outcome, IssueResult]]:
    """Each plan humans acted on, scored exactly as `eval` scores a replayed plan."""
    out = []
    for o in found:
        if not o.humans_acted:
            continue
        example = Example(issue=o.issue, raw_labels=tuple(sorted(o.final_labels)), gold=gold(o, policy),
                          line=0, final_state=o.issue.state)
        out.append((o, score_issue(example, o.row.plan, {}, policy)))
    return out


@dataclass(frozen=True)
class LiveQuality:
    """Live precision and recall: per label, per decision kind, per judge, and their counts."""

    per_label: dict[str, PRF]
    per_decision: dict[str, PRF]
    per_judge: dict[str, PRF]
    micro: PRF
    plans: int
    acted_on: int
    scored_issues: int


def _grouped(pairs: Iterable[tuple[str, IssueResult]]) -> dict[str, PRF]:
    groups: dict[str, list[IssueResult]] = defaultdict(list)
    for key, result in pairs:
        groups[key].append(result)
    return {k: set_prf((r.gold, r.predicted) for r in v) for k, v in sorted(groups.items())}


def live_quality(found: Sequence[Outcome], policy: Policy) -> LiveQuality:
    """Score the outcomes; like `eval`, only issues with a gold content label count."""
    pairs = [(o, r) for o, r in scored(found, policy) if r.labelled]
    results = [r for _, r in pairs]
    return LiveQuality(
        per_label=per_label(results),
        per_decision=_grouped((o.row.plan.decision.value, r) for o, r in pairs),
        per_judge=_grouped((o.row.judge, r) for o, r in pairs),
        micro=set_prf((r.gold, r.predicted) for r in results),
        plans=len(found), acted_on=sum(o.humans_acted for o in found), scored_issues=len(results))


def window(now: datetime, days: int) -> tuple[datetime, datetime]:
    return now - timedelta(days=days), now
