"""Correction mining: what humans did after each plan, and live precision scored like eval."""

from __future__ import annotations

import pytest
from livetest import BOT, HUMAN, REPO, happened, record

from builders import make_issue
from issuetriage.errors import UserError
from issuetriage.live.outcomes import live_quality, outcomes
from issuetriage.models import Decision
from issuetriage.store.sqlite import Store


@pytest.fixture
def store():
    with Store(":memory:") as db:
        for n in (1, 2, 3, 4):
            db.put_issue(make_issue(number=n, title=f"issue {n}"))
        yield db


def by_number(found):
    return {o.issue.number: o for o in found}


def test_shadow_plan_kept_missed_and_mislabeled(store, policy):
    record(store, 1, ("module: nn", "module: cuda"))
    happened(store, 1, ("labeled", "module: nn", HUMAN), ("labeled", "module: optimizer", HUMAN))
    record(store, 2, ("module: nn",))
    happened(store, 2, ("labeled", "bot-mislabeled", HUMAN))
    o = by_number(outcomes(store, policy))
    assert o[1].kept == {"module: nn"} and o[1].missed == {"module: optimizer"}
    assert not o[1].removed and not o[1].mislabeled
    assert o[2].mislabeled and o[2].kept == frozenset()


def test_applied_plan_label_removed_by_whom_and_reopened_after_close(store, policy):
    record(store, 3, ("module: nn", "module: cuda"), shadow=False, decision=Decision.CLOSE_QUESTION, close=True)
    store.db.execute("UPDATE audit SET applied=1")
    happened(store, 3, ("labeled", "module: nn", BOT), ("labeled", "module: cuda", BOT), ("closed", None, BOT),
             ("unlabeled", "module: cuda", "alice"), ("reopened", None, "alice"))
    o = by_number(outcomes(store, policy))[3]
    assert o.removed == {"module: cuda": "alice"} and o.kept == {"module: nn"}
    assert o.reopened and o.humans_acted


def test_issue_nobody_touched_is_not_scored(store, policy):
    record(store, 4, ("module: nn",))
    quality = live_quality(outcomes(store, policy), policy)
    assert (quality.plans, quality.acted_on, quality.scored_issues) == (1, 0, 0)


def test_live_precision_per_label_decision_and_judge(store, policy):
    record(store, 1, ("module: nn",), judge="heuristic")
    happened(store, 1, ("labeled", "module: nn", HUMAN))
    record(store, 2, ("module: nn",), judge="learned")
    happened(store, 2, ("labeled", "module: cuda", HUMAN))
    q = live_quality(outcomes(store, policy), policy)
    assert (q.per_label["module: nn"].tp, q.per_label["module: nn"].fp) == (1, 1)
    assert q.per_label["module: cuda"].fn == 1
    assert q.per_judge["heuristic"].precision == 1.0 and q.per_judge["learned"].precision == 0.0
    assert set(q.per_decision) == {"label"}


def test_latest_plan_of_an_issue_is_the_one_judged(store, policy):
    record(store, 1, ("module: cuda",))
    record(store, 1, ("module: nn",))
    happened(store, 1, ("labeled", "module: nn", HUMAN))
    q = live_quality(outcomes(store, policy), policy)
    assert q.micro.fp == 0 and q.micro.tp == 1


@pytest.mark.parametrize("steps, message", [
    ((("unlabeled", "module: nn", HUMAN),), "removes 'module: nn', which no earlier event added"),
    ((("labeled", "module: nn", HUMAN),), "do not explain its labels"),
])
def test_event_stream_with_a_gap_is_refused(store, policy, steps, message):
    record(store, 1, ("module: nn",))
    happened(store, 1, *steps)
    if message.startswith("do not"):  # the issue carries a label no event added
        store.put_issue(store.get_issue(REPO, 1).model_copy(update={"labels": ("module: nn", "module: cuda")}))
    with pytest.raises(UserError, match=message):
        outcomes(store, policy)


def test_store_of_another_repository_is_refused(policy):
    with Store(":memory:") as db:
        db.put_issue(make_issue(repo="someone/else"))
        with pytest.raises(UserError, match="not of pytorch/pytorch"):
            outcomes(db, policy)


def test_mislabeled_mark_disowns_only_the_labels_the_bot_applied(store, policy):
    record(store, 1, ("module: nn", "module: cuda"), shadow=False)
    store.db.execute("UPDATE audit SET applied=1")
    happened(store, 1, ("labeled", "module: nn", BOT), ("labeled", "module: cuda", BOT),
             ("labeled", "bot-mislabeled", HUMAN))
    record(store, 2, ("module: nn",))  # a shadow plan: the labels on the issue are all human
    happened(store, 2, ("labeled", "module: nn", HUMAN), ("labeled", "bot-mislabeled", HUMAN))
    q = live_quality(outcomes(store, policy), policy)
    assert (q.micro.tp, q.micro.fp) == (1, 0), "issue 1 has no gold left; issue 2's label is confirmed"
