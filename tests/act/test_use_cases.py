"""act/ is the use-case layer: only its modules call the one flow, every writer has its module,
and the callers that skipped shadow mode, wrote to the wrong home or let a refused edit through
now go the one way (#25)."""

from __future__ import annotations

import ast
import copy
import json
import re
from pathlib import Path

from ghtest import REPO, seed
from starlette.testclient import TestClient

from issuetriage.agents.session import GitHubBackend, Session
from issuetriage.judges.heuristic import HeuristicJudge
from issuetriage.models import Decision, Plan
from issuetriage.service.app import review_app
from issuetriage.service.resolver import TokenResolver
from issuetriage.store.sqlite import Store

SRC = Path(__file__).resolve().parents[2] / "src" / "issuetriage"
SVD = 115  # a demo issue: a linear-algebra bug
WRITERS = {"live", "store_run", "backlog", "review", "stale", "close_fixed", "agent",
           "onboard"}  # onboard writes the checkout's profile, the store's mirror and the history, never an issue


def in_shadow_mode(policy):
    changed = copy.copy(policy)
    changed.meta = policy.meta.model_copy(update={"live": policy.meta.live.model_copy(update={"shadow": True})})
    return changed


def flow_callers() -> list[str]:
    """Modules outside act/ that import the flow's `act` (the only way to call it)."""
    found = []
    for path in SRC.rglob("*.py"):
        if path.parent.name == "act" and path.parent.parent == SRC:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module == "issuetriage.act.flow" and \
                    any(alias.name == "act" for alias in node.names):
                found.append(str(path.relative_to(SRC)))
            if isinstance(node, ast.Import) and any(a.name == "issuetriage.act.flow" for a in node.names):
                found.append(str(path.relative_to(SRC)))
    return sorted(found)


def test_no_module_outside_act_calls_the_flow():
    assert flow_callers() == []


def test_act_names_every_writer():
    modules = {p.stem for p in (SRC / "act").glob("*.py")} - {"__init__"}
    assert modules == WRITERS | {"flow", "applier", "verify", "hold"}


def test_mcp_on_github_with_apply_in_shadow_mode_writes_nothing_and_records_the_plan(standin, client, policy):
    seed(standin, SVD)
    audit = Store(":memory:")
    agent = Session(in_shadow_mode(policy), GitHubBackend(client, REPO, audit), HeuristicJudge(),
                    apply=True)
    result = agent.submit_plan(SVD, "label", ["module: linear algebra"], [], None, "svd bug")
    assert standin.writes == []
    assert result["applied"] is False and result["writes"] == [] and result["held_for_review"]
    [row] = audit.audit(REPO, SVD)
    assert row["applied"] == 0 and row["extra"]["shadow"] is True


def test_approving_in_the_service_review_app_writes_to_github_through_the_flow_and_verifies(standin, policy,
                                                                                          tmp_path):
    seed(standin, SVD)
    store = tmp_path / "t.db"
    with Store(store) as db:
        from issuetriage.github.client import GitHubClient
        from issuetriage.github.reads import fetch_issue

        db.put_issue(fetch_issue(GitHubClient.from_env(standin.env()), REPO, SVD))
        plan = Plan(repo=REPO, number=SVD, decision=Decision.LABEL,
                    labels_added=("module: linear algebra", "bot-triaged"))
        audit_id = db.record(plan, judge="heuristic", extra={"shadow": True})
    app = review_app(store, policy, TokenResolver(REPO, "pytorch", standin.env()))
    with TestClient(app, base_url="http://127.0.0.1") as web:
        page = web.get(f"/plan/{audit_id}").text
        token = re.search(r'name="csrf" value="([^"]+)"', page).group(1)  # type: ignore[union-attr]
        answer = web.post(f"/plan/{audit_id}/approve", data={"csrf": token})
    assert answer.status_code == 200 and "applied on github" in answer.text
    assert {"module: linear algebra", "bot-triaged"} <= set(standin.state.label_names(REPO, SVD))
    with Store(store) as db:
        approved = db.audit(REPO, SVD)[-1]
        assert approved["applied"] == 1 and approved["extra"]["where"] == "github"
        assert approved["extra"]["outcome"] == "triaged" and approved["extra"]["missing"] == []
        assert approved["extra"]["approved_from"] == audit_id
        assert db.db.execute("SELECT verdict FROM reviews").fetchone()[0] == "approved"


def test_a_hook_denies_an_agents_write_in_shadow_mode_and_allows_it_otherwise(policy):
    from issuetriage.agents.hooks import run
    from issuetriage.models import Issue

    issue = Issue(repo=REPO, number=7, title="sorting order differs", body="equal keys move")
    payload = json.dumps({"session_id": "s", "hook_event_name": "PreToolUse", "tool_name": "Bash",
                          "tool_input": {"command": "gh issue edit 7 --add-label 'module: sorting and selection'"}})
    env = {"GITHUB_REPOSITORY": REPO, "TRIAGE_ISSUE_NUMBER": "7"}
    live = run("pre-tool-use", payload, env, policy, read_issue=lambda r, n: issue)
    assert live.exit_code == 0 and "allow" in live.stdout
    held = run("pre-tool-use", payload, env, in_shadow_mode(policy), read_issue=lambda r, n: issue)
    assert held.exit_code == 2 and "shadow mode" in held.stderr
