"""The hybrid decides per issue from the offline judge's calibrated per-label probabilities (and
live precision): the expected label F1 of the offline answer against the threshold, the cost knob."""

from __future__ import annotations

from dataclasses import dataclass

import pytest
from llm_helpers import FixedJudge, offline_judgment

from issuetriage.judges.llm.judge import HybridJudge, LivePrecision, expected_f1

SURE = (("module: linear algebra", 0.9),)
CROWDED = SURE + (("module: cuda", 0.45), ("module: magma", 0.45), ("module: cpu", 0.45))


@dataclass
class CalibratedJudge(FixedJudge):
    """An offline judge whose confidences stand for lower probabilities (as a stack's may)."""

    def probability(self, confidence: float, policy) -> float:
        return confidence / 2


def decides(offline, policy, threshold=0.75, live=None):
    return HybridJudge(offline, None, threshold, live).decides_offline(offline.judgment, policy)  # type: ignore[arg-type]


def test_expected_f1_counts_the_added_labels_against_every_candidates_probability(policy):
    assert expected_f1(offline_judgment(labels=CROWDED), policy, lambda c: c) == pytest.approx(1.8 / 3.25)


def test_a_sure_label_among_many_unsure_candidates_is_sent_to_the_model(policy):
    assert decides(FixedJudge(offline_judgment(confidence=0.9, labels=SURE)), policy)
    assert not decides(FixedJudge(offline_judgment(confidence=0.9, labels=CROWDED)), policy)


def test_the_calibrated_probability_and_live_precision_decide_not_the_raw_confidence(policy):
    assert not decides(CalibratedJudge(offline_judgment(confidence=0.9, labels=SURE)), policy)
    assert not decides(FixedJudge(offline_judgment(confidence=0.9, labels=SURE)), policy,
                       live={"module: linear algebra": LivePrecision(kept=1, applied=10)})
    assert decides(FixedJudge(offline_judgment(confidence=0.9, labels=SURE)), policy,  # too few to trust
                   live={"module: linear algebra": LivePrecision(kept=0, applied=4)})


@pytest.mark.parametrize("threshold, keeps", [(0.3, True), (0.5, True), (0.6, False), (0.9, False)])
def test_the_threshold_is_the_cost_knob(policy, threshold, keeps):
    assert decides(FixedJudge(offline_judgment(confidence=0.9, labels=CROWDED)), policy, threshold) is keeps
