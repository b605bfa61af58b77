"""Fitting the stacked history judge (`judges/neighbours.py`) honestly, at a bounded cost.

The fit reads the most recent `WINDOW` labelled issues of the history (all of them when there
are fewer): labels drift, and the cost stays flat however long the history grows.

- **Text model**: one-vs-rest ridge over the learned judge's TF-IDF features (alpha and label
  floor of `learned/train.py`), solved in its dual form (the window's kernel, one Cholesky
  factorisation for every label at once); each window issue's text scores come from a ridge fitted
  on the other folds (`KFold(4)`), which did not see it.
- **Stack**: every window issue is judged as it would have been at its own time: the base
  judge's judgment, its held-out text scores, and neighbours drawn only from issues filed before
  it. A logistic regression is fitted on the candidate labels' features; the cut with the best
  label F1 is chosen on grouped, held-out probabilities (`GroupKFold(3)`).

scikit-learn and scipy are imported here only: applying a fitted stack needs numpy alone.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from issuetriage.evidence.history import Filed, History
from issuetriage.evidence.signals import Signals, extract_signals
from issuetriage.judges.base import Judge
from issuetriage.judges.learned.features import FeatureConfig, fit_vocabulary, issue_tokens
from issuetriage.judges.neighbours import MIN_HISTORY, NeighbourVote, Stack, TextModel, best_cut, candidate_rows
from issuetriage.models import Issue
from issuetriage.policy import Policy

if TYPE_CHECKING:
    from issuetriage.judges.taught import Taught

WINDOW = 5000  # the most recent labelled issues the learned parts are fitted on
ALPHA = 0.3  # learned/train.py's ridge strength
MIN_EXAMPLES = 3  # learned/train.py's label floor
TEXT_FOLDS = 4
STACK_FOLDS = 3
SEED = 0
Progress = Callable[[str, int, int], None]  # (step, done, total)


def _no_progress(step: str, done: int, total: int) -> None:
    pass


def dual_ridge(x: Any, y: np.ndarray, alpha: float, folds: int = TEXT_FOLDS
               ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Ridge with an intercept on ±1 targets, every label at once: coefficients (features ×
    labels), intercepts, and each row's scores from a ridge fitted on the other `folds` folds.

    Solved through the centred kernel X Xᵀ (rows × rows), so its cost is set by the window, not
    by the vocabulary; the same solution scikit-learn's `Ridge(alpha)` reaches iteratively."""
    from scipy.linalg import cho_factor, cho_solve  # lazy: fitting only; applying a stack needs numpy alone
    from sklearn.model_selection import KFold  # lazy: fitting only; applying a stack needs numpy alone

    x = x.astype(np.float64)
    targets = y * 2.0 - 1.0
    kernel = np.empty((x.shape[0], x.shape[0]))
    xt = x.T.tocsc()
    for start in range(0, x.shape[0], 512):  # in row blocks: the sparse product stays small
        kernel[start:start + 512] = (x[start:start + 512] @ xt).toarray()

    def solve(rows: np.ndarray, k: np.ndarray, full: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Dual weights, the centring terms and the target means of a ridge fitted on `rows`,
        whose kernel block `k` (a copy, or the `full` kernel itself for every row) is overwritten."""
        pick = np.zeros(len(full))
        pick[rows] = 1.0 / len(rows)
        mean_dot = full @ pick  # x_i · mean of the rows, for every i
        grand = mean_dot[rows].mean()
        k -= mean_dot[rows][:, None]
        k -= mean_dot[rows][None, :]
        k += grand
        k[np.diag_indices_from(k)] += alpha
        means = targets[rows].mean(axis=0)
        # symmetric: its transpose is the same matrix in the order LAPACK wants, so nothing is copied
        factor = cho_factor(k.T, overwrite_a=True, check_finite=False)
        return cho_solve(factor, targets[rows] - means, check_finite=False), mean_dot, means

    held = np.zeros(targets.shape)
    everyone = np.arange(len(targets))
    if len(targets) >= folds:
        for train, test in KFold(folds, shuffle=True, random_state=SEED).split(everyone):
            dual, mean_dot, means = solve(train, kernel[np.ix_(train, train)], kernel)
            cross = kernel[np.ix_(test, train)]
            cross -= mean_dot[test][:, None]
            cross -= mean_dot[train][None, :]
            cross += mean_dot[train].mean()
            held[test] = cross @ dual + means
            del cross
    dual, _, means = solve(everyone, kernel, kernel)  # the last use of the kernel: in place
    del kernel
    mean_row = np.asarray(x.mean(axis=0)).ravel()
    coef = np.asarray(x.T @ dual)
    total = dual.sum(axis=0)
    for start in range(0, len(coef), 8192):  # centred in place, a block at a time
        coef[start:start + 8192] -= np.outer(mean_row[start:start + 8192], total)
    intercept = means - mean_row @ coef
    return coef.astype(np.float32), intercept.astype(np.float32), held


def fit_text_model(signals: Sequence[Signals], golds: Sequence[tuple[str, ...]]
                   ) -> tuple[TextModel, list[dict[str, float]]]:
    """The text model fitted on the window, and each window issue's held-out scores."""
    config = FeatureConfig()
    docs = [issue_tokens(s, config) for s in signals]
    vocab = fit_vocabulary(docs, config)
    x = vocab.matrix(docs)
    del docs  # millions of token strings: free them before the kernel is made
    counts = Counter(name for gold in golds for name in gold)
    labels = tuple(sorted(n for n, c in counts.items() if c >= MIN_EXAMPLES))
    y = np.array([[name in gold for name in labels] for gold in golds],
                 dtype=np.int8).reshape(len(golds), len(labels))
    if not labels:
        empty = np.zeros((len(vocab), 0), dtype=np.float32)
        return TextModel(vocab, labels, empty, np.zeros(0, dtype=np.float32)), [{} for _ in golds]
    coef, intercept, held = dual_ridge(x, y, ALPHA)
    return (TextModel(vocab, labels, coef, intercept),
            [dict(zip(labels, row.tolist())) for row in held])


Rows = Sequence[tuple[Filed | Issue, tuple[str, ...]]]


def window(past: Rows) -> list[tuple[Issue, tuple[str, ...]]]:
    """The most recent `WINDOW` labelled issues, oldest first, as filed."""
    labelled = sorted((row for row in past if row[1]), key=lambda row: row[0].number)
    return [(i.issue() if isinstance(i, Filed) else i, gold) for i, gold in labelled[-WINDOW:]]


def fit_stack(base: Judge, history: History, past: Rows, policy: Policy, k: int,
              progress: Progress = _no_progress, taught: Mapping[int, Taught] | None = None) -> Stack | None:
    """The stack fitted on the window of `past` (None: fewer than MIN_HISTORY labelled issues),
    with `taught` evidence about past issues as features of their later neighbours."""
    taught = dict(taught or {})
    rows_in = window(past)
    if len(rows_in) < MIN_HISTORY:
        return None
    golds = tuple(gold for _, gold in rows_in)
    counts = Counter(name for gold in golds for name in gold)
    share = {name: n / len(golds) for name, n in counts.items()}
    signals = []
    for i, (issue, _) in enumerate(rows_in):
        signals.append(extract_signals(issue))
        progress("reading", i + 1, len(rows_in))
    progress("text model", 0, 1)
    text, held_text = fit_text_model(signals, golds)
    progress("text model", 1, 1)
    xs: list[list[float]] = []
    ys: list[float] = []
    groups: list[int] = []
    uncovered = 0.0
    for g, (issue, gold) in enumerate(rows_in):
        names, rows = candidate_rows(history, k, issue, base.judge(issue, signals[g], policy), policy,
                                     share, held_text[g], taught)
        target = targets(gold, taught.get(issue.number))
        xs += rows
        ys += [target.get(name, 0.0) for name in names]
        groups += [g] * len(names)
        uncovered += sum(w for name, w in target.items() if name not in names)
        progress("judging as at its time", g + 1, len(rows_in))
    return _fit_classifier(np.array(xs), np.array(ys), np.array(groups), uncovered, share, text, taught)


def targets(gold: Sequence[str], taught: Taught | None) -> dict[str, float]:
    """What the stack learns for one past issue: its maintainers' labels (1), and a label it was
    only taught (a model's answer, a correction) as a soft target of that evidence's weight."""
    out = {name: min(taught.weight, 1.0) for name in taught.labels} if taught is not None else {}
    return out | {name: 1.0 for name in gold}


def _weighted(x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Soft targets as weighted rows: a row with target y is a positive of weight y and a
    negative of weight 1 - y (hard targets stay one row of weight 1)."""
    pos, neg = y > 0, y < 1
    return (np.concatenate([x[pos], x[neg]]), np.concatenate([np.ones(pos.sum()), np.zeros(neg.sum())]),
            np.concatenate([y[pos], 1.0 - y[neg]]))


def _fit_classifier(x: np.ndarray, y: np.ndarray, groups: np.ndarray, uncovered: float,
                    share: dict[str, float], text: TextModel, taught: Mapping[int, Taught]) -> Stack:
    from sklearn.linear_model import LogisticRegression  # lazy: fitting only; applying a stack needs numpy alone
    from sklearn.model_selection import GroupKFold  # lazy: fitting only; applying a stack needs numpy alone
    from sklearn.pipeline import make_pipeline  # lazy: fitting only; applying a stack needs numpy alone
    from sklearn.preprocessing import StandardScaler  # lazy: fitting only; applying a stack needs numpy alone

    def classifier() -> Any:
        return make_pipeline(StandardScaler(), LogisticRegression(C=1.0, max_iter=1000))

    def fit(rows: np.ndarray) -> Any:
        xw, yw, weight = _weighted(x[rows], y[rows])
        return classifier().fit(xw, yw, logisticregression__sample_weight=weight)

    held = np.zeros(len(y))
    for fit_rows, test_rows in GroupKFold(n_splits=STACK_FOLDS).split(x, y > 0, groups):
        held[test_rows] = fit(fit_rows).predict_proba(x[test_rows])[:, 1]
    model = fit(np.arange(len(y)))
    scaler, logistic = model.steps[0][1], model.steps[1][1]
    return Stack(mean=scaler.mean_.astype(np.float64), scale=scaler.scale_.astype(np.float64),
                 weights=logistic.coef_[0].astype(np.float64), bias=float(logistic.intercept_[0]),
                 cut=best_cut(held, y, uncovered), share=share, text=text, taught=taught)


def stacked(base: Judge, history: History, past: Rows, policy: Policy,
            k: int, taught: Mapping[int, Taught] | None = None) -> Judge:
    """`base` stacked with `history` (and `taught` evidence about it), fitted now on `past`
    (`eval`'s folds, a JSONL history)."""
    return NeighbourVote(base, history, fit_stack(base, history, past, policy, k, taught=taught), k)  # type: ignore[return-value]
