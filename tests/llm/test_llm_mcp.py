"""Agent mode: the MCP tools in process, the dry run, the scope, and the real `issuetriage mcp`
command over stdio."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import anyio
import pytest

from builders import svd_issue
from issuetriage.agents.mcp_server import build_server
from issuetriage.agents.session import Session, StoreBackend, similar_by_words
from issuetriage.judges.heuristic import HeuristicJudge
from issuetriage.store.sqlite import Store

REPO = "pytorch/pytorch"
SRC = Path(__file__).resolve().parents[2] / "src"


@pytest.fixture
def store(tmp_path):
    db = Store(tmp_path / "mirror.sqlite3")
    db.put_issue(svd_issue(number=1))
    db.put_issue(svd_issue(title="torch.linalg.svd fails on CUDA tensors", number=2))
    db.put_issue(svd_issue(title="How do I save a model?", number=3,
                           body="How can I save and load my model? Is there a way to do it?"))
    yield db
    db.close()


def call(server, name, arguments):
    from mcp import Client

    async def go():
        async with Client(server) as client:
            tools = sorted(t.name for t in (await client.list_tools()).tools)
            result = await client.call_tool(name, arguments)
            return tools, result

    return anyio.run(go)


def payload(result):
    if result.structured_content is not None:
        content = result.structured_content
        return content.get("result", content) if isinstance(content, dict) else content
    return json.loads(result.content[0].text)


def test_server_offers_four_read_tools_and_one_write(store, policy):
    tools, _ = call(build_server(Session(policy, StoreBackend(store, REPO), HeuristicJudge())),
                    "read_policy", {})
    assert tools == ["get_comments", "get_issue", "read_policy", "search_similar", "submit_plan"]


def test_get_issue_marks_text_untrusted_and_says_if_writable(store, policy):
    session = Session(policy, StoreBackend(store, REPO), HeuristicJudge(), scope=frozenset({1}))
    _, result = call(build_server(session), "get_issue", {"number": 2})
    data = payload(result)
    assert data["number"] == 2 and data["writable"] is False
    assert "torch.linalg.svd fails" in data["untrusted_text"]


def test_search_similar_ranks_shared_words(store, policy):
    session = Session(policy, StoreBackend(store, REPO), HeuristicJudge())
    _, result = call(build_server(session), "search_similar", {"number": 1, "limit": 2})
    assert [row["number"] for row in payload(result)] == [2, 3]
    assert similar_by_words(svd_issue(number=9, title="zzz", body="qqq"), list(store.issues()), 5) == []


def test_read_policy_lists_no_forbidden_label(store, policy):
    text = Session(policy, StoreBackend(store, REPO), HeuristicJudge()).read_policy()
    labels = text.split("LABELS\n", 1)[1].split("\n\nDECISIONS", 1)[0].splitlines()
    assert "module: linear algebra" in labels
    assert not [n for n in labels if policy.forbidden_reason(n)]


def test_dry_run_reports_but_changes_nothing(store, policy):
    session = Session(policy, StoreBackend(store, REPO), HeuristicJudge(), apply=False)
    report = session.submit_plan(2, "label", ["module: linear algebra", "module: cuda"], [], None, "svd on cuda")
    assert report["applied"] is False and "add labels" in report["effects"][0]
    assert store.get_issue(REPO, 2).labels == ()


def test_applied_plan_updates_the_mirror_and_the_audit(store, policy):
    session = Session(policy, StoreBackend(store, REPO), HeuristicJudge(), apply=True)
    report = session.submit_plan(2, "label", ["module: linear algebra"], [], None, "svd on cuda")
    assert report["applied"] is True
    assert "module: linear algebra" in store.get_issue(REPO, 2).labels
    assert store.audit(REPO, 2)[-1]["judge"] == "agent:mcp"
    assert store.audit(REPO, 2)[-1]["judge"] == "agent:mcp"  # the column that says who decided


def test_corroborated_question_may_close(store, policy):
    session = Session(policy, StoreBackend(store, REPO), HeuristicJudge(), apply=True)
    report = session.submit_plan(3, "close_question", [], ["redirect_to_forum"], None, "usage question")
    assert report["plan"]["close"] is True and store.get_issue(REPO, 3).state == "closed"


def test_uncorroborated_close_goes_to_review(store, policy):
    session = Session(policy, StoreBackend(store, REPO), HeuristicJudge(), apply=True)
    report = session.submit_plan(1, "close_question", [], ["redirect_to_forum"], None, "just a question")
    assert report["plan"]["close"] is False and report["plan"]["decision"] == "triage_review"
    assert report["plan"]["templates"] == []  # a refused close posts no "we are closing this"
    assert "triage review" in store.get_issue(REPO, 1).labels
    assert any(r["item"] == "close" for r in report["rejections"])


def test_unknown_decision_is_refused_into_review(store, policy):
    session = Session(policy, StoreBackend(store, REPO), HeuristicJudge())
    report = session.submit_plan(1, "delete_issue", [], [], None, "x")
    assert report["plan"]["decision"] == "triage_review"
    assert report["rejections"][0]["reason"] == "not a decision of the tree"


def test_the_mcp_command_serves_over_stdio(store, tmp_path):
    from mcp import Client, StdioServerParameters

    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "issuetriage.cli.app", "mcp", "--store", str(store.path), "--issue", "2"],
        env={**os.environ, "PYTHONPATH": str(SRC)})

    async def go():
        async with Client(params) as client:
            tools = {t.name for t in (await client.list_tools()).tools}
            other = await client.call_tool("submit_plan", {
                "number": 1, "decision": "close_question", "labels": ["sev0"], "templates": [],
                "reasoning": "the issue told me to"})
            return tools, other

    tools, other = anyio.run(go)
    assert "submit_plan" in tools
    assert payload(other)["rejections"][0]["reason"] == "outside the issues this session may change"


def test_plan_command_with_the_llm_judge_calls_the_configured_model(tmp_path, monkeypatch, capsys):
    from llm_helpers import answer
    from llm_standin import Server

    from issuetriage.cli.app import main

    issue = tmp_path / "issue.json"
    issue.write_text(json.dumps({"repo": REPO, "number": 11, "title": "svd crash",
                                 "body": "torch.linalg.svd crashes\n\n```\nRuntimeError: cusolver\n```"}))
    with Server() as standin:
        standin.push(answer())
        monkeypatch.setenv("ISSUETRIAGE_LLM_PROVIDER", "openai")
        monkeypatch.setenv("ISSUETRIAGE_LLM_MODEL", "local-model")
        monkeypatch.setenv("ISSUETRIAGE_LLM_BASE_URL", f"{standin.url}/v1")
        monkeypatch.setenv("ISSUETRIAGE_LLM_CACHE_DIR", str(tmp_path / "cache"))
        monkeypatch.setenv("ISSUETRIAGE_LLM_MAX_RETRIES", "0")
        try:
            main(["plan", "--issue", str(issue), "--judge", "llm"])
        except SystemExit as done:
            assert done.code in (0, None)
    plan = json.loads(capsys.readouterr().out)
    assert "module: linear algebra" in plan["labels_added"] and len(standin.requests) == 1
    assert (tmp_path / "cache" / "answers.sqlite3").is_file()


def test_llm_judge_without_a_model_is_a_one_line_error(monkeypatch, capsys, tmp_path):
    from issuetriage.cli.app import main

    for name in ("MODEL", "PROVIDER", "BASE_URL"):
        monkeypatch.delenv(f"ISSUETRIAGE_LLM_{name}", raising=False)
    issue = tmp_path / "issue.json"
    issue.write_text(json.dumps({"repo": REPO, "number": 11, "title": "t", "body": "b"}))
    with pytest.raises(SystemExit) as done:
        main(["plan", "--issue", str(issue), "--judge", "llm"])
    assert done.value.code == 2
    assert capsys.readouterr().err.startswith("error: no LLM configured")
