"""The evaluation report: every number docs/evaluation.md defines, as JSON and as text."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from issuetriage.evaluate.scoring import PRF, IssueResult, macro, per_label, set_prf

CURVE_THRESHOLDS = tuple(round(0.05 * i, 2) for i in range(20))


def _rate(num: int, den: int) -> float:
    return round(num / den, 4) if den else 0.0


def routing(results: Sequence[IssueResult]) -> dict[str, Any]:
    """Oncall exact-match accuracy (on routed issues and on all labelled ones) and per queue."""
    labelled = [r for r in results if r.labelled]
    routed = [r for r in labelled if r.routed]
    match_routed = sum(r.predicted_oncall == r.gold_oncall for r in routed)
    match_all = sum(r.routed and r.predicted_oncall == r.gold_oncall
                    or not r.routed and not r.gold_oncall and not r.abstained for r in labelled)
    queues = sorted({q for r in labelled for q in r.gold_oncall | r.predicted_oncall})
    per_queue = {q: set_prf((r.gold_oncall & {q}, r.predicted_oncall & {q}) for r in labelled)
                 for q in queues}
    return {
        "accuracy": _rate(match_routed, len(routed)), "routed_issues": len(routed),
        "accuracy_all_labelled": _rate(match_all, len(labelled)),
        "labelled_issues": len(labelled),
        "per_queue": {q: prf.to_json() for q, prf in per_queue.items()},
    }


def by_source(labelled: Sequence[IssueResult]) -> dict[str, dict[str, float | int]]:
    """Added labels the judge proposed versus labels the tree added on its own rules."""
    out = {}
    for source in ("judge", "tree"):
        def pick(r: IssueResult, source: str = source) -> frozenset[str]:
            return r.judge_proposed if source == "judge" else r.predicted - r.judge_proposed
        tp = sum(len(pick(r) & r.gold) for r in labelled)
        fp = sum(len(pick(r) - r.gold) for r in labelled)
        out[source] = {"tp": tp, "fp": fp, "precision": _rate(tp, tp + fp)}
    return out


def curve(results: Sequence[IssueResult]) -> list[dict[str, float]]:
    """Label precision, recall and coverage if only additions at confidence >= t were kept."""
    labelled = [r for r in results if r.labelled]
    points = []
    for t in CURVE_THRESHOLDS:
        kept = [(r.gold, frozenset(lab for lab, c in r.confidences if c >= t)) for r in labelled]
        prf = set_prf(kept)
        covered = sum(bool(pred) for _, pred in kept)
        points.append({"threshold": t, "precision": round(prf.precision, 4),
                       "recall": round(prf.recall, 4),
                       "coverage": _rate(covered, len(labelled)), "labels": prf.tp + prf.fp})
    return points


def build_report(results: Sequence[IssueResult], judge: str, corpus: str, folds: int,
                 skipped: Sequence[str] = ()) -> dict[str, Any]:
    """Aggregate issue results into the report documented in docs/evaluation.md."""
    labelled = [r for r in results if r.labelled]
    unlabelled = [r for r in results if not r.labelled]
    table = per_label(labelled)
    closes = [r for r in results if r.closed_question]
    return {
        "judge": judge, "corpus": corpus, "folds": folds,
        "issues": len(results), "labelled_issues": len(labelled),
        "skipped_lines": list(skipped),
        "labels": {
            "micro": set_prf((r.gold, r.predicted) for r in labelled).to_json(),
            "macro": macro(table),
            "per_label": {name: prf.to_json() for name, prf in table.items()},
            "added_to_unlabelled_issues": sum(len(r.predicted) for r in unlabelled),
            "by_source": by_source(labelled),
        },
        "routing": routing(results),
        "type_label": set_prf((r.gold_type, r.predicted_type) for r in labelled).to_json(),
        "question_close": {
            "closed": len(closes), "correct": sum(r.gold_question for r in closes),
            "precision": _rate(sum(r.gold_question for r in closes), len(closes)) if closes else None,
        },
        "abstain": {"issues": sum(r.abstained for r in results),
                    "rate": _rate(sum(r.abstained for r in results), len(results))},
        "decisions": _decisions(results),
        "judged_by": _count(r.judge for r in results),
        "guard_rejected_unknown_labels": _count(x for r in results for x in r.guard_rejected),
        "curve": curve(results),
    }


def _decisions(results: Sequence[IssueResult]) -> dict[str, int]:
    return _count(str(r.decision) for r in results)


def _count(items: Iterable[str]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for item in items:
        counts[item] = counts.get(item, 0) + 1
    return dict(sorted(counts.items()))


def _prf_line(name: str, prf: dict[str, Any]) -> str:
    return (f"  {name:<44} P {prf['precision']:.3f}  R {prf['recall']:.3f}  F1 {prf['f1']:.3f}"
            f"  (tp {prf['tp']}, fp {prf['fp']}, fn {prf['fn']})")


def format_text(report: dict[str, Any], top: int = 25) -> str:
    """A human summary: headline numbers, the busiest labels, queues and the curve."""
    lab, rt, q, ab = report["labels"], report["routing"], report["question_close"], report["abstain"]
    lines = [
        f"judge {report['judge']} on {report['corpus']} ({report['issues']} issues, "
        f"{report['labelled_issues']} labelled, folds {report['folds']}, "
        f"{len(report['skipped_lines'])} lines skipped)",
        _prf_line("labels (micro)", lab["micro"]),
        f"  {'labels (macro)':<44} P {lab['macro']['precision']:.3f}  R {lab['macro']['recall']:.3f}"
        f"  F1 {lab['macro']['f1']:.3f}",
        f"  oncall routing accuracy {rt['accuracy']:.3f} on {rt['routed_issues']} routed issues; "
        f"{rt['accuracy_all_labelled']:.3f} on all {rt['labelled_issues']} labelled",
        _prf_line("type label", report["type_label"]),
        f"  question close precision "
        f"{'n/a' if q['precision'] is None else format(q['precision'], '.3f')} "
        f"({q['correct']}/{q['closed']} closed issues)",
        f"  abstain (triage review) rate {ab['rate']:.3f} ({ab['issues']}/{report['issues']})",
        "  judged by: " + ", ".join(f"{k or 'no judge'} {v}" for k, v in report["judged_by"].items()),
        f"  unknown labels the guard rejected: {sum(report['guard_rejected_unknown_labels'].values())}",
        f"  labels added to unlabelled issues {lab['added_to_unlabelled_issues']}",
        *(f"  added by the {src}: precision {v['precision']:.3f} (tp {v['tp']}, fp {v['fp']})"
          for src, v in lab["by_source"].items()),
        "queues:",
        *(_prf_line(name, prf) for name, prf in rt["per_queue"].items()),
        f"labels (top {top} by support):",
    ]
    busiest = sorted(lab["per_label"].items(), key=lambda kv: -(kv[1]["tp"] + kv[1]["fn"]))
    lines += [_prf_line(name, prf) for name, prf in busiest[:top]]
    lines.append("precision/coverage by confidence threshold:")
    lines += [f"  >= {p['threshold']:.2f}  precision {p['precision']:.3f}  recall {p['recall']:.3f}"
              f"  coverage {p['coverage']:.3f}  labels {p['labels']}" for p in report["curve"]]
    return "\n".join(lines)


__all__ = ["PRF", "build_report", "curve", "format_text", "routing"]
