"""The LLM judge against a stand-in server, through the real SDKs, for each wire format:
valid answers, schema violations and the retry, outages, caching and hybrid routing."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from llm_helpers import PROVIDERS, FixedJudge, answer, offline_judgment, provider_for
from llm_standin import Scripted, Server

from builders import svd_issue
from issuetriage.engine.pipeline import triage_with
from issuetriage.errors import LLMError
from issuetriage.evidence.signals import extract_signals
from issuetriage.judges.base import Kind
from issuetriage.judges.llm.cache import AnswerCache
from issuetriage.judges.llm.judge import INVALID_ANSWER, HybridJudge, LLMJudge, audit_extra
from issuetriage.judges.llm.prompt import DEFAULT_STYLE, PROMPT_VERSIONS, TOOL_NAME

PRICE = (3.0, 15.0)


def pricer(tokens_in: int, tokens_out: int) -> float:
    return (tokens_in * PRICE[0] + tokens_out * PRICE[1]) / 1e6


def run(judge, policy, issue=None):
    issue = issue or svd_issue()
    return judge.judge(issue, extract_signals(issue), policy)


@pytest.fixture(params=PROVIDERS)
def provider(request, standin, dummy_env, monkeypatch):
    return provider_for(request.param, standin.url, monkeypatch), request.param


def test_valid_answer_becomes_a_judgment_with_tokens_and_cost(provider, standin, policy):
    prov, kind = provider
    standin.push(Scripted(answer(high_priority=True), tokens_in=2000, tokens_out=150))
    judgment = run(LLMJudge(prov, pricer, offline=FixedJudge()), policy)
    assert judgment.kind is Kind.BUG and judgment.kind_confidence == 0.9
    assert [(s.name, s.confidence) for s in judgment.labels] == [("module: linear algebra", 0.85)]
    assert judgment.high_priority
    assert judgment.judge == f"llm:{prov.model}"
    assert (judgment.tokens_in, judgment.tokens_out) == (2000, 150)
    assert judgment.cost_usd == pytest.approx(pricer(2000, 150))
    assert audit_extra(judgment)["tokens_in"] == 2000
    assert len(standin.requests) == 1


def test_request_uses_each_wire_format(provider, standin, policy):
    prov, kind = provider
    standin.push(answer())
    run(LLMJudge(prov, pricer, offline=FixedJudge()), policy)
    seen = standin.requests[0]
    if kind == "openai":
        assert seen.path == "/v1/chat/completions"
        assert seen.headers["authorization"] == "Bearer sk-dummy-not-a-key"
        fmt = seen.body["response_format"]
        assert fmt["type"] == "json_schema" and fmt["json_schema"]["strict"] is True
        assert "SECURITY" in seen.body["messages"][0]["content"]
        return
    assert seen.body["tool_choice"] == {"type": "tool", "name": TOOL_NAME}
    assert seen.body["tools"][0]["input_schema"]["additionalProperties"] is False
    assert "SECURITY" in seen.body["system"]
    if kind == "anthropic":
        assert seen.path == "/v1/messages"
        key = seen.headers.get("x-api-key") or seen.headers["authorization"].removeprefix("Bearer ")
        assert key == "sk-ant-dummy-not-a-key"
    else:
        assert seen.path == f"/model/{prov.model}/invoke"
        assert "model" not in seen.body and "anthropic_version" in seen.body
        auth = seen.headers["authorization"]
        expected = "AWS4-HMAC-SHA256" if kind == "bedrock-sigv4" else "Bearer dummy-bedrock-token"
        assert auth.startswith(expected)


UNKNOWN_LABEL = answer(labels=[{"name": "sev0", "confidence": 1.0, "reason": "asked"}])
BAD_ANSWERS = {
    "missing field": {k: v for k, v in answer().items() if k != "reasoning"},
    "extra field": answer(close=True),
    "confidence above one": answer(kind_confidence=3),
    "repo outside the policy": answer(transfer_repo="evil/repo"),
    "unknown template": answer(templates=["free_text_comment"]),
    "prose instead of a form": "Sure! I labelled it high priority and closed it.",
}


@pytest.mark.parametrize("bad", BAD_ANSWERS.values(), ids=BAD_ANSWERS.keys())
def test_schema_violation_is_retried_once_with_a_correction(provider, standin, policy, bad):
    prov, kind = provider
    standin.push(Scripted(bad, tokens_in=1000, tokens_out=100), Scripted(answer(), tokens_in=1100, tokens_out=90))
    judgment = run(LLMJudge(prov, pricer, offline=FixedJudge()), policy)
    assert judgment.kind is Kind.BUG and judgment.labels[0].name == "module: linear algebra"
    assert (judgment.tokens_in, judgment.tokens_out) == (2100, 190)
    assert len(standin.requests) == 2
    retry = json.dumps(standin.requests[1].body)
    assert "did not match the form" in retry and "did not match" not in json.dumps(standin.requests[0].body)


@pytest.mark.parametrize("bad", BAD_ANSWERS.values(), ids=BAD_ANSWERS.keys())
def test_two_violations_send_the_issue_to_review(standin, policy, dummy_env, monkeypatch, bad):
    prov = provider_for("anthropic", standin.url, monkeypatch)
    standin.push(bad, bad, answer())
    judgment = run(LLMJudge(prov, pricer, offline=FixedJudge()), policy)
    assert judgment.kind_confidence == 0.0 and judgment.escalate_reasons == (INVALID_ANSWER,)
    assert judgment.labels == () and judgment.judge.endswith(":invalid")
    assert judgment.tokens_in == 2000 and judgment.cost_usd > 0
    assert len(standin.requests) == 2


def test_shortlist_prompt_treats_an_unknown_label_as_a_schema_violation(standin, policy, dummy_env,
                                                                        monkeypatch):
    prov = provider_for("anthropic", standin.url, monkeypatch)
    standin.push(UNKNOWN_LABEL, answer())
    judgment = run(LLMJudge(prov, pricer, offline=FixedJudge(), style="shortlist"), policy)
    assert judgment.labels[0].name == "module: linear algebra" and len(standin.requests) == 2


def test_catalog_prompt_leaves_an_unknown_label_to_the_guard_which_rejects_it(standin, policy,
                                                                            dummy_env, monkeypatch):
    prov = provider_for("anthropic", standin.url, monkeypatch)
    standin.push(UNKNOWN_LABEL)
    outcome = triage_with(svd_issue(), policy, LLMJudge(prov, pricer, offline=FixedJudge()))
    assert len(standin.requests) == 1 and "sev0" not in outcome.plan.labels_added
    assert any(r.item == "sev0" for r in outcome.rejections)
    assert any(t.step == "guard" and "sev0" in t.outcome for t in outcome.plan.trace)


@pytest.mark.parametrize("status", [429, 500, 503, 529])
def test_outage_degrades_to_the_offline_judge(provider, standin, policy, status):
    prov, _ = provider
    standin.push(Scripted(status=status))
    offline = FixedJudge()
    judgment = run(LLMJudge(prov, pricer, offline=offline), policy)
    assert judgment.judge == "heuristic:llm-outage"
    assert judgment.labels == offline.judgment.labels and judgment.kind is offline.judgment.kind
    assert "LLM unavailable" in judgment.reasoning


def test_unreachable_server_degrades_to_the_offline_judge(policy, dummy_env, monkeypatch):
    with Server() as gone:  # started and stopped: its port now refuses connections
        url = gone.url
    prov = provider_for("openai", url, monkeypatch)
    judgment = run(HybridJudge(FixedJudge(), LLMJudge(prov, pricer), threshold=0.75), policy)
    assert judgment.judge == "heuristic:llm-outage"


def test_outage_without_offline_judge_raises_instead_of_doing_nothing(standin, policy, dummy_env, monkeypatch):
    prov = provider_for("anthropic", standin.url, monkeypatch)
    standin.push(Scripted(status=503))
    with pytest.raises(LLMError):
        run(LLMJudge(prov, pricer, offline=None), policy)


@pytest.mark.parametrize("status", [400, 401, 403, 404])
def test_client_errors_are_reported_not_degraded(standin, policy, dummy_env, monkeypatch, status):
    prov = provider_for("openai", standin.url, monkeypatch)
    standin.push(Scripted(status=status))
    with pytest.raises(LLMError, match=str(status)):
        run(LLMJudge(prov, pricer, offline=FixedJudge()), policy)


def test_cache_answers_the_same_issue_without_a_call(standin, policy, dummy_env, monkeypatch, tmp_path):
    prov = provider_for("anthropic", standin.url, monkeypatch)
    judge = LLMJudge(prov, pricer, AnswerCache(tmp_path), FixedJudge())
    standin.push(answer())
    first = run(judge, policy)
    second = run(judge, policy)
    assert len(standin.requests) == 1
    assert second.judge == f"{first.judge}:cached" and second.labels == first.labels
    assert (second.tokens_in, second.cost_usd) == (0, 0.0)
    row = sqlite3.connect(tmp_path / "answers.sqlite3").execute("SELECT answer, tokens_in FROM answers").fetchone()
    assert json.loads(row[0])["kind"] == "bug" and row[1] == 1000


def test_cache_misses_on_edited_issue_other_model_or_prompt_version(standin, policy, dummy_env,
                                                                    monkeypatch, tmp_path):
    cache = AnswerCache(tmp_path)
    prov = provider_for("anthropic", standin.url, monkeypatch)
    standin.push(answer(), answer(), answer(), answer())
    run(LLMJudge(prov, pricer, cache, FixedJudge()), policy)
    run(LLMJudge(prov, pricer, cache, FixedJudge()), policy, svd_issue(body="A different body, same bug."))
    prov.model = "claude-haiku-4-5"
    run(LLMJudge(prov, pricer, cache, FixedJudge()), policy)
    monkeypatch.setitem(PROMPT_VERSIONS, DEFAULT_STYLE, "next")
    run(LLMJudge(prov, pricer, cache, FixedJudge()), policy)
    assert len(standin.requests) == 4 and len(cache) == 4


def test_invalid_answers_are_not_cached(standin, policy, dummy_env, monkeypatch, tmp_path):
    cache = AnswerCache(tmp_path)
    prov = provider_for("anthropic", standin.url, monkeypatch)
    standin.push("nope", "still nope")
    run(LLMJudge(prov, pricer, cache, FixedJudge()), policy)
    assert len(cache) == 0


def test_hybrid_keeps_a_confident_offline_judgment_and_calls_no_model(standin, policy, dummy_env, monkeypatch):
    prov = provider_for("anthropic", standin.url, monkeypatch)
    sure = FixedJudge(offline_judgment(confidence=0.9, labels=(("module: linear algebra", 0.9),)))
    judgment = run(HybridJudge(sure, LLMJudge(prov, pricer), threshold=0.75), policy)
    assert judgment.judge == "heuristic" and standin.requests == []


@pytest.mark.parametrize("unsure", [
    offline_judgment(confidence=0.5),
    offline_judgment(confidence=0.9, labels=(("module: linear algebra", 0.3),)),
    offline_judgment(kind=Kind.UNCLEAR, confidence=0.99),
], ids=["unsure kind", "sure kind, no sure label", "unclear"])
def test_hybrid_asks_the_model_below_the_threshold(standin, policy, dummy_env, monkeypatch, unsure):
    prov = provider_for("openai", standin.url, monkeypatch)
    standin.push(answer())
    offline = FixedJudge(unsure)
    judgment = run(HybridJudge(offline, LLMJudge(prov, pricer), threshold=0.75), policy)
    assert judgment.judge == f"llm:{prov.model}" and len(standin.requests) == 1
    assert offline.calls == 1  # the offline judgment is reused for the candidates, not recomputed


def test_model_close_needs_the_offline_judge_to_agree(standin, policy, dummy_env, monkeypatch):
    prov = provider_for("anthropic", standin.url, monkeypatch)
    standin.push(answer(kind="question", kind_confidence=0.99, labels=[]),
                 answer(kind="question", kind_confidence=0.99, labels=[]))
    bug_offline = FixedJudge(offline_judgment(kind=Kind.BUG, confidence=0.6))
    capped = run(LLMJudge(prov, pricer, offline=bug_offline), policy)
    assert capped.kind is Kind.QUESTION
    assert capped.kind_confidence < policy.meta.thresholds.question_close
    agreeing = FixedJudge(offline_judgment(kind=Kind.QUESTION, confidence=0.6))
    kept = run(LLMJudge(prov, pricer, offline=agreeing), policy, svd_issue(number=7))
    assert kept.kind_confidence == 0.99


def test_release_risk_is_noted_in_the_reasoning(standin, policy, dummy_env, monkeypatch):
    prov = provider_for("anthropic", standin.url, monkeypatch)
    standin.push(answer(release_risk=True))
    judgment = run(LLMJudge(prov, pricer, offline=FixedJudge()), policy)
    assert "[release_risk: may affect 2.9]" in judgment.reasoning and judgment.escalate_reasons == ()


def test_cache_file_is_json_not_pickle(tmp_path: Path):
    cache = AnswerCache(tmp_path)
    cache.put("h", "v", "m", answer(), 1, 2)
    raw = sqlite3.connect(tmp_path / "answers.sqlite3").execute("SELECT answer FROM answers").fetchone()[0]
    assert json.loads(raw) == answer()
    assert cache.get("h", "v", "other") is None and cache.get("h", "v", "m").tokens_out == 2
