"""Agent mode, without the protocol: what an MCP client may read, and the one write it may ask for.

A `Session` serves read-only views of issues and the policy, and `submit_plan`, which turns the
agent's plan into a Plan through the agents' one proposal rule (`agents.proposal`: the same
corroboration as the hooks), sends it through the one guard and only then applies it (or, in a
dry run, reports what it would do).
The protocol layer (`mcp_server`) is a thin shell over this.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from issuetriage.act.agent import submit
from issuetriage.act.applier import Applier
from issuetriage.agents.proposal import Ask, build
from issuetriage.engine.decided import Decided
from issuetriage.engine.guard import Rejection
from issuetriage.evidence.signals import tokens_of
from issuetriage.github.apply import GitHubApplier
from issuetriage.github.reads import fetch_issue, similar_issues
from issuetriage.judges.base import Judge
from issuetriage.judges.llm.excerpt import clip, compact, issue_excerpt
from issuetriage.judges.llm.prompt import release_context, render_rules
from issuetriage.models import Decision, Issue, Plan
from issuetriage.policy import Policy
from issuetriage.store.applier import StoreApplier

if TYPE_CHECKING:
    from issuetriage.store.sqlite import Store

AGENT = "agent:mcp"


class Backend(Protocol):
    """Where issues come from (reads for the agent) and the flow's applier and audit log for its
    guarded plans (the store mirror or GitHub)."""

    repo: str
    applier: Applier
    audit: Store | None

    def issue(self, number: int) -> Issue: ...

    def similar(self, issue: Issue, limit: int) -> list[Issue]: ...


def similar_by_words(issue: Issue, pool: list[Issue], limit: int) -> list[Issue]:
    """The pool's issues sharing the most words with `issue` (Jaccard over title and body)."""
    mine = set(tokens_of(issue.text))
    scored = []
    for other in pool:
        if other.number == issue.number:
            continue
        theirs = set(tokens_of(other.text))
        union = len(mine | theirs) or 1
        scored.append((len(mine & theirs) / union, other.number, other))
    scored.sort(key=lambda t: (-t[0], t[1]))
    return [other for score, _, other in scored[:limit] if score > 0]


@dataclass
class Session:
    """One agent session over one repository, optionally limited to some issue numbers."""

    policy: Policy
    backend: Backend
    offline: Judge
    scope: frozenset[int] | None = None
    apply: bool = False
    log: list[dict[str, Any]] = field(default_factory=list)

    def _in_scope(self, number: int) -> bool:
        return self.scope is None or number in self.scope

    def get_issue(self, number: int) -> dict[str, Any]:
        issue = self.backend.issue(number)
        return {"repo": issue.repo, "number": issue.number, "state": issue.state,
                "labels": list(issue.labels), "comments": len(issue.comments),
                "untrusted_text": issue_excerpt(issue, max_comments=0),
                "writable": self._in_scope(number) and not issue.is_pull_request}

    def get_comments(self, number: int, limit: int = 10) -> list[dict[str, Any]]:
        issue = self.backend.issue(number)
        return [{"author_association": c.author_association,
                 "untrusted_text": clip(compact(c.body), 2000)} for c in issue.comments[:limit]]

    def search_similar(self, number: int, limit: int = 5) -> list[dict[str, Any]]:
        found = self.backend.similar(self.backend.issue(number), max(1, min(limit, 20)))
        return [{"number": i.number, "title": i.title, "state": i.state, "labels": list(i.labels)}
                for i in found]

    def read_policy(self) -> str:
        names = sorted(n for n in self.policy.labels
                       if not self.policy.forbidden_reason(n) and n not in self.policy.bot_label_names)
        return "\n\n".join([render_rules(self.policy), release_context(self.policy),
                            "LABELS\n" + "\n".join(names),
                            "DECISIONS\n" + ", ".join(d.value for d in Decision)])

    def submit_plan(self, number: int, decision: str, labels: list[str], templates: list[str],
                    transfer_repo: str | None, reasoning: str) -> dict[str, Any]:
        """Guard the agent's plan for one issue, then apply it (or report the dry run), through the
        one flow (`act/agent.py`): verified and audited like every other write, and held, not
        written, in shadow mode or for a demoted label."""
        if not self._in_scope(number):
            return self._refused(number, "outside the issues this session may change")

        def decided(issue: Issue, policy: Policy) -> Decided:
            plan, refused = self._proposal(issue, decision, labels, templates, transfer_repo, reasoning)
            return Decided(plan, None, AGENT, tuple(refused))

        report = submit(self.backend.applier, self.backend.repo, number, self.policy, decided,
                        apply=self.apply, audit=self.backend.audit)
        if report.plan is None or report.effects is None:
            return self._refused(number, report.skipped or "nothing to do")
        result = {"applied": report.applied and not report.effects.empty, "plan": report.plan.to_json(),
                  "effects": report.effects.describe(), "writes": list(report.writes) if report.applied else [],
                  "rejections": [{"item": r.item, "reason": r.reason} for r in report.rejections]}
        if report.held:
            result["held_for_review"] = report.extra.get("held_for_review") or "shadow mode: recorded, not written"
        if report.verdict is not None:
            result["outcome"] = report.verdict.outcome.value
            result["missing"] = list(report.verdict.missing)
        self.log.append(result)
        return result

    def _refused(self, number: int, reason: str) -> dict[str, Any]:
        report = {"applied": False, "plan": None, "effects": [], "writes": [],
                  "rejections": [{"item": f"#{number}", "reason": reason}]}
        self.log.append(report)
        return report

    def _proposal(self, issue: Issue, decision: str, labels: list[str], templates: list[str],
                  transfer_repo: str | None, reasoning: str) -> tuple[Plan, list[Rejection]]:
        refused: list[Rejection] = []
        try:
            chosen = Decision(decision)
        except ValueError:
            refused.append(Rejection(f"decision {decision[:40]!r}", "not a decision of the tree"))
            chosen = Decision.TRIAGE_REVIEW
        ask = Ask(chosen, tuple(labels), tuple(templates), transfer_repo=transfer_repo or None,
                  reasoning=reasoning)
        plan, more = build(ask, issue, self.policy, self.offline, AGENT)
        return plan, refused + more


class StoreBackend:
    """Issues from the local store; applying updates the mirror and its audit log."""

    def __init__(self, store: Store, repo: str) -> None:

        self.store, self.repo = store, repo
        self.applier: Applier = StoreApplier(store)
        self.audit: Store | None = store

    def issue(self, number: int) -> Issue:
        return self.store.get_issue(self.repo, number)

    def similar(self, issue: Issue, limit: int) -> list[Issue]:
        return similar_by_words(issue, list(self.store.issues(self.repo)), limit)


class GitHubBackend:
    """Issues read from GitHub just before use; guarded plans applied by the GitHub applier and
    audited in `audit` (a store) when given."""

    def __init__(self, client: Any, repo: str, audit: Store | None = None) -> None:

        self.client, self.repo, self.audit = client, repo, audit
        self.applier: Applier = GitHubApplier(client)

    def issue(self, number: int) -> Issue:

        return fetch_issue(self.client, self.repo, number)

    def similar(self, issue: Issue, limit: int) -> list[Issue]:

        return [i for i in similar_issues(self.client, self.repo, issue.title, limit + 1)
                if i.number != issue.number][:limit]
