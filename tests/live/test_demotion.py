"""A label below the precision target is demoted to suggest-only, reported once, and restored
when its live precision recovers; a demoted label's plan waits for review instead of applying."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from livetest import HUMAN, happened, record, tuned
from rich.console import Console

from builders import make_issue
from issuetriage.act.hold import Mode, held
from issuetriage.cli.engine import run_store
from issuetriage.live import demotion
from issuetriage.live.review import queue
from issuetriage.models import Decision, Plan
from issuetriage.store.sqlite import Store


@pytest.fixture
def live_policy(policy):
    return tuned(policy, live={"min_support": 3, "precision_target": 0.5})


@pytest.fixture
def store():
    with Store(":memory:") as db:
        yield db


def plans_for(store, label, right, start):
    """`len(right)` issues from `start`, each planned with `label`; humans agree where True."""
    for i, ok in enumerate(right):
        n = start + i
        store.put_issue(make_issue(number=n))
        record(store, n, (label,))
        happened(store, n, ("labeled", label if ok else "module: cuda", HUMAN))


def test_low_precision_demotes_then_recovery_restores(store, live_policy):
    plans_for(store, "module: nn", [False, False, True], 1)
    changes = demotion.update(store, live_policy)
    assert [(c.label, c.demoted) for c in changes] == [("module: nn", True)]
    assert store.demoted("pytorch/pytorch") == {"module: nn"}
    assert demotion.update(store, live_policy) == []  # reported once, when it changes
    plans_for(store, "module: nn", [True, True, True, True], 10)
    changes = demotion.update(store, live_policy)
    assert [(c.label, c.demoted) for c in changes] == [("module: nn", False)]
    assert store.demoted("pytorch/pytorch") == frozenset()


def test_too_few_plans_keep_the_label_as_it_was(store, live_policy):
    plans_for(store, "module: nn", [False, False], 1)
    assert demotion.update(store, live_policy) == []
    assert store.demoted("pytorch/pytorch") == frozenset()


def test_plans_outside_the_window_do_not_count(store, live_policy):
    plans_for(store, "module: nn", [False, False, False], 1)
    far_future = datetime(2100, 1, 1, tzinfo=UTC)
    assert demotion.update(store, live_policy, now=far_future) == []


def test_demoted_label_plan_is_held_for_review_not_applied(store, live_policy):
    plans_for(store, "module: nn", [False, False, False], 1)
    demotion.update(store, live_policy)
    plan = Plan(repo="pytorch/pytorch", number=50, decision=Decision.LABEL, labels_added=("module: nn",))
    assert held(plan, live_policy, Mode(apply=True), store) == {"shadow": True, "held_for_review": ["module: nn"]}
    other = plan.model_copy(update={"labels_added": ("module: cuda",)})
    assert held(other, live_policy, Mode(apply=True), store) is None
    assert held(plan, live_policy, Mode(apply=True, approved=True), store) is None  # a person approved it
    assert held(plan, live_policy, Mode(apply=True), None) is None  # no audit store, no live figures


def test_shadow_run_writes_nothing_and_queues_every_plan(store, policy):
    store.put_issue(make_issue(number=60, title="CUDA out of memory in conv2d", body="RuntimeError: CUDA"))
    before = store.get_issue("pytorch/pytorch", 60)
    decisions = run_store(store, "pytorch", True, "heuristic", None, None, Console(quiet=True), shadow=True)
    assert len(decisions.plans) == 1 and decisions.shadow
    assert store.get_issue("pytorch/pytorch", 60) == before
    assert [i.kind for i in queue(store, policy)] == ["shadow"]
    assert store.audit()[0]["applied"] == 0
