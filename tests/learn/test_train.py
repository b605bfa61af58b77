"""Training: features from the issue as filed, thresholds for a target precision."""

from __future__ import annotations

import numpy as np
import pytest

from builders import make_issue
from issuetriage.errors import UserError
from issuetriage.evidence.signals import extract_signals
from issuetriage.judges.learned.corpus import Corpus
from issuetriage.judges.learned.features import FeatureConfig, fit_vocabulary, issue_tokens
from issuetriage.judges.learned.thresholds import NEVER, threshold_for_precision
from issuetriage.judges.learned.train import TrainConfig, suggested_implications, train

from .conftest import SMALL


def test_tokens_include_identifiers_exceptions_and_title_words():
    issue = make_issue(title="Segfault in conv2d",
                       body="```\ntorch.nn.functional.conv2d(x)\n"
                            "Traceback (most recent call last):\nRuntimeError: boom\n```")
    tokens = issue_tokens(extract_signals(issue), FeatureConfig())
    assert {"t:segfault", "id:torch.nn.functional", "id:.conv2d", "exc:RuntimeError",
            "sig:traceback"} <= set(tokens)


def test_vocabulary_vector_is_unit_length_and_ignores_unknown_tokens():
    vocab = fit_vocabulary([["a", "b"], ["a", "c"], ["a", "b"]], FeatureConfig(min_df=2))
    cols, values = vocab.vector(["a", "b", "b", "zzz"])
    assert sorted(vocab.tokens[c] for c in cols) == ["a", "b"]
    assert np.isclose(float(values @ values), 1.0)
    assert vocab.vector(["zzz"])[0].size == 0


@pytest.mark.parametrize("scores, truth, target, expected", [
    ([0.9, 0.8, 0.7, 0.6, 0.5], [1, 1, 1, 0, 0], 0.7, 0.7),   # 3/(3+0+1) = 0.75 >= 0.7
    ([0.9, 0.8, 0.7, 0.6, 0.5], [1, 1, 1, 0, 0], 0.8, NEVER),  # never 4 clean hits
    ([0.9, 0.9, 0.2], [1, 0, 1], 0.6, NEVER),  # ties fall together: 1/3, then 2/4
    ([0.99] * 9 + [0.5], [1] * 9 + [0], 0.9, 0.99),
])
def test_threshold_is_the_lowest_score_with_pessimistic_precision_on_target(
        scores, truth, target, expected):
    assert threshold_for_precision(np.array(scores), np.array(truth), target) == expected


def test_trained_model_scores_its_topic_above_threshold(corpus, policy):
    model = train(corpus, policy, config=SMALL)
    assert {"oncall: pt2", "oncall: distributed", "module: cuda", "module: autograd"} <= set(model.labels)
    assert "triaged" not in model.labels and "high priority" not in model.labels
    issue = make_issue(title="torch.compile fails on softmax",
                       body="torch.compile(model) with the inductor "
                            "backend raises InductorError while lowering a triton kernel.")
    probs = dict(zip(model.labels, model.probabilities(extract_signals(issue), {})))
    assert probs["oncall: pt2"] > 0.5 > probs["oncall: distributed"]
    assert probs["oncall: pt2"] >= model.threshold("oncall: pt2")


def test_training_never_reads_issue_labels(corpus, policy):
    """Labels travel as gold only: the issues the model featurizes have none."""
    assert all(not e.issue.labels for e in corpus.examples)
    model = train(corpus, policy, config=SMALL)
    assert not any(tok.startswith(("oncall", "module")) for tok in model.vocabulary.tokens)


def test_too_few_labelled_issues_is_a_user_error(corpus, policy):
    tiny = Corpus(corpus.path, corpus.examples[:3], (), corpus.sha256)
    with pytest.raises(UserError, match="need at least"):
        train(tiny, policy, config=SMALL)


QUESTION = {"title": "How do I freeze some layers?", "body": "What is the best way to do this?",
            "labels": [], "state": "closed", "repo": "pytorch/pytorch"}


@pytest.mark.parametrize("state, labels, learned", [
    ("closed", [], True),                 # every such question was closed unlabelled
    ("open", ["module: nn"], False),      # maintainers kept them as reports
])
def test_question_close_threshold_is_learned_from_history(tmp_path, policy, state, labels, learned):
    from issuetriage.judges.heuristic import HeuristicJudge
    from issuetriage.judges.learned.corpus import load_corpus

    from .conftest import corpus_records, write_jsonl

    questions = [{**QUESTION, "number": 900 + i, "state": state, "labels": labels,
                  "title": f"How do I freeze layer {i}?"} for i in range(30)]
    path = write_jsonl(tmp_path / "c.jsonl", corpus_records() + questions)
    model = train(load_corpus(path, policy), policy, prior=HeuristicJudge(), config=SMALL)
    assert (model.question_threshold < NEVER) is learned


def test_history_suggests_implications_the_catalog_lacks(corpus, policy):
    model = train(corpus, policy, config=TrainConfig())
    suggested = {(d["label"], d["implies"]): (d["together"], d["of"])
                 for d in model.training["suggested_implies"]}
    together, of = suggested[("module: inductor", "oncall: pt2")]  # always together in the corpus
    assert together == of >= 4


def test_suggested_implications_skip_what_the_profile_already_says(policy):
    golds = [frozenset({"module: flex attention", "module: higher order operators",
                        "module: pt2-dispatcher", "oncall: pt2"})] * 4 \
        + [frozenset({"module: cudnn", "module: cuda"})] * 4 \
        + [frozenset({"oncall: export", "oncall: pt2"})] * 4
    suggested = {(d["label"], d["implies"]) for d in suggested_implications(golds, policy)}
    assert ("module: flex attention", "module: higher order operators") not in suggested  # implies
    assert ("module: cudnn", "module: cuda") not in suggested  # the guard drops the generic one
    assert ("module: higher order operators", "module: flex attention") in suggested
    assert not any(label.startswith("oncall:") for label, _ in suggested)  # queues reroute
    assert suggested_implications(golds[:3], policy) == []  # below min_support
