"""The learned judge: only labels past their learned thresholds, and the tree acts on them."""

from __future__ import annotations

import dataclasses

import pytest

from builders import make_issue
from issuetriage.engine import triage_with
from issuetriage.errors import ModelError
from issuetriage.heuristic import HeuristicJudge
from issuetriage.judgment import Kind
from issuetriage.learn import load_judge, save_model
from issuetriage.learn.judge import LearnedJudge, engine_confidence
from issuetriage.learn.train import train
from issuetriage.models import Decision
from issuetriage.signals import extract_signals

from .conftest import SMALL

DISTRIBUTED = make_issue("all_reduce hangs with topk", "Running torchrun with two ranks, "
                         "dist.all_reduce on the process group never returns; the NCCL watchdog "
                         "fires and torch.distributed.init_process_group blocks.")


@pytest.fixture()
def judge(corpus, policy):
    return LearnedJudge(train(corpus, policy, prior=HeuristicJudge(), config=SMALL), HeuristicJudge())


def test_judge_emits_only_labels_past_their_threshold(judge, policy):
    judgment = judge.judge(DISTRIBUTED, extract_signals(DISTRIBUTED), policy)
    _, probs = judge.probabilities(DISTRIBUTED, extract_signals(DISTRIBUTED), policy)
    emitted = {s.name for s in judgment.labels if s.name in judge.model.labels}
    assert emitted == {lab for lab, p in probs.items() if p >= judge.model.threshold(lab)}
    assert "oncall: distributed" in emitted and judgment.judge == "learned"


def test_learned_redirect_reaches_the_plan(judge, policy):
    plan = triage_with(DISTRIBUTED, policy, judge).plan
    assert plan.decision is Decision.REDIRECT_ONCALL
    assert "oncall: distributed" in plan.labels_added


def test_nothing_confident_means_the_engine_abstains(judge, policy):
    issue = make_issue("Strange behaviour in my training loop",
                       "My loss goes up and down, I am not sure why; here is what I tried so far "
                       "with several optimizers and learning rates, nothing helped at all.")
    plan = triage_with(issue, policy, judge).plan
    assert plan.decision is Decision.TRIAGE_REVIEW and policy.bot.triage_review in plan.labels_added
    assert not [label for label in plan.labels_added if label.startswith(("module:", "oncall:"))]


@pytest.mark.parametrize("p, threshold, gate, expected", [
    (0.4, 0.4, 0.5, 0.5), (1.0, 0.4, 0.5, 1.0), (0.7, 0.4, 0.5, 0.75), (0.95, 0.9, 0.5, 0.75),
])
def test_confidence_maps_the_learned_threshold_onto_the_tree_gate(p, threshold, gate, expected):
    assert engine_confidence(p, threshold, gate) == pytest.approx(expected)


def test_kind_comes_from_the_base_judge_but_feature_needs_learned_support(judge, policy):
    issue = make_issue("Feature request: please add support for a new op",
                       "It would be nice to add support for this; motivation and pitch: allow it.")
    base = HeuristicJudge().judge(issue, extract_signals(issue), policy)
    learned = judge.judge(issue, extract_signals(issue), policy)
    assert base.kind is Kind.FEATURE and learned.kind is Kind.BUG  # no type labels in the corpus


def test_model_for_another_profile_is_refused_at_judge_time(judge, policy):
    foreign = LearnedJudge(dataclasses.replace(judge.model, profile="other"))
    with pytest.raises(ModelError, match="profile 'other'"):
        foreign.judge(DISTRIBUTED, extract_signals(DISTRIBUTED), policy)


def test_load_judge_wraps_the_heuristic(judge, tmp_path):
    loaded = load_judge(save_model(judge.model, tmp_path / "m"), profile="pytorch")
    assert loaded.name == "learned" and isinstance(loaded.base, HeuristicJudge)


class QuestionJudge(HeuristicJudge):
    """The heuristic, but sure that everything is a usage question."""

    def judge(self, issue, signals, policy):
        return super().judge(issue, signals, policy).model_copy(
            update={"kind": Kind.QUESTION, "kind_confidence": 0.95})


def test_a_question_the_model_can_route_is_not_closed(judge, policy):
    asking = LearnedJudge(judge.model, QuestionJudge())
    routed = asking.judge(DISTRIBUTED, extract_signals(DISTRIBUTED), policy)
    assert routed.kind is Kind.BUG and triage_with(DISTRIBUTED, policy, asking).plan.close is False


VAGUE = make_issue("How do I pick a learning rate?", "Which value should I use for my model?")


@pytest.mark.parametrize("threshold, decision", [
    (0.9, Decision.CLOSE_QUESTION),   # the history says such questions were closed: close
    (1.01, Decision.REQUEST_INFO),    # not proven precise enough: ask, never close
])
def test_questions_close_only_past_the_learned_close_threshold(judge, policy, threshold, decision):
    model = dataclasses.replace(judge.model, question_threshold=threshold)
    asking = LearnedJudge(model, QuestionJudge())
    judgment = asking.judge(VAGUE, extract_signals(VAGUE), policy)
    assert judgment.kind is Kind.QUESTION
    assert triage_with(VAGUE, policy, asking).plan.decision is decision
