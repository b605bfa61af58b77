"""Ask the model only where it pays (#29): the hybrid reads, once when it is built, what humans did
with the bot's own labels (the synced label events), and a label they keep removing sends the
issues where the offline judge adds it to the model. On every engine the store runs on."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

import pytest

from issuetriage.judges.base import Judgment, Kind, LabelScore
from issuetriage.judges.factory import get_judge
from issuetriage.judges.llm.judge import HybridJudge, LivePrecision
from issuetriage.live import events as label_events
from issuetriage.live.events import LabelEvent
from issuetriage.store.sqlite import Store

REPO = "pytorch/pytorch"
BOT, HUMAN = "issuetriage-bot", "a-maintainer"
LINALG = "module: linear algebra"
START = datetime(2026, 11, 1, tzinfo=UTC)


def happened(store: Store, number: int, *steps: tuple[str, str, str]) -> None:
    """Store the events (kind, label, actor) of issue `number`, a minute apart."""
    label_events.save(store, REPO, number, [
        LabelEvent(number, number * 100 + i, kind, label, actor, START + timedelta(days=number, minutes=i))
        for i, (kind, label, actor) in enumerate(steps)])


def removed_by_humans(store: Store, label: str, first: int, count: int) -> None:
    for n in range(first, first + count):
        happened(store, n, ("labeled", label, BOT), ("unlabeled", label, HUMAN))


@dataclass
class Sure:
    """An offline judge sure of a bug and of one label (expected F1 0.95 at its confidence)."""

    name: str = "heuristic"

    def judge(self, issue, signals, policy) -> Judgment:
        return Judgment(judge=self.name, kind=Kind.BUG, kind_confidence=0.9, reasoning="offline",
                        labels=(LabelScore(name=LINALG, confidence=0.9, reason="keyword"),))


def hybrid(store: Store, policy, monkeypatch, tmp_path) -> HybridJudge:
    """The hybrid the CLI and the worker build with a store (no network: nothing is asked)."""
    monkeypatch.delenv("ISSUETRIAGE_LLM_BASE_URL", raising=False)
    monkeypatch.setenv("ISSUETRIAGE_LLM_PROVIDER", "openai")
    monkeypatch.setenv("ISSUETRIAGE_LLM_MODEL", "local")
    monkeypatch.setenv("ISSUETRIAGE_LLM_CACHE_DIR", str(tmp_path / "cache"))
    judge = get_judge("hybrid", profile=policy, store=store, env={})
    assert isinstance(judge, HybridJudge)
    return judge


def decides_offline(judge: HybridJudge, policy) -> bool:
    return judge.decides_offline(Sure().judge(None, None, policy), policy)


def test_the_bot_labels_humans_kept_and_removed_are_counted_once_per_issue_and_label(url):
    with Store(url) as store:
        removed_by_humans(store, LINALG, 1, 5)
        happened(store, 6, ("labeled", LINALG, BOT), ("labeled", LINALG, BOT))  # relabelled: still one
        happened(store, 7, ("unlabeled", "module: nn", HUMAN), ("labeled", "module: nn", BOT))  # removed before
        happened(store, 8, ("labeled", "module: cuda", HUMAN), ("unlabeled", "module: cuda", HUMAN))  # not the bot's
        happened(store, 9, ("labeled", "module: nn", BOT), ("unlabeled", "module: nn", BOT))  # the bot's own undo
        assert store.bot_labels_kept(REPO, (BOT,)) == {LINALG: (1, 6), "module: nn": (2, 2)}
        assert store.bot_labels_kept("pytorch/vision", (BOT,)) == {}
        assert store.bot_labels_kept(REPO, ()) == {}


def test_a_label_humans_keep_removing_sends_such_issues_to_the_model(url, policy, monkeypatch, tmp_path):
    with Store(url) as store:
        removed_by_humans(store, LINALG, 1, 5)
        happened(store, 6, ("labeled", LINALG, BOT))
        judge = hybrid(store, policy, monkeypatch, tmp_path)
    assert judge.live_precision == {LINALG: LivePrecision(kept=1, applied=6)}
    judge.offline = Sure()
    assert not decides_offline(judge, policy)  # 1 kept of 6: (1 + 5 * 0.9) / 11 = 0.5, expected F1 0.67
    assert decides_offline(HybridJudge(Sure(), judge.llm, judge.threshold), policy)  # without: kept


@pytest.mark.parametrize("removed", [0, 4])
def test_without_enough_corrections_the_hybrid_decides_as_before(url, policy, monkeypatch, tmp_path, removed):
    with Store(url) as store:
        removed_by_humans(store, LINALG, 1, removed)  # 4: fewer than the 5 observations trusted
        judge = hybrid(store, policy, monkeypatch, tmp_path)
    judge.offline = Sure()
    assert decides_offline(judge, policy)
    assert decides_offline(judge, policy) == decides_offline(HybridJudge(Sure(), judge.llm, judge.threshold), policy)


def test_a_label_humans_keep_leaves_the_offline_answer_alone(url, policy, monkeypatch, tmp_path):
    with Store(url) as store:
        for n in range(1, 11):
            happened(store, n, ("labeled", LINALG, BOT))
        judge = hybrid(store, policy, monkeypatch, tmp_path)
    judge.offline = Sure()
    assert judge.live_precision[LINALG] == LivePrecision(kept=10, applied=10) and decides_offline(judge, policy)
