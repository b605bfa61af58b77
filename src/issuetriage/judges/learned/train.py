"""Training: TF-IDF + one-vs-rest logistic regression, calibrated on held-out folds.

1. Featurize every issue as filed (never its labels) and fit the vocabulary.
2. For each label with enough examples, fit a ridge classifier (one-vs-rest).
3. Out-of-fold raw scores plus the prior judge's score for the same label are mapped to a
   probability by a per-label two-input Platt scaling; this is how profile signals and label
   keywords help labels with few examples.
4. Per-label thresholds are chosen on those out-of-fold probabilities for a target precision
   (labels with few examples share one threshold per label group, pooled over the group);
   labels the model lacks pass through from the prior judge only above one shared threshold
   chosen the same way.
5. The prior judge's "usage question" answers get a threshold the same way, for closing
   (target 0.97 by default); below it the learned judge does not let the tree close.
6. `prior_veto` is stored for the judge: the prior's confident labels are kept unless their
   probability is below it.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from scipy import sparse
from sklearn.linear_model import LogisticRegression, Ridge
from sklearn.model_selection import KFold

from issuetriage.errors import UserError
from issuetriage.evidence.signals import Signals, extract_signals
from issuetriage.judges.base import Judge, Kind
from issuetriage.judges.learned.corpus import Corpus, is_gold_question
from issuetriage.judges.learned.features import FeatureConfig, fit_vocabulary, issue_tokens
from issuetriage.judges.learned.model import LearnedModel
from issuetriage.judges.learned.thresholds import NEVER, threshold_for_precision
from issuetriage.models import Issue
from issuetriage.policy import Policy


@dataclass(frozen=True)
class TrainConfig:
    """Knobs of one training run; defaults are what `issuetriage train` uses."""

    features: FeatureConfig = field(default_factory=FeatureConfig)
    min_examples: int = 3
    alpha: float = 0.3
    own_threshold_min: int = 15
    smoothing: float = 0.5
    min_hits: int = 3
    catalog_documents: bool = True
    inner_folds: int = 4
    target_precision: float = 0.9
    question_precision: float = 0.97
    # The prior judge's confident labels are kept unless the model's probability is below this
    # (NEVER: only labels past their own thresholds are proposed). docs/learned-judge.md
    prior_veto: float = 0.1
    seed: int = 0


def fit_linear(x: sparse.csr_matrix, y: np.ndarray, alpha: float) -> tuple[np.ndarray, np.ndarray]:
    """One-vs-rest ridge classifiers on ±1 targets: coefficients (features × labels), intercepts.

    Ridge ranks as well as logistic regression on this data (same out-of-fold average precision)
    at a twentieth of the time; the Platt step below turns its scores into probabilities.
    """
    if y.shape[1] == 0:
        return np.zeros((x.shape[1], 0), dtype=np.float32), np.zeros(0, dtype=np.float32)
    ridge = Ridge(alpha=alpha, solver="sparse_cg").fit(x, y * 2.0 - 1.0)
    coef = np.asarray(ridge.coef_, dtype=np.float32).reshape(y.shape[1], -1).T
    return np.ascontiguousarray(coef), np.asarray(ridge.intercept_, dtype=np.float32).reshape(-1)


def out_of_fold_scores(x: sparse.csr_matrix, y: np.ndarray, config: TrainConfig,
                       extra: tuple[sparse.csr_matrix, np.ndarray] | None = None) -> np.ndarray:
    """Raw scores of each issue from a model that did not see it (`extra` rows always train)."""
    scores = np.zeros(y.shape, dtype=np.float64)
    folds = min(config.inner_folds, len(y))
    for train, held in KFold(folds, shuffle=True, random_state=config.seed).split(x):
        x_fit, y_fit = _with_extra(x[train], y[train], extra)
        coef, intercept = fit_linear(x_fit, y_fit, config.alpha)
        scores[held] = x[held] @ coef + intercept
    return scores


def _with_extra(x: sparse.csr_matrix, y: np.ndarray,
                extra: tuple[sparse.csr_matrix, np.ndarray] | None
                ) -> tuple[sparse.csr_matrix, np.ndarray]:
    if extra is None or extra[0].shape[0] == 0:
        return x, y
    return sparse.vstack([x, extra[0]]).tocsr(), np.vstack([y, extra[1]])


def catalog_documents(labels: Sequence[str], policy: Policy, config: TrainConfig
                      ) -> tuple[list[list[str]], np.ndarray]:
    """One pseudo-issue per label from the profile's own words (description, when, keywords),
    so a label with few examples still has its vocabulary; each is positive for its label only."""
    docs, rows = [], []
    for j, label in enumerate(labels):
        spec = policy.labels.get(label)
        if spec is None or not (spec.description or spec.keywords or spec.title_keywords):
            continue
        body = "\n".join([spec.description, spec.when, *spec.keywords, *spec.title_keywords])
        issue = Issue(repo=policy.meta.repo, number=1, title=f"{label} {spec.description}", body=body)
        docs.append(issue_tokens(extract_signals(issue), config.features))
        row = np.zeros(len(labels), dtype=np.int8)
        row[j] = 1
        rows.append(row)
    return docs, np.array(rows, dtype=np.int8).reshape(len(rows), len(labels))


def calibrate(raw: np.ndarray, prior: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Per-label (a, b, c) so that sigmoid(a*raw + b*prior + c) is a probability."""
    params = np.zeros((y.shape[1], 3))
    for j in range(y.shape[1]):
        if y[:, j].min() == y[:, j].max():
            params[j] = (0.0, 0.0, 10.0 if y[0, j] else -10.0)
            continue
        inputs = np.column_stack([raw[:, j], prior[:, j]])
        platt = LogisticRegression(C=1.0).fit(inputs, y[:, j])
        params[j] = (*platt.coef_[0], platt.intercept_[0])
    return params


def _sigmoid(z: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-z))


def choose_thresholds(prob: np.ndarray, y: np.ndarray, labels: Sequence[str], policy: Policy,
                      config: TrainConfig) -> np.ndarray:
    """Own threshold for well-supported labels; one pooled threshold per group for the rest."""
    target = config.target_precision
    groups = np.array([policy.group_of(lab) if lab in policy.labels else "other" for lab in labels])
    support = y.sum(axis=0)
    out = np.full(len(labels), NEVER)
    for group in set(groups):
        members = np.flatnonzero(groups == group)
        pooled = threshold_for_precision(prob[:, members].ravel(), y[:, members].ravel(), target,
                                         smoothing=config.smoothing, min_hits=config.min_hits)
        for j in members:
            well_supported = support[j] >= config.own_threshold_min
            out[j] = threshold_for_precision(
                prob[:, j], y[:, j], target, smoothing=config.smoothing, min_hits=config.min_hits
            ) if well_supported else pooled
    return out


def prior_threshold(priors: Sequence[dict[str, float]], golds: Sequence[frozenset[str]],
                    model_labels: frozenset[str], target: float) -> float:
    """One threshold for the prior judge's labels that the model does not know."""
    scores, truth = [], []
    for prior, gold in zip(priors, golds):
        for label, score in prior.items():
            if label not in model_labels and score > 0:
                scores.append(score)
                truth.append(label in gold)
    if not scores:
        return NEVER
    return threshold_for_precision(np.array(scores), np.array(truth), target)


def question_threshold(corpus: Corpus, prior: Judge | None, policy: Policy,
                       config: TrainConfig) -> float:
    """The prior judge's question confidence at which closing is right `question_precision`
    of the time, on every corpus issue (labelled or not); NEVER when it is not."""
    if prior is None:
        return NEVER
    scores, truth = [], []
    for example in corpus.examples:
        judgment = prior.judge(example.issue, extract_signals(example.issue), policy)
        if judgment.kind is Kind.QUESTION:
            scores.append(judgment.kind_confidence)
            truth.append(is_gold_question(example, policy))
    if not scores:
        return NEVER
    return threshold_for_precision(np.array(scores), np.array(truth), config.question_precision,
                                   smoothing=config.smoothing, min_hits=config.min_hits)


def prior_scores(signals: Sequence[Signals], corpus: Corpus, prior: Judge | None,
                 policy: Policy) -> list[dict[str, float]]:
    """The prior judge's label scores for every issue (empty dicts without a prior)."""
    if prior is None:
        return [{} for _ in signals]
    out = []
    for sig, example in zip(signals, corpus.examples):
        judgment = prior.judge(example.issue, sig, policy)
        out.append({s.name: s.confidence for s in judgment.labels})
    return out


def suggested_implications(golds: Sequence[frozenset[str]], policy: Policy, min_support: int = 4,
                           min_share: float = 0.75) -> list[dict[str, object]]:
    """Label pairs the history applies together that the catalog does not say go together: B on
    at least `min_share` of the issues with A, A on at least `min_support` issues, B not already
    implied by A (`labels.toml` `implies`) and not the generic label the guard drops next to A.
    A is never a queue (`oncall:`) label: a queue implying another would reroute every issue of
    that queue. Candidates for a maintainer to review; training never applies them."""
    counts = Counter(label for gold in golds for label in gold)
    together = Counter((a, b) for gold in golds for a in gold for b in gold if a != b)
    generic = {(pair.specific, pair.generic) for pair in policy.redundancy.pair}
    found: list[dict[str, Any]] = [{"label": a, "implies": b, "together": n, "of": counts[a]}
             for (a, b), n in together.items()
             if counts[a] >= min_support and n >= min_share * counts[a] and not policy.is_oncall(a)
             and (a, b) not in generic and b not in policy.implied([a])]
    return sorted(found, key=lambda d: (-d["together"] / d["of"], -d["of"], d["label"], d["implies"]))


def _micro(prob: np.ndarray, thresholds: np.ndarray, y: np.ndarray) -> dict[str, float]:
    pred = prob >= thresholds
    tp = float((pred & (y == 1)).sum())
    precision = tp / max(pred.sum(), 1)
    recall = tp / max(y.sum(), 1)
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return {"precision": round(precision, 4), "recall": round(recall, 4), "f1": round(f1, 4)}


def train(corpus: Corpus, policy: Policy, prior: Judge | None = None,
          config: TrainConfig = TrainConfig()) -> LearnedModel:
    """Learn label and routing scores from a labelled corpus (gold labels only as targets)."""
    started = time.perf_counter()
    labelled = corpus.subset(i for i, e in enumerate(corpus.examples) if e.gold)
    if len(labelled.examples) < 2 * config.inner_folds:
        raise UserError(f"{corpus.path}: only {len(labelled.examples)} issues carry catalog "
                        f"labels; need at least {2 * config.inner_folds} to train")
    signals = [extract_signals(e.issue) for e in labelled.examples]
    docs = [issue_tokens(s, config.features) for s in signals]
    vocab = fit_vocabulary(docs, config.features)
    x = vocab.matrix(docs)
    counts = Counter(label for e in labelled.examples for label in e.gold)
    labels = tuple(sorted(lab for lab, n in counts.items() if n >= config.min_examples))
    golds = [e.gold for e in labelled.examples]
    y = np.array([[lab in g for lab in labels] for g in golds], dtype=np.int8).reshape(
        len(golds), len(labels))
    priors = prior_scores(signals, labelled, prior, policy)
    h = np.array([[p.get(lab, 0.0) for lab in labels] for p in priors]).reshape(y.shape)
    extra = None
    if config.catalog_documents:
        cat_docs, cat_y = catalog_documents(labels, policy, config)
        extra = (vocab.matrix(cat_docs), cat_y)
    raw = out_of_fold_scores(x, y, config, extra)
    calibration = calibrate(raw, h, y)
    prob = _sigmoid(calibration[:, 0] * raw + calibration[:, 1] * h + calibration[:, 2])
    thresholds = choose_thresholds(prob, y, labels, policy, config)
    coef, intercept = fit_linear(*_with_extra(x, y, extra), config.alpha)
    fallback = prior_threshold(priors, golds, frozenset(labels), config.target_precision)
    return LearnedModel(
        profile=policy.name, labels=labels, features=config.features, vocabulary=vocab,
        coef=coef, intercept=intercept, calibration=calibration, thresholds=thresholds,
        prior_threshold=fallback, prior_judge=prior.name if prior else None,
        corpus_sha256=corpus.sha256,
        question_threshold=question_threshold(corpus, prior, policy, config),
        prior_veto=config.prior_veto if prior is not None else NEVER,
        metrics={"out_of_fold_micro": _micro(prob, thresholds, y),
                 "labels_with_threshold": int((thresholds < NEVER).sum())},
        training={"issues": len(corpus.examples), "labelled_issues": len(labelled.examples),
                  "skipped_lines": len(corpus.problems), "label_counts": dict(sorted(counts.items())),
                  "target_precision": config.target_precision,
                  "question_precision": config.question_precision, "alpha": config.alpha,
                  "prior_veto": config.prior_veto,
                  "suggested_implies": suggested_implications(golds, policy),
                  "min_examples": config.min_examples, "inner_folds": config.inner_folds,
                  "seconds": round(time.perf_counter() - started, 2)},
    )
