"""The LLM judge and the hybrid judge.

One call per issue; the answer is validated against the schema, retried once if it is not valid,
then sent to review. Answers are cached. An outage degrades to the offline judge, visibly: the
judgment's `judge` field says so and the audit log records it. A closing verdict needs the
offline judge's agreement on the kind, so an issue that talks the model into "just a question,
close it" is not closed on the model's word alone.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from issuetriage.evidence.history import History
from issuetriage.evidence.signals import Signals
from issuetriage.judges.base import CLOSING_KINDS, Judge, Judgment, Kind
from issuetriage.judges.llm.cache import AnswerCache, Recorder
from issuetriage.judges.llm.excerpt import bystander_comments
from issuetriage.judges.llm.prompt import DEFAULT_STYLE, MAX_EXAMPLES, Prompt, build_prompt
from issuetriage.judges.llm.providers import Provider, ProviderOutage
from issuetriage.judges.llm.schema import SchemaViolation, parse_answer, to_judgment
from issuetriage.models import Issue
from issuetriage.policy import Policy

INVALID_ANSWER = "llm_invalid_answer"
Pricer = Callable[[int, int], float]
TRUSTED_AFTER = 5  # of the bot's own labels humans saw before their live precision counts
PRIOR_WEIGHT = 5.0  # the calibrated probability counts as this many observations beside them


@dataclass(frozen=True)
class LivePrecision:
    """What humans did with the bot's own applications of one label: `kept` of `applied`
    (`Store.bot_labels_kept`)."""

    kept: int
    applied: int

    def shrunk(self, probability: float) -> float:
        """The label's probability given the corrections: below `TRUSTED_AFTER` observations the
        calibrated `probability` alone; from there the observed precision shrunk toward it, with
        the calibrated value weighing `PRIOR_WEIGHT` observations."""
        if self.applied < TRUSTED_AFTER:
            return probability
        return (self.kept + PRIOR_WEIGHT * probability) / (self.applied + PRIOR_WEIGHT)


@runtime_checkable
class Calibrated(Protocol):
    """An offline judge whose label confidences map back to calibrated probabilities (the
    history stack's: `NeighbourVote.probability`)."""

    def probability(self, confidence: float, policy: Policy) -> float: ...


def expected_f1(judgment: Judgment, policy: Policy, probability: Callable[[float], float],
                live_precision: Mapping[str, LivePrecision] | None = None) -> float:
    """The label F1 the offline answer is expected to reach, from calibrated per-label
    probabilities: 2·Σ p over the labels it adds / (labels it adds + Σ p over every candidate).
    A label's live precision (from corrections, `LivePrecision.shrunk`) caps the probability of
    the labels it adds when lower."""
    gate = policy.meta.thresholds.label
    live = live_precision or {}
    chosen = total = 0.0
    added = 0
    for score in judgment.labels:
        if score.name not in policy.nameable_labels:
            continue
        p = probability(score.confidence)
        if score.confidence >= gate:
            seen = live.get(score.name)
            p = min(p, seen.shrunk(p)) if seen is not None else p
            chosen, added = chosen + p, added + 1
        total += p
    return 2 * chosen / (added + total) if added + total > 0 else 1.0


def offline_confident(judgment: Judgment, threshold: float, policy: Policy,
                      probability: Callable[[float], float] | None = None,
                      live_precision: Mapping[str, LivePrecision] | None = None) -> bool:
    """The offline judge decides alone when it is sure of the kind (other kinds than bugs and
    feature requests: at `threshold`) and, for bugs and feature requests, transfers or adds at
    least one label and its expected label F1 reaches `threshold`. The threshold is the hybrid's
    cost knob: higher sends more issues to the model (docs/llm.md)."""
    if judgment.kind is Kind.UNCLEAR:
        return False
    labelled_kind = judgment.kind in (Kind.BUG, Kind.FEATURE)
    if judgment.kind_confidence < (policy.meta.thresholds.label if labelled_kind else threshold):
        return False
    if not labelled_kind or judgment.transfer_confidence >= threshold:
        return True
    if not judgment.confident(policy.meta.thresholds.label):
        return False
    return expected_f1(judgment, policy, probability or (lambda c: c), live_precision) >= threshold


def corroborate_close(judgment: Judgment, offline: Judgment | None, policy: Policy) -> Judgment:
    """Keep a closing kind below the close threshold unless the offline judge saw the same kind."""
    if judgment.kind not in CLOSING_KINDS or (offline is not None and offline.kind == judgment.kind):
        return judgment
    ceiling = max(policy.meta.thresholds.question_close - 0.05, 0.0)
    if judgment.kind_confidence <= ceiling:
        return judgment
    note = " Close not corroborated by the offline judge; confidence capped."
    return judgment.model_copy(update={"kind_confidence": ceiling,
                                       "reasoning": judgment.reasoning + note})


# The kinds after which the tree labels the issue and acts on nothing else: no close, no comment.
LABELLED_KINDS = frozenset({Kind.BUG, Kind.FEATURE})


def model_kind_stands(judgment: Judgment, offline: Judgment) -> bool:
    """Under the shield, the model's kind stands when the offline judge read the same, or when
    the model read a bug or feature request where the offline judge read a kind the tree stops
    at (a question, expected behaviour, or unclear: close or ask the reporter): others' text can
    then only keep the issue open and labelled, which the model's labels already decide, never
    make the bot close, comment or ask. Between bug and feature the offline reading stands."""
    return judgment.kind == offline.kind or (judgment.kind in LABELLED_KINDS
                                             and offline.kind not in LABELLED_KINDS)


def shield_bystanders(judgment: Judgment, offline: Judgment | None, issue: Issue,
                      policy: Policy, past_issues: bool = False) -> Judgment:
    """Text by others than the reporter cannot change kind or routing on its own: when the
    request showed bystander comments or `past_issues` (the repository's history, written by
    anyone), the model's kind, missing repro, transfer and oncall queue must match the offline
    judge's (which reads only the reporter's text, and of past issues only their maintainers'
    labels), or the offline judge's kind (unless `model_kind_stands`), missing repro and
    transfer are kept, and only the queues both name (the offline judge at its routing gate)
    stay: the shield never adds a queue the model did not name, nor keeps one only the model
    named, nor makes the tree stop (close, ask) where the model read a bug or feature request."""
    if offline is None or not (past_issues or bystander_comments(issue)):
        return judgment
    model_queues = {s.name for s in judgment.labels if policy.is_oncall(s.name)}
    offline_queues = {s.name for s in offline.labels if policy.is_oncall(s.name)}
    own_kind = model_kind_stands(judgment, offline)
    same = (own_kind and judgment.missing_repro == offline.missing_repro
            and judgment.transfer_repo == offline.transfer_repo and model_queues <= offline_queues)
    if same:
        return judgment
    route = policy.meta.thresholds.route
    kept = tuple(s for s in judgment.labels if not policy.is_oncall(s.name) or offline.score(s.name) >= route)
    kind = ({} if own_kind and judgment.kind != offline.kind else
            {"kind": offline.kind, "kind_confidence": min(judgment.kind_confidence, offline.kind_confidence)})
    note = (f" {'Past issues' if past_issues else 'Bystander comments'} present: "
            f"{'kind and routing' if kind else 'routing'} kept from the offline judge, which reads only "
            "the reporter's text.")
    return judgment.model_copy(update={
        **kind,
        "missing_repro": offline.missing_repro, "transfer_repo": offline.transfer_repo,
        "transfer_confidence": offline.transfer_confidence, "labels": kept,
        "reasoning": judgment.reasoning + note})


def degraded(offline: Judgment, error: Exception, issue: Issue) -> Judgment:
    """The offline judgment, marked as a fallback so the plan and the audit log show the outage,
    and warned on stderr."""
    # on stderr, whoever calls: a plan or an eval must never pass an offline answer for the model's
    sys.stderr.write(f"warning: {issue.ref}: LLM unavailable ({error}); the {offline.judge} "
                     "judge decided\n")
    return offline.model_copy(update={
        "judge": f"{offline.judge}:llm-outage",
        "reasoning": f"LLM unavailable ({error}); the offline judge decided. {offline.reasoning}".strip(),
    })


def review(judge: str, error: str, tokens_in: int, tokens_out: int, cost: float) -> Judgment:
    """Two invalid answers: a human looks (`triage review`), and the spend is still recorded.
    The kind is unknown; BUG at zero confidence keeps the tree from closing the issue or asking
    the reporter for details (it was the model that failed, not them)."""
    return Judgment(judge=judge, kind=Kind.BUG, kind_confidence=0.0,
                    escalate_reasons=(INVALID_ANSWER,),
                    reasoning=f"The model's answer failed the schema twice ({error}).",
                    tokens_in=tokens_in, tokens_out=tokens_out, cost_usd=cost)


def request(issue: Issue, signals: Signals, policy: Policy, offline: Judgment | None,
            history: History | None, style: str = DEFAULT_STYLE,
            examples: int = MAX_EXAMPLES) -> Prompt:
    """The request for one issue: the prompt with its most similar earlier labelled issues."""
    precedents = history.similar(issue, examples) if history is not None else ()
    return build_prompt(issue, signals, policy, offline, precedents, style)


class LLMJudge:
    """A model answers the tree's questions; the offline judge supplies candidates and fallback."""

    def __init__(self, provider: Provider, pricer: Pricer, cache: AnswerCache | None = None,
                 offline: Judge | None = None, history: History | None = None,
                 style: str = DEFAULT_STYLE, examples: int = MAX_EXAMPLES,
                 recorder: Recorder | None = None) -> None:
        self.provider, self.pricer, self.cache, self.offline = provider, pricer, cache, offline
        self.history, self.style, self.examples = history, style, examples
        self.recorder = recorder
        self.name = f"llm:{provider.model}"

    def prompt(self, issue: Issue, signals: Signals, policy: Policy,
               offline: Judgment | None) -> Prompt:
        """The request this judge sends for `issue` (its history examples included)."""
        return request(issue, signals, policy, offline, self.history, self.style, self.examples)

    def judge(self, issue: Issue, signals: Signals, policy: Policy) -> Judgment:
        offline = self.offline.judge(issue, signals, policy) if self.offline else None
        try:
            return self.ask(issue, signals, policy, offline)
        except ProviderOutage as exc:
            if offline is None:
                raise
            return degraded(offline, exc, issue)

    def ask(self, issue: Issue, signals: Signals, policy: Policy,
            offline: Judgment | None) -> Judgment:
        """One validated answer (cached, or bought with at most two calls); raises ProviderOutage."""
        prompt = self.prompt(issue, signals, policy, offline)
        judgment = self._cached(prompt, policy) or self._call(prompt, policy)
        judgment = shield_bystanders(judgment, offline, issue, policy, past_issues=bool(prompt.examples))
        return corroborate_close(judgment, offline, policy)

    def _cached(self, prompt: Prompt, policy: Policy) -> Judgment | None:
        if self.cache is None:
            return None
        hit = self.cache.get(prompt.digest, prompt.version, self.provider.model)
        if hit is None:
            return None
        try:
            answer = parse_answer(hit.answer, prompt.label_check, prompt.templates,
                                  prompt.transfer_repos)
        except SchemaViolation:
            return None
        self._record(prompt, answer.model_dump(mode="json"))
        return to_judgment(answer, policy, f"{self.name}:cached")

    def _record(self, prompt: Prompt, answer: dict[str, Any]) -> None:
        if self.recorder is not None:
            self.recorder.put(prompt.repo, prompt.number, answer, prompt.version, prompt.digest)

    def _call(self, prompt: Prompt, policy: Policy) -> Judgment:
        spent_in = spent_out = 0
        error: str | None = None
        for _ in range(2):
            reply = self.provider.complete(prompt, retry_error=error)
            spent_in, spent_out = spent_in + reply.tokens_in, spent_out + reply.tokens_out
            try:
                answer = parse_answer(reply.payload, prompt.label_check, prompt.templates,
                                      prompt.transfer_repos)
            except SchemaViolation as exc:
                error = str(exc)
                continue
            if self.cache is not None:
                self.cache.put(prompt.digest, prompt.version, self.provider.model,
                               answer.model_dump(mode="json"), reply.tokens_in, reply.tokens_out)
            self._record(prompt, answer.model_dump(mode="json"))
            return to_judgment(answer, policy, self.name, spent_in, spent_out,
                               self.pricer(spent_in, spent_out))
        return review(f"{self.name}:invalid", error or "", spent_in, spent_out,
                      self.pricer(spent_in, spent_out))


class HybridJudge:
    """The offline judge decides when confident; below the threshold the model is asked.
    Confidence is per issue, from the offline judge's calibrated per-label probabilities when it
    has them (the history stack), capped by each label's live precision when given."""

    name = "hybrid"

    def __init__(self, offline: Judge, llm: LLMJudge, threshold: float,
                 live_precision: Mapping[str, LivePrecision] | None = None) -> None:
        self.offline, self.llm, self.threshold = offline, llm, threshold
        self.live_precision = dict(live_precision or {})

    def decides_offline(self, judgment: Judgment, policy: Policy) -> bool:
        """Whether the offline judgment is good enough to keep without asking the model."""
        offline = self.offline
        calibrated = ((lambda c: offline.probability(c, policy)) if isinstance(offline, Calibrated)
                      else None)
        return offline_confident(judgment, self.threshold, policy, calibrated, self.live_precision)

    def judge(self, issue: Issue, signals: Signals, policy: Policy) -> Judgment:
        offline = self.offline.judge(issue, signals, policy)
        if self.decides_offline(offline, policy):
            return offline
        try:
            return self.llm.ask(issue, signals, policy, offline)
        except ProviderOutage as exc:
            return degraded(offline, exc, issue)


def audit_extra(judgment: Judgment) -> dict[str, object]:
    """What the audit log records about who decided and what it cost."""
    return {"judge": judgment.judge, "tokens_in": judgment.tokens_in,
            "tokens_out": judgment.tokens_out, "cost_usd": judgment.cost_usd}

