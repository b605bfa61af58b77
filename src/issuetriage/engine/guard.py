"""The one guard: a pure filter from a proposed plan to a safe plan plus what it rejected and why.

Every writer (engine, LLM, hooks, MCP) sends its plan through `guard` before anything is applied.
It never raises for a bad proposal: whatever is unsafe is dropped and reported.
"""

from __future__ import annotations

from dataclasses import dataclass

from issuetriage.evidence.downloads import REMOVAL_NOTICE, download_links, redact
from issuetriage.evidence.followup import posted_templates, reminded_without_reply
from issuetriage.evidence.signals import links_in
from issuetriage.models import CLOSING_DECISIONS, Decision, FixedInRelease, Issue, Plan, TraceStep
from issuetriage.policy import Policy


@dataclass(frozen=True)
class Rejection:
    """One thing the guard refused, and why."""

    item: str
    reason: str


@dataclass(frozen=True)
class GuardResult:
    """The safe plan, what was refused, and whether the proposal lost every change it wanted."""

    plan: Plan
    rejections: tuple[Rejection, ...]
    blocked_everything: bool = False


def guard(proposed: Plan, issue: Issue, policy: Policy) -> GuardResult:
    """Make `proposed` safe to apply to `issue` under `policy`."""
    rejected: list[Rejection] = []
    bot = policy.bot
    if (proposed.repo, proposed.number) != (issue.repo, issue.number):
        rejected.append(Rejection(f"{proposed.repo}#{proposed.number}",
                                  f"plan targets another issue than {issue.ref}"))
        proposed = Plan(repo=issue.repo, number=issue.number, decision=Decision.TRIAGE_REVIEW,
                        labels_added=(bot.triage_review,), trace=proposed.trace)
    if issue.is_pull_request:  # the issues API serves pull requests too: never write to one
        rejected.append(Rejection(issue.ref, "a pull request: the bot triages issues only"))
        trace = proposed.trace + (TraceStep(step="guard", outcome=f"rejected {issue.ref}",
                                            reason=rejected[-1].reason),)
        return GuardResult(Plan(repo=issue.repo, number=issue.number, decision=proposed.decision,
                                trace=trace), tuple(rejected), blocked_everything=True)
    decision = proposed.decision
    labels, needs_review = _allowed_labels(proposed, issue, policy, rejected)
    if decision is Decision.REDIRECT_ONCALL:
        labels = _one_oncall(labels, policy, rejected)
        if not any(policy.is_oncall(label) for label in labels):
            decision, needs_review = Decision.TRIAGE_REVIEW, True
    elif decision is Decision.REQUEST_REPRODUCTION and _queue_alone(labels, policy):
        # a reproduction request is still routed; to a secondary queue, as a redirect would be
        labels = _one_oncall(labels, policy, rejected)
    else:
        labels = _no_stray_queue(labels, policy, rejected)
    fixed = _fixed_in_release(proposed, issue, rejected)
    templates = _allowed_templates(proposed, issue, policy, rejected, filled=fixed is not None)
    close = proposed.close
    if close and decision not in CLOSING_DECISIONS:
        rejected.append(Rejection("close", f"closing is only for usage questions and releases scrub "
                                           f"showed fixed, not {decision.value}"))
        close = False
    if close and decision is Decision.FIXED_IN_RELEASE and not (fixed and _comments_with_close(
            proposed, templates, issue, policy)):
        if fixed:
            rejected.append(Rejection("close", "a close as fixed posts its template naming the release"))
        close = False
    if close and decision is Decision.CLOSE_STALE and not reminded_without_reply(issue, policy):
        rejected.append(Rejection("close", "a stale close needs the bot's reminder, unanswered by the reporter"))
        close = False
    if close and issue.state != "open":
        close = False
    body_edit = _allowed_body_edit(proposed, issue, policy, rejected)
    transfer = _allowed_transfer(proposed, issue, policy, rejected)
    if decision is Decision.TRANSFER and transfer is None:
        decision, needs_review = Decision.TRIAGE_REVIEW, True
    wanted_change = bool(proposed.labels_added or proposed.templates or proposed.close
                         or proposed.body_edit is not None or proposed.transfer_repo)
    content = [label for label in labels if label not in policy.bot_label_names]
    blocked = wanted_change and decision is not Decision.SKIP_ALREADY_ROUTED and not (
        content or templates or close or body_edit is not None or transfer)
    if blocked and rejected:
        decision, needs_review = Decision.TRIAGE_REVIEW, True
    if decision is Decision.SKIP_ALREADY_ROUTED:
        rejected += [Rejection(item, "an already-routed issue gets nothing else") for item in labels + templates]
        labels, templates, needs_review = [], [], False
    if needs_review or bot.triage_review in labels:  # proposed review is review too
        labels = _with_review(labels, issue, policy, rejected)
    if labels or templates or close or body_edit is not None or transfer:
        if bot.bot_triaged not in issue.labels and bot.bot_triaged not in labels:
            labels.append(bot.bot_triaged)
    trace = proposed.trace + tuple(TraceStep(step="guard", outcome=f"rejected {r.item}", reason=r.reason)
                                   for r in rejected)
    plan = Plan(repo=issue.repo, number=issue.number, decision=decision,
                labels_added=tuple(labels), templates=tuple(templates), close=close,
                body_edit=body_edit, transfer_repo=transfer, trace=trace,
                fixed_in_release=fixed if decision is Decision.FIXED_IN_RELEASE else None)
    return GuardResult(plan, tuple(rejected), blocked_everything=bool(blocked and rejected))


def _fixed_in_release(plan: Plan, issue: Issue, rejected: list[Rejection]) -> FixedInRelease | None:
    """Scrub's evidence, when the plan is a close as fixed and the evidence holds for `issue` as it
    is now (sealed by scrub in this process, about this issue and its current repro)."""
    evidence = plan.fixed_in_release
    if plan.decision is not Decision.FIXED_IN_RELEASE:
        if evidence is not None:
            rejected.append(Rejection("fixed-in-release evidence", "only a fixed_in_release plan carries it"))
        return None
    from issuetriage.evidence.fixed import refusal  # lazy: markdown parsing (68 ms) only for this decision

    why = "not corroborated: no scrub evidence" if evidence is None else refusal(evidence, issue)
    if why:
        rejected.append(Rejection("close as fixed", why))
        return None
    return evidence


def _comments_with_close(plan: Plan, kept: list[str], issue: Issue, policy: Policy) -> bool:
    """A close as fixed goes with a template naming the release, kept now or posted before."""
    posted = posted_templates(issue, policy)
    return any(policy.templates[name].variables and (name in kept or name in posted)
               for name in plan.templates if name in policy.templates)


def _allowed_labels(plan: Plan, issue: Issue, policy: Policy,
                    rejected: list[Rejection]) -> tuple[list[str], bool]:
    """Catalog-only, not forbidden, not already present, generic dropped next to specific."""
    allowed: list[str] = []
    needs_review = False
    existing = set(issue.labels)
    for label in plan.labels_added:
        if label in allowed or label in existing:
            continue
        reason = policy.forbidden_reason(label)
        if reason:
            rejected.append(Rejection(label, reason))
            needs_review = True
        elif label not in policy.labels and label not in policy.bot_label_names:
            rejected.append(Rejection(label, "not in the label catalog"))
        else:
            allowed.append(label)
    present = existing | set(allowed)
    for pair in policy.redundancy.pair:
        if pair.specific in present and pair.generic in allowed:
            allowed.remove(pair.generic)
            rejected.append(Rejection(pair.generic, f"redundant next to {pair.specific!r}"))
    return allowed, needs_review


def _one_oncall(labels: list[str], policy: Policy, rejected: list[Rejection]) -> list[str]:
    """A redirect carries exactly one oncall label and nothing but the bot's markers."""
    kept: list[str] = []
    for label in labels:
        if policy.is_oncall(label) and not any(policy.is_oncall(k) for k in kept):
            kept.append(label)
        elif label in (policy.bot.bot_triaged, policy.bot.triage_review):
            kept.append(label)
        else:
            rejected.append(Rejection(label, "a redirect carries exactly one oncall label"))
    return kept


def _queue_alone(labels: list[str], policy: Policy) -> bool:
    """A secondary-queue label without `oncall: pt2` (beside it, it is co-routing)."""
    pt2 = policy.queues.pt2
    return (any(label in policy.redirect_labels for label in labels)
            and not (pt2 is not None and pt2.label in labels))


def _no_stray_queue(labels: list[str], policy: Policy, rejected: list[Rejection]) -> list[str]:
    """Secondary-queue labels come only with a redirect, or beside `oncall: pt2` (co-routing)."""
    pt2 = policy.queues.pt2
    if pt2 is not None and pt2.label in labels:
        return labels
    kept = []
    for label in labels:
        if label in policy.redirect_labels:
            rejected.append(Rejection(label, "a secondary-queue label needs a redirect decision"))
        else:
            kept.append(label)
    return kept


def _with_review(labels: list[str], issue: Issue, policy: Policy,
                 rejected: list[Rejection]) -> list[str]:
    """Under review: add `triage review`, and nothing says `triaged`."""
    bot = policy.bot
    if bot.triaged in labels:
        labels.remove(bot.triaged)
        rejected.append(Rejection(bot.triaged, "an issue under review is not triaged yet"))
    if bot.triage_review not in labels and bot.triage_review not in issue.labels:
        labels.append(bot.triage_review)
    return labels


def _allowed_templates(plan: Plan, issue: Issue, policy: Policy, rejected: list[Rejection],
                       filled: bool = False) -> list[str]:
    """Known templates only, each at most once per issue (never one the bot already posted); a
    template with variables only when verified evidence fills them (`filled`)."""
    posted = posted_templates(issue, policy)
    kept: list[str] = []
    for name in plan.templates:
        if name not in policy.templates:
            rejected.append(Rejection(f"template {name}", "not a profile template"))
        elif policy.templates[name].variables and not filled:
            rejected.append(Rejection(f"template {name}", "its variables come only from verified "
                                                          "scrub evidence, which this plan lacks"))
        elif name in kept or name in posted:
            continue
        else:
            kept.append(name)
    return kept


def _allowed_body_edit(plan: Plan, issue: Issue, policy: Policy,
                       rejected: list[Rejection]) -> str | None:
    """A body edit may only replace download links with the removal notice."""
    if plan.body_edit is None or plan.body_edit == issue.body:
        return None
    if plan.decision is Decision.REQUEST_REPRODUCTION:
        links = download_links(links_in(issue.body), policy)
        removed = tuple(url for url in links if url not in plan.body_edit)
        if removed and redact(issue.body, removed) == plan.body_edit and REMOVAL_NOTICE in plan.body_edit:
            return plan.body_edit
    rejected.append(Rejection("body edit", "only the removal of download links may edit the body"))
    return None


def _allowed_transfer(plan: Plan, issue: Issue, policy: Policy,
                      rejected: list[Rejection]) -> str | None:
    """Transfers only for the transfer decision and only to the profile's sibling repos."""
    target = plan.transfer_repo
    if not target:
        return None
    if plan.decision is not Decision.TRANSFER:
        rejected.append(Rejection(f"transfer to {target}", "only a transfer decision moves an issue"))
    elif target not in policy.transfer_repos or target == issue.repo:
        rejected.append(Rejection(f"transfer to {target}", "not a sibling repository of this profile"))
    else:
        return target
    return None
