"""Per-label confidence thresholds chosen on held-out predictions for a target precision.

Precision measured on a handful of held-out examples is optimistic, so we score each candidate
threshold with a pessimistic estimate, `tp / (tp + fp + smoothing)`, and ask for a minimum number
of hits: a label only gets a threshold once it has been right often enough, and otherwise the
judge abstains on it (docs/learned-judge.md).
"""

from __future__ import annotations

import numpy as np

NEVER = 1.01  # a threshold no probability reaches: the label is never emitted


def pessimistic_precision(tp: np.ndarray, fp: np.ndarray, smoothing: float = 1.0) -> np.ndarray:
    """Precision shrunk towards zero by `smoothing` imaginary false positives."""
    return tp / (tp + fp + smoothing)


def threshold_for_precision(scores: np.ndarray, truth: np.ndarray, target: float,
                            floor: float = 0.3, smoothing: float = 1.0, min_hits: int = 1
                            ) -> float:
    """The lowest score whose pessimistic precision at or above it reaches `target`.

    Returns NEVER when no threshold does. The threshold never goes below `floor`: on data that
    separates cleanly the lowest positive can score very low, and a label the calibrated model
    gives less than that is not claimed, however clean the held-out data looked. Lower thresholds mean more coverage, so among the
    thresholds that reach the target we take the lowest one.
    """
    order = np.argsort(-scores, kind="stable")
    sorted_scores = scores[order]
    hits = truth[order].astype(np.float64)
    tp = np.cumsum(hits)
    fp = np.cumsum(1.0 - hits)
    ok = (pessimistic_precision(tp, fp, smoothing) >= target) & (sorted_scores >= floor) \
        & (tp >= min_hits)
    # only cut between distinct scores: ties must fall on the same side
    distinct = np.r_[sorted_scores[1:] < sorted_scores[:-1], True]
    candidates = np.flatnonzero(ok & distinct)
    if candidates.size == 0:
        return NEVER
    return float(sorted_scores[candidates[-1]])
