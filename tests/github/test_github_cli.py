"""The commands through the CLI runner, and a planted token that must never show up anywhere."""

from __future__ import annotations

import json

import pytest
from standin import Fault
from ghtest import REPO, number_for, seed, standin, clock, client, policy  # noqa: F401  (fixtures)

from issuetriage.cli.app import main
from standin import TOKEN


def run(argv: list[str]) -> int:
    try:
        main(argv)
    except SystemExit as done:
        return int(done.code or 0)
    return 0


@pytest.fixture
def env(standin, monkeypatch, tmp_path):
    for key, value in standin.env(TRIAGE_HOOK_DEBUG_LOG=str(tmp_path / "hooks.log")).items():
        monkeypatch.setenv(key, value)
    monkeypatch.delenv("GH_TOKEN", raising=False)
    monkeypatch.delenv("GITHUB_APP_ID", raising=False)
    return standin


def test_triage_dry_run_prints_plan_and_calls_and_writes_nothing(env, capsys):
    n = number_for("close_question")
    seed(env, n)
    assert run(["triage", f"{REPO}#{n}"]) == 0
    out = capsys.readouterr().out
    assert "calls it would make (dry run" in out
    assert f"PATCH /repos/{REPO}/issues/{n} " in out and f"POST /repos/{REPO}/issues/{n}/comments" in out
    assert env.writes == []


def test_triage_apply_reports_outcome_and_second_run_is_a_no_op(env, capsys):
    n = number_for("label", comment=False)
    seed(env, n)
    assert run(["triage", f"{REPO}#{n}", "--apply", "--json"]) == 0
    first = json.loads(capsys.readouterr().out)
    assert first["outcome"] in {"triaged", "routed"} and first["api_calls"] == 2  # one read, the labels; verified from the answer
    env.reset_log()
    assert run(["triage", f"{REPO}#{n}", "--apply", "--json"]) == 0
    second = json.loads(capsys.readouterr().out)
    assert second["calls"] == [] and env.writes == [] and second["outcome"] == first["outcome"]
    assert second["already_done"] is True and first["already_done"] is False


def test_no_action_outcome_exits_1(env, capsys):
    n = number_for("label")
    seed(env, n)
    env.faults.append(Fault("POST", rf"/repos/{REPO}/issues/{n}/labels", 200, body=[], times=99))
    assert run(["triage", f"{REPO}#{n}", "--apply"]) == 1
    assert "outcome: no_action" in capsys.readouterr().out


def test_bad_reference_is_a_one_line_error(env, capsys):
    assert run(["triage", "pytorch#1"]) == 2
    assert capsys.readouterr().err.strip() == "error: 'pytorch#1': expected OWNER/REPO#NUMBER"


def test_sync_then_offline_run_on_the_mirror(env, tmp_path, capsys):
    for n in (102, 103):
        seed(env, n)
    db = tmp_path / "t.db"
    assert run(["sync", REPO, "--store", str(db)]) == 0
    assert "synced pytorch/pytorch: 2 issue(s)" in capsys.readouterr().out
    env.reset_log()
    assert run(["run", "--store", str(db)]) == 0
    assert "planned (dry run) 2 issue(s)" in capsys.readouterr().out
    assert env.log == []  # offline


def test_planted_token_never_leaks(env, tmp_path, capsys):
    seed(env, 104)
    db = tmp_path / "audit.db"
    assert run(["triage", f"{REPO}#104", "--apply", "--store", str(db), "--json"]) == 0
    event = {"tool_name": "Bash", "tool_input": {"command": f"gh issue comment 104 --body {TOKEN}"}}
    from issuetriage.agents.hooks import run as hook
    hook("pre-tool-use", json.dumps(event), dict(__import__("os").environ))
    env.accepted_tokens.clear()  # now GitHub rejects it: the error message must not echo it
    assert run(["triage", f"{REPO}#104"]) == 2
    assert run(["labels", "diff", REPO]) == 2
    captured = capsys.readouterr()
    assert "HTTP 401" in captured.err
    texts = {"stdout": captured.out, "stderr": captured.err, "store": db.read_bytes().decode("latin-1"),
             "hook log": (tmp_path / "hooks.log").read_text()}
    for where, text in texts.items():
        assert TOKEN not in text, where
    assert "***" in texts["hook log"]


def test_a_synced_store_opens_in_a_fresh_process(standin, tmp_path):
    """The migration `sync` adds must be known to every command, not only in the syncing process."""
    import os
    import subprocess
    import sys
    from pathlib import Path
    seed(standin, number_for("label"))
    env = {**os.environ, **standin.env(), "PYTHONPATH": str(Path(__file__).resolve().parents[2] / "src")}
    db = str(tmp_path / "t.db")
    for argv in (["sync", REPO, "--store", db], ["run", "--store", db]):
        proc = subprocess.run([sys.executable, "-m", "issuetriage.cli.app", *argv], env=env,
                              capture_output=True, text=True, timeout=120)
        assert proc.returncode == 0, proc.stderr
