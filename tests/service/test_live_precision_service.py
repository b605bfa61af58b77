"""A worker's hybrid judge routes by what humans did with the bot's labels (#29), read from the
store when the worker builds it, with or without the repository's history."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from issuetriage.judges.llm.judge import HybridJudge, LivePrecision
from issuetriage.live import events as label_events
from issuetriage.live.events import LabelEvent
from issuetriage.policy import load_profile

LINALG = "module: linear algebra"
START = datetime(2026, 11, 1, tzinfo=UTC)


@pytest.mark.parametrize("history", ["none", "damaged"])
def test_a_workers_hybrid_reads_the_corrections_from_its_store(sqlite_jobs, tmp_path, monkeypatch, history):
    monkeypatch.delenv("ISSUETRIAGE_LLM_BASE_URL", raising=False)
    monkeypatch.setenv("ISSUETRIAGE_LLM_PROVIDER", "openai")
    monkeypatch.setenv("ISSUETRIAGE_LLM_MODEL", "local")
    monkeypatch.setenv("ISSUETRIAGE_LLM_CACHE_DIR", str(tmp_path / "cache"))
    if history == "damaged":  # judged without history: still with the corrections
        folder = tmp_path / "history"
        folder.mkdir()
        (folder / "manifest.json").write_text("{not json")
        monkeypatch.setenv("ISSUETRIAGE_HISTORY", str(folder))
    else:
        monkeypatch.delenv("ISSUETRIAGE_HISTORY", raising=False)
    policy = load_profile("pytorch")
    store = sqlite_jobs.store()
    for n in range(1, 7):
        steps = [("labeled", "issuetriage-bot")] + ([("unlabeled", "a-maintainer")] if n < 6 else [])
        label_events.save(store, policy.meta.repo, n, [
            LabelEvent(n, n * 10 + i, kind, LINALG, actor, START + timedelta(days=n, minutes=i))
            for i, (kind, actor) in enumerate(steps)])
    sqlite_jobs.judge_name = "hybrid"
    judge, problem = sqlite_jobs.judge_and_history(policy)
    assert isinstance(judge, HybridJudge) and ("damaged" in problem) == (history == "damaged")
    assert judge.live_precision == {LINALG: LivePrecision(kept=1, applied=6)}
