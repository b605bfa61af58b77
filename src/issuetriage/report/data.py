"""Everything the report shows, computed from the store: no HTML here."""

from __future__ import annotations

import statistics
from collections import Counter, defaultdict
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from issuetriage.evidence.followup import utc
from issuetriage.judges.learned.corpus import gold_labels
from issuetriage.judges.learned.train import suggested_implications
from issuetriage.live import events as label_events
from issuetriage.live.outcomes import (
    LiveQuality,
    Outcome,
    latest_per_issue,
    live_quality,
    outcomes,
    plan_rows,
    window,
)
from issuetriage.policy import Policy
from issuetriage.store.sqlite import Store


@dataclass(frozen=True)
class Report:
    repo: str
    profile: str
    generated_at: datetime
    window: tuple[datetime, datetime] | None
    quality: LiveQuality
    demoted: frozenset[str]
    corrections: dict[str, int]
    decisions_by_day: dict[str, Counter[str]]
    triage_days: list[float]
    queues: list[dict[str, Any]]
    unused: list[str]
    unused_months: int
    missing_from_catalog: list[tuple[str, int]]
    suggested_implies: list[dict[str, object]]
    target: float

    @property
    def triage_median(self) -> float:
        return statistics.median(self.triage_days) if self.triage_days else 0.0


def build(store: Store, policy: Policy, now: datetime | None = None, days: int | None = None) -> Report:
    """The report over the last `days` (default: all plans) as of `now`."""
    now = utc(now or datetime.now(UTC))
    repo = policy.meta.repo
    span = window(now, days) if days else None
    found = outcomes(store, policy, repo, *(span or (None, None)))
    issues = list(store.issues(repo))
    return Report(
        repo=repo, profile=policy.name, generated_at=now, window=span,
        quality=live_quality(found, policy), demoted=store.demoted(repo),
        corrections=corrections(store, found), decisions_by_day=decision_mix(store, repo, span),
        triage_days=[(utc(o.triaged_at) - utc(o.issue.created_at)).total_seconds() / 86400
                     for o in found if o.triaged_at and o.issue.created_at],
        queues=queues(issues, policy, now), unused=unused_labels(store, issues, policy, now),
        unused_months=policy.meta.live.unused_months,
        missing_from_catalog=missing_from_catalog(store, issues, policy),
        suggested_implies=suggested_implications([gold_labels(i.labels, policy) for i in issues], policy),
        target=policy.meta.live.precision_target)


def corrections(store: Store, found: list[Outcome]) -> dict[str, int]:
    """What humans corrected: bot labels removed, labels the bot missed, bot-mislabeled marks,
    reopened bot closes, and plans rejected in review."""
    rejected = store.db.execute("SELECT COUNT(*) FROM reviews WHERE verdict='rejected'").fetchone()[0]
    return {"bot labels kept": sum(len(o.kept) for o in found if o.humans_acted),
            "bot labels removed": sum(len(o.removed) for o in found),
            "labels humans added that the bot missed": sum(len(o.missed) for o in found),
            "bot-mislabeled applied": sum(o.mislabeled for o in found),
            "reopened after a bot close": sum(o.reopened for o in found),
            "plans rejected in review": rejected}


def decision_mix(store: Store, repo: str, span: tuple[datetime, datetime] | None) -> dict[str, Counter[str]]:
    """The newest plan of each issue by day and decision: one count per issue, as the headline
    counts (a dry run and a shadow run of the same issue are one plan, not two)."""
    by_day: dict[str, Counter[str]] = defaultdict(Counter)
    for row in latest_per_issue(plan_rows(store, repo, *(span or (None, None)))):
        by_day[row.recorded_at.date().isoformat()][row.plan.decision.value] += 1
    return dict(sorted(by_day.items()))


def queues(issues: list, policy: Policy, now: datetime) -> list[dict[str, Any]]:
    """Open issues per queue label (the profile's labels and prefixes), with their ages in days."""
    live = policy.meta.live
    ages: dict[str, list[float]] = defaultdict(list)
    for issue in issues:
        if issue.state != "open" or issue.is_pull_request:
            continue
        for label in issue.labels:
            if policy.is_oncall(label) or label in live.queue_labels:
                age = (now - utc(issue.created_at)).days if issue.created_at else 0
                ages[label].append(age)
    return [{"label": label, "open": len(a), "median_age_days": statistics.median(a), "oldest_days": max(a)}
            for label, a in sorted(ages.items(), key=lambda kv: (-len(kv[1]), kv[0]))]


def unused_labels(store: Store, issues: list, policy: Policy, now: datetime) -> list[str]:
    """Catalog labels no issue received in the last `unused_months` (by label event, or by the
    creation date of an issue carrying it when no events were synced) and no open issue carries."""
    cutoff = now - timedelta(days=30 * policy.meta.live.unused_months)
    last: dict[str, datetime] = {}
    for events in label_events.load(store, policy.meta.repo).values():
        for e in events:
            if e.event == "labeled" and e.label:
                last[e.label] = max(last.get(e.label, e.created_at), e.created_at)
    for issue in issues:
        for label in issue.labels:
            if issue.created_at and label not in last:
                last[label] = utc(issue.created_at)
    on_open = {label for issue in issues if issue.state == "open" for label in issue.labels}
    return sorted(n for n in policy.labels if n not in policy.bot_label_names and n not in on_open
                  and (n not in last or utc(last[n]) < cutoff))


def missing_from_catalog(store: Store, issues: list, policy: Policy) -> list[tuple[str, int]]:
    """Labels the repository uses (on stored issues, or defines) that the catalog lacks."""
    known = set(policy.labels) | policy.bot_label_names | set(policy.meta.process_labels)
    used = Counter(label for issue in issues for label in issue.labels if label not in known)
    for row in store.db.execute("SELECT name FROM github_labels WHERE repo=?", (policy.meta.repo,)):
        if row["name"] not in known:
            used[row["name"]] += 0
    return sorted(used.items(), key=lambda kv: (-kv[1], kv[0]))
