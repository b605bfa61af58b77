"""The learned judge: only labels past their learned thresholds, and the tree acts on them."""

from __future__ import annotations

import dataclasses

import pytest

from builders import make_issue
from issuetriage.engine.pipeline import triage_with
from issuetriage.errors import ModelError
from issuetriage.evidence.signals import extract_signals
from issuetriage.judges.base import Kind
from issuetriage.judges.heuristic import HeuristicJudge
from issuetriage.judges.learned import load_judge, save_model
from issuetriage.judges.learned.judge import LearnedJudge, bands, engine_confidence
from issuetriage.judges.learned.thresholds import NEVER
from issuetriage.judges.learned.train import train
from issuetriage.models import Decision

from .conftest import SMALL

DISTRIBUTED = make_issue(title="all_reduce hangs with topk",
                         body="Running torchrun with two ranks, "
                              "dist.all_reduce on the process group never returns; the NCCL watchdog "
                              "fires and torch.distributed.init_process_group blocks.")


@pytest.fixture()
def judge(corpus, policy):
    return LearnedJudge(train(corpus, policy, prior=HeuristicJudge(), config=SMALL), HeuristicJudge())


def test_without_keeping_only_labels_past_their_threshold_are_emitted(judge, policy):
    strict = LearnedJudge(dataclasses.replace(judge.model, prior_veto=NEVER), judge.base)
    judgment = strict.judge(DISTRIBUTED, extract_signals(DISTRIBUTED), policy)
    _, probs = strict.probabilities(DISTRIBUTED, extract_signals(DISTRIBUTED), policy)
    emitted = {s.name for s in judgment.labels
               if s.name in strict.model.labels and s.confidence >= 0.5}
    assert emitted == {lab for lab, p in probs.items() if p >= strict.model.threshold(lab)}
    assert "oncall: distributed" in emitted and judgment.judge == "learned"


def test_learned_redirect_reaches_the_plan(judge, policy):
    plan = triage_with(DISTRIBUTED, policy, judge).plan
    assert plan.decision is Decision.REDIRECT_ONCALL
    assert "oncall: distributed" in plan.labels_added


def test_nothing_confident_means_the_engine_abstains(judge, policy):
    issue = make_issue(title="Strange behaviour in my training loop",
                       body="My loss goes up and down, I am not sure why; here is what I tried so far "
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
    issue = make_issue(title="Feature request: please add support for a new op",
                       body="It would be nice to add support for this; motivation and pitch: allow it.")
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


VAGUE = make_issue(title="How do I pick a learning rate?",
                   body="Which value should I use for my model?")


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


# The heuristic is sure of `oncall: pt2` and `module: autograd` here; the model has learned both
# but is less sure than their thresholds ask, so the veto decides whether they are kept.
MIXED = make_issue(title="grad is None after backward with torch.compile",
                   body="loss.backward() leaves x.grad as None although requires_grad=True; "
                        "torch.autograd.grad returns nothing. It happens with torch.compile and "
                        "inductor too.")


def _prior_confident(judge, issue, policy):
    base = judge.base.judge(issue, extract_signals(issue), policy)
    return {s.name for s in base.labels if s.confidence >= 0.5 and s.name in policy.labels}


@pytest.mark.parametrize("veto, kept", [
    (0.0, {"oncall: pt2", "module: autograd"}), (0.99, set()), (NEVER, set()),
])
def test_the_base_labels_are_kept_unless_the_model_vetoes_them(judge, policy, veto, kept):
    keeper = LearnedJudge(dataclasses.replace(judge.model, prior_veto=veto), judge.base)
    _, probs = keeper.probabilities(MIXED, extract_signals(MIXED), policy)
    prior = _prior_confident(keeper, MIXED, policy)
    assert {"oncall: pt2", "module: autograd"} <= prior
    assert all(probs[label] < keeper.model.threshold(label) for label in prior)
    judgment = keeper.judge(MIXED, extract_signals(MIXED), policy)
    assert {s.name for s in judgment.confident(0.5)} == kept
    assert all(s.reason.startswith("kept") for s in judgment.confident(0.5))


def test_the_veto_is_a_probability_cut(judge, policy):
    _, probs = judge.probabilities(MIXED, extract_signals(MIXED), policy)
    between = (probs["oncall: pt2"] + probs["module: autograd"]) / 2
    keeper = LearnedJudge(dataclasses.replace(judge.model, prior_veto=between), judge.base)
    acted = {s.name for s in keeper.judge(MIXED, extract_signals(MIXED), policy).confident(0.5)}
    assert acted == {max(("oncall: pt2", "module: autograd"), key=probs.__getitem__)}


def test_kept_labels_rank_below_the_labels_the_model_is_sure_of(judge, policy):
    keeper = LearnedJudge(dataclasses.replace(judge.model, prior_veto=0.0), judge.base)
    low, high = bands(0.5, keeping=True)
    assert low == 0.5 and high == 0.75
    for issue in (MIXED, DISTRIBUTED):
        for score in keeper.judge(issue, extract_signals(issue), policy).labels:
            if score.reason.startswith("kept"):
                assert low <= score.confidence < high
            elif score.reason.startswith("learned"):
                assert score.confidence >= high


def test_a_confident_base_label_the_model_never_learned_is_kept_below_learned_ones(judge, policy):
    windows = make_issue(title="DLL load failed on Windows 11",
                         body="On Windows 11 with MSVC, importing torch fails: the DLL load failed.")
    assert "module: windows" not in judge.model.labels
    keeper = LearnedJudge(dataclasses.replace(judge.model, prior_veto=0.1), judge.base)
    score = next(s for s in keeper.judge(windows, extract_signals(windows), policy).labels
                 if s.name == "module: windows")
    assert 0.5 <= score.confidence < 0.75 and "no model" in score.reason
    strict = LearnedJudge(dataclasses.replace(judge.model, prior_veto=NEVER), judge.base)
    assert strict.judge(windows, extract_signals(windows), policy).score("module: windows") < 0.5
