"""The judge factory: names, the `auto` default, and clean errors."""

import pytest

from builders import make_issue
from issuetriage.errors import UserError
from issuetriage.evidence.signals import extract_signals
from issuetriage.judges.factory import get_judge
from issuetriage.judges.heuristic import HeuristicJudge


@pytest.fixture
def no_llm_env(monkeypatch):
    for key in list(__import__("os").environ):
        if key.startswith("ISSUETRIAGE_LLM_"):
            monkeypatch.delenv(key)


def test_auto_is_the_offline_heuristic_without_a_model_or_llm(no_llm_env):
    assert isinstance(get_judge("auto"), HeuristicJudge)


def test_auto_is_hybrid_when_an_llm_is_configured(no_llm_env, monkeypatch, tmp_path):
    monkeypatch.setenv("ISSUETRIAGE_LLM_MODEL", "claude-sonnet-4-6")
    monkeypatch.setenv("ISSUETRIAGE_LLM_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-test-not-a-real-key")
    assert get_judge("auto").name == "hybrid"


def test_learned_needs_a_model_folder():
    with pytest.raises(UserError, match="needs --model"):
        get_judge("learned")


def test_unknown_judge_is_named():
    with pytest.raises(UserError, match="unknown judge 'oracle'"):
        get_judge("oracle")


def test_title_keywords_count_only_in_the_title(policy):
    def cuda(title, body):
        issue = make_issue(title=title, body=body)
        return HeuristicJudge().judge(issue, extract_signals(issue), policy).score("module: cuda")

    assert "gpu" in policy.labels["module: cuda"].title_keywords
    body = "I run torch.lerp on my gpu and the values differ from what the docs say."
    assert cuda("torch.lerp gives a wrong result on GPU", body) >= policy.meta.thresholds.label
    assert cuda("torch.lerp gives a wrong result", body) == 0.0
    # one mention in the title counts once, whichever keywords name it
    assert cuda("torch.lerp differs between CPU and GPU", body) == cuda("torch.lerp differs on GPU", body)
