"""Scoring a replay: what the bot would add versus the labels maintainers finally applied.

Every definition here is documented in docs/evaluation.md; change both together.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from issuetriage.judges.learned.corpus import Example, content_labels, is_gold_question
from issuetriage.models import Decision, Plan
from issuetriage.policy import Policy


@dataclass(frozen=True)
class IssueResult:
    """One replayed issue: the compared label sets and the facts the report counts."""

    number: int
    line: int
    gold: frozenset[str]
    predicted: frozenset[str]
    confidences: tuple[tuple[str, float], ...]
    decision: Decision
    abstained: bool
    routed: bool
    redirect_gold: bool
    gold_oncall: frozenset[str]
    predicted_oncall: frozenset[str]
    gold_type: frozenset[str]
    predicted_type: frozenset[str]
    closed_question: bool
    gold_question: bool
    judge_proposed: frozenset[str] = frozenset()
    plan_labels: tuple[str, ...] = ()
    fold: int = 0
    judge: str = ""
    guard_rejected: tuple[str, ...] = ()

    @property
    def labelled(self) -> bool:
        """Maintainers applied at least one content label (only these score label metrics)."""
        return bool(self.gold)


def _oncall(labels: Iterable[str], policy: Policy) -> frozenset[str]:
    return frozenset(label for label in labels if policy.is_oncall(label))


def score_issue(example: Example, plan: Plan, confidences: dict[str, float], policy: Policy,
                fold: int = 0, guard_rejected: tuple[str, ...] = ()) -> IssueResult:
    """Compare one guarded plan with the issue's gold labels.

    `confidences` are the judge's label scores at or above the tree's gate; an added label
    missing from them was added by the tree on its own rules (a rubric or the type rule): the
    report counts those separately and the curve keeps them at every threshold.
    """
    allowed = content_labels(policy)
    added = frozenset(label for label in plan.labels_added if label in allowed)
    gold = example.gold
    redirect = bool(gold & policy.redirect_labels)
    if redirect:
        gold_cmp, pred_cmp = _oncall(gold, policy), _oncall(added, policy)
    else:
        gold_cmp, pred_cmp = gold, added
    types = frozenset(policy.meta.type_labels)
    abstained = policy.bot.triage_review in plan.labels_added \
        or plan.decision == Decision.TRIAGE_REVIEW
    return IssueResult(
        number=example.issue.number, line=example.line, gold=gold_cmp, predicted=pred_cmp,
        confidences=tuple(sorted((lab, float(confidences.get(lab, 1.0))) for lab in pred_cmp)),
        decision=plan.decision,
        abstained=abstained, routed=bool(added) and not abstained,
        redirect_gold=redirect, gold_oncall=_oncall(gold, policy), predicted_oncall=_oncall(added, policy),
        gold_type=gold & types, predicted_type=added & types,
        closed_question=plan.decision == Decision.CLOSE_QUESTION and plan.close,
        gold_question=is_gold_question(example, policy),
        judge_proposed=frozenset(lab for lab in pred_cmp if lab in confidences),
        plan_labels=plan.labels_added, fold=fold, judge=plan.judge or "",
        guard_rejected=guard_rejected,
    )


@dataclass(frozen=True)
class PRF:
    """Counts and the precision/recall/F1 they give (0 when undefined)."""

    tp: int
    fp: int
    fn: int

    @property
    def precision(self) -> float:
        return self.tp / (self.tp + self.fp) if self.tp + self.fp else 0.0

    @property
    def recall(self) -> float:
        return self.tp / (self.tp + self.fn) if self.tp + self.fn else 0.0

    @property
    def f1(self) -> float:
        p, r = self.precision, self.recall
        return 2 * p * r / (p + r) if p + r else 0.0

    def to_json(self) -> dict[str, float | int]:
        return {"tp": self.tp, "fp": self.fp, "fn": self.fn, "precision": round(self.precision, 4),
                "recall": round(self.recall, 4), "f1": round(self.f1, 4)}


def set_prf(pairs: Iterable[tuple[frozenset[str], frozenset[str]]]) -> PRF:
    """Micro counts over (gold, predicted) label sets."""
    tp = fp = fn = 0
    for gold, pred in pairs:
        tp += len(gold & pred)
        fp += len(pred - gold)
        fn += len(gold - pred)
    return PRF(tp, fp, fn)


def per_label(results: Sequence[IssueResult]) -> dict[str, PRF]:
    """Precision/recall/F1 of every label that appears in gold or predictions."""
    names = sorted({lab for r in results for lab in r.gold | r.predicted})
    return {name: set_prf((r.gold & {name}, r.predicted & {name}) for r in results)
            for name in names}


def macro(table: dict[str, PRF]) -> dict[str, float]:
    """Unweighted mean over labels of precision, recall and F1."""
    n = len(table) or 1
    return {"precision": round(sum(p.precision for p in table.values()) / n, 4),
            "recall": round(sum(p.recall for p in table.values()) / n, 4),
            "f1": round(sum(p.f1 for p in table.values()) / n, 4)}
