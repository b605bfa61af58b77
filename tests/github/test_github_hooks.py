"""Claude Code hooks: exact protocol JSON for allowed, rewritten and blocked calls."""

from __future__ import annotations

import json
import subprocess
import sys
from functools import partial
from pathlib import Path

import pytest
from ghtest import REPO, seed
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from builders import make_issue
from issuetriage.agents.hooks import HookReply, run
from issuetriage.models import Issue

ENV = {"GITHUB_REPOSITORY": REPO, "TRIAGE_ISSUE_NUMBER": "103"}
MARKER_ONLY = {"hookEventName": "PreToolUse", "permissionDecision": "allow"}


issue = partial(make_issue, repo=REPO, number=103, title="sorting order differs", body="equal keys move")


def pre(tool: str, tool_input: dict, env=ENV, current: Issue | None = None, policy=None) -> HookReply:
    event = {"session_id": "s1", "hook_event_name": "PreToolUse", "tool_name": tool, "tool_input": tool_input}
    return run("pre-tool-use", json.dumps(event), env, policy, read_issue=lambda r, n: current or issue())


def mcp_update(**fields) -> dict:
    return {"owner": "pytorch", "repo": "pytorch", "issue_number": 103, **fields}


def test_allowed_call_passes_unchanged(policy):
    reply = pre("Bash", {"command": "gh issue edit 103 --add-label 'module: docs' --repo pytorch/pytorch"},
                policy=policy)
    assert reply.exit_code == 0 and reply.stderr == ""
    assert json.loads(reply.stdout) == {"hookSpecificOutput": {
        **MARKER_ONLY, "permissionDecisionReason": "issuetriage guard: allowed"}}


def test_label_set_is_rewritten_to_keep_existing_labels_and_drop_forbidden_ones(policy):
    current = issue(labels=("module: sorting and selection",))
    reply = pre("mcp__github__update_issue", mcp_update(labels=["module: docs", "ciflow/trunk"]),
                current=current, policy=policy)
    assert reply.exit_code == 0
    out = json.loads(reply.stdout)
    assert out == {"hookSpecificOutput": {
        **MARKER_ONLY,
        "permissionDecisionReason": "issuetriage guard: ciflow/trunk: forbidden prefix 'ciflow/'",
        "updatedInput": mcp_update(labels=["module: docs", "module: sorting and selection", "triage review"]),
    }}


def test_template_comment_gets_its_marker(policy):
    text = policy.templates["request_more_info"].comment
    reply = pre("mcp__github__add_issue_comment", mcp_update(body=text), policy=policy)
    out = json.loads(reply.stdout)["hookSpecificOutput"]
    assert out["permissionDecision"] == "allow"
    assert out["updatedInput"] == mcp_update(body=policy.render_template("request_more_info"))


@pytest.mark.parametrize("tool,tool_input,reason", [
    ("mcp__github__update_issue", {"owner": "pytorch", "repo": "pytorch", "issue_number": 7, "labels": ["module: docs"]},
     "target pytorch/pytorch#7 is not the triage target pytorch/pytorch#103"),
    ("mcp__github__add_issue_comment", mcp_update(body="I think this is fixed, try nightly"),
     "comment: the bot posts only the profile's templates"),
    ("mcp__github__issue_write", {"method": "create", "owner": "pytorch", "repo": "pytorch", "title": "x"},
     "issue_write may only update the triage target"),
    ("Bash", {"command": "gh label delete bug --repo pytorch/pytorch"},
     "the bot never creates, edits or deletes repository labels"),
    ("Bash", {"command": "gh api -X PATCH repos/pytorch/pytorch/issues/103 -f state=closed"},
     "gh api writes are not allowed; use gh issue"),
    ("Bash", {"command": "gh issue edit 103 --remove-label triaged"},
     "the bot only adds labels, comments, closes and transfers"),
])
def test_blocked_calls_exit_2_with_the_reason_on_stderr(policy, tool, tool_input, reason):
    reply = pre(tool, tool_input, policy=policy)
    assert reply == HookReply(2, "", f"issuetriage blocked this call: {reason}\n")


def test_a_close_goes_only_with_its_comment(policy):
    """A corroborated usage question closes with the forum comment: the update tool cannot post
    it, so it is blocked there, and the gh command is rewritten to carry it."""
    question = issue(title="How do I save a model?", body="How can I save and load my model? Is there a way?")
    mcp = pre("mcp__github__update_issue", mcp_update(state="closed"), current=question, policy=policy)
    assert mcp.exit_code == 2 and "cannot post" in mcp.stderr and "gh issue close 103 --comment" in mcp.stderr
    gh = pre("Bash", {"command": "gh issue close 103"}, current=question, policy=policy)
    command = json.loads(gh.stdout)["hookSpecificOutput"]["updatedInput"]["command"]
    assert gh.exit_code == 0 and "--comment" in command and "discuss.pytorch.org" in command


def test_duplicate_template_is_blocked(policy):
    posted = issue(comments=({"author": "bot", "body": policy.render_template("request_more_info"), "by_bot": True},))
    text = policy.templates["request_more_info"].comment
    reply = pre("mcp__github__add_issue_comment", mcp_update(body=text), current=posted, policy=policy)
    assert reply.exit_code == 2 and "nothing left to do" in reply.stderr


def test_missing_target_env_blocks_writes_but_ignores_other_tools(policy):
    reply = pre("mcp__github__update_issue", mcp_update(labels=["module: docs"]), env={}, policy=policy)
    assert reply.exit_code == 2 and "GITHUB_REPOSITORY" in reply.stderr
    assert pre("Read", {"file_path": "/tmp/x"}, env={}, policy=policy) == HookReply()
    assert pre("Bash", {"command": "ls -la"}, env={}, policy=policy) == HookReply()
    gh_write = pre("Bash", {"command": "gh issue comment 103 --body hi"}, env={}, policy=policy)
    assert gh_write.exit_code == 2


def test_reads_get_no_opinion(policy):
    assert pre("mcp__github__issue_read", mcp_update(), policy=policy) == HookReply()
    assert pre("Bash", {"command": "gh issue view 103 --json labels"}, policy=policy) == HookReply()


def test_hook_fails_closed_when_github_cannot_be_read(policy):
    def broken(repo, number):
        raise ConnectionError("no route")
    event = {"tool_name": "mcp__github__update_issue", "tool_input": mcp_update(labels=["module: docs"])}
    reply = run("pre-tool-use", json.dumps(event), ENV, policy, read_issue=broken)
    assert reply.exit_code == 2 and "ConnectionError" in reply.stderr


def test_invalid_json_blocks(policy):
    assert run("pre-tool-use", "{not json", ENV, policy).exit_code == 2


def test_post_tool_use_marks_bot_triaged_and_logs(policy, tmp_path):
    added = []
    log = tmp_path / "hooks.log"
    env = {**ENV, "TRIAGE_HOOK_DEBUG_LOG": str(log)}
    event = {"tool_name": "mcp__github__update_issue", "tool_input": mcp_update(labels=["module: docs"]),
             "tool_response": {"content": "ok"}}
    reply = run("post-tool-use", json.dumps(event), env, policy,
                add_label=lambda r, n, label: added.append((r, n, label)))
    assert added == [(REPO, 103, "bot-triaged")]
    assert json.loads(reply.stdout) == {"hookSpecificOutput": {
        "hookEventName": "PostToolUse", "additionalContext": "issuetriage added 'bot-triaged' to pytorch/pytorch#103"}}
    assert "[PostToolUse]" in log.read_text()


def test_post_tool_use_skips_failed_calls(policy):
    event = {"tool_name": "mcp__github__update_issue", "tool_input": mcp_update(labels=["x"]),
             "tool_response": {"isError": True}}
    reply = run("post-tool-use", json.dumps(event), ENV, policy, add_label=lambda *a: pytest.fail("labelled"))
    assert reply == HookReply()


def test_cli_hook_end_to_end_against_the_standin(standin, tmp_path):
    """The real command: reads the issue from the stand-in, prints the protocol JSON."""
    seed(standin, 103)
    env = {**standin.env(), **ENV, "TRIAGE_HOOK_DEBUG_LOG": str(tmp_path / "log"),
           "PYTHONPATH": str(Path(__file__).resolve().parents[2] / "src"), "PATH": "/usr/bin:/bin"}
    event = {"tool_name": "mcp__github__update_issue", "tool_input": mcp_update(labels=["module: docs"])}
    proc = subprocess.run([sys.executable, "-m", "issuetriage.cli.app", "hook", "pre-tool-use"], input=json.dumps(event),
                          capture_output=True, text=True, env=env, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["hookSpecificOutput"]["permissionDecision"] == "allow"
    assert standin.writes == []
    wrong = {"tool_name": "mcp__github__add_issue_comment",
             "tool_input": {"owner": "pytorch", "repo": "pytorch", "issue_number": 9, "body": "hi"}}
    blocked = subprocess.run([sys.executable, "-m", "issuetriage.cli.app", "hook", "pre-tool-use"],
                             input=json.dumps(wrong), capture_output=True, text=True, env=env, timeout=120)
    assert blocked.returncode == 2 and blocked.stdout == ""
    assert blocked.stderr.startswith("issuetriage blocked this call: target pytorch/pytorch#9")
    assert standin.token not in (tmp_path / "log").read_text()


@pytest.mark.parametrize("command,reason", [
    ("gh issue edit https://github.com/evil/other/issues/103 --add-label 'module: docs'",
     "target evil/other#103 is not the triage target pytorch/pytorch#103"),
    ("gh issue edit https://ghe.example.com/pytorch/pytorch/issues/103 --add-label 'module: docs'",
     "gh issue needs an issue number or a github.com issue URL"),
    ("gh issue edit 103 7 --add-label 'module: docs'", "one issue per call"),
    ("gh issue comment 103 7 --body hi", "one issue per call"),
])
def test_gh_issue_argument_naming_another_issue_is_blocked(policy, command, reason):
    reply = pre("Bash", {"command": command}, policy=policy)
    assert reply == HookReply(2, "", f"issuetriage blocked this call: {reason}\n")


def test_gh_issue_url_of_the_target_is_allowed(policy):
    command = "gh issue edit https://github.com/pytorch/pytorch/issues/103 --add-label 'module: docs'"
    reply = pre("Bash", {"command": command}, policy=policy)
    assert reply.exit_code == 0 and json.loads(reply.stdout)["hookSpecificOutput"]["permissionDecision"] == "allow"


@pytest.mark.parametrize("command", [
    "echo hi; gh issue edit 7 --add-label 'module: docs'",
    "echo hi\ngh issue edit 7 --add-label 'module: docs'",
    "GH_REPO=evil/other gh issue edit 103 --add-label 'module: docs'",
    "/usr/bin/gh issue edit 7 --add-label 'module: docs'",
    "env gh issue edit 7 --add-label 'module: docs'",
    "bash -c 'gh issue edit 7 --add-label bug'",
    "gh issue close 103 --reason \"$(gh issue edit 7 --add-label bug)\"",
    "gh issue close 103 --reason `gh issue edit 7 --add-label bug`",
])
def test_gh_hidden_behind_shell_syntax_is_blocked_not_ignored(policy, command):
    reply = pre("Bash", {"command": command}, policy=policy)
    assert reply.exit_code == 2 and reply.stdout == ""


@pytest.mark.parametrize("command", ["gh -R evil/other issue edit 103 --add-label 'module: docs'",
                                     "gh issue --repo evil/other edit 103 --add-label 'module: docs'"])
def test_gh_repo_flag_before_the_verb_is_checked(policy, command):
    reply = pre("Bash", {"command": command}, policy=policy)
    assert reply == HookReply(2, "", "issuetriage blocked this call: target evil/other#103 is not the "
                                     "triage target pytorch/pytorch#103\n")


@pytest.mark.parametrize("command", ["ls -la", "git log --oneline | head", "gh issue view 103 --json labels",
                                     "gh issue view 103 --json body --jq '.body | length'",
                                     "gh issue -R pytorch/pytorch view 103"])
def test_commands_that_write_nothing_still_get_no_opinion(policy, command):
    assert pre("Bash", {"command": command}, policy=policy) == HookReply()


@pytest.mark.parametrize("event", [
    {"tool_name": "Bash", "tool_input": "gh issue edit 103 --add-label bug"},
    {"tool_name": "mcp__github__update_issue", "tool_input": ["pytorch", "pytorch", 103]},
    {"tool_name": "mcp__github__update_issue", "tool_input": mcp_update(issue_number="²", labels=["bug"])},
])
def test_post_tool_use_ignores_malformed_tool_input_instead_of_crashing(policy, event):
    reply = run("post-tool-use", json.dumps(event), ENV, policy, add_label=lambda *a: pytest.fail("labelled"))
    assert reply == HookReply()


def test_mcp_labels_must_be_a_list_of_strings(policy):
    reply = pre("mcp__github__update_issue", mcp_update(labels="module: docs"), policy=policy)
    assert reply == HookReply(2, "", "issuetriage blocked this call: labels must be a list of label names\n")


def test_post_tool_use_with_a_malformed_target_number_marks_nothing(policy):
    event = {"tool_name": "mcp__github__update_issue", "tool_input": mcp_update(labels=["module: docs"])}
    reply = run("post-tool-use", json.dumps(event), {**ENV, "TRIAGE_ISSUE_NUMBER": "²"}, policy,
                add_label=lambda *a: pytest.fail("labelled"))
    assert reply == HookReply()


def test_stdin_that_is_not_utf8_blocks_instead_of_crashing():
    """A crash exits 1, which Claude Code treats as a non-blocking error and runs the call anyway."""
    env = {**ENV, "PYTHONIOENCODING": "utf-8:strict", "PATH": "/usr/bin:/bin",
           "PYTHONPATH": str(Path(__file__).resolve().parents[2] / "src")}
    event = b'{"tool_name": "Bash", "tool_input": {"command": "gh issue edit 103 --add-label \xff"}}'
    proc = subprocess.run([sys.executable, "-m", "issuetriage.cli.app", "hook", "pre-tool-use"], input=event,
                          capture_output=True, env=env, timeout=120)
    assert proc.returncode == 2 and proc.stdout == b""
    assert proc.stderr.decode().startswith("issuetriage hook: stdin is not UTF-8")


@pytest.mark.parametrize("tool,extra", [
    ("mcp__github__update_issue", {"assignees": ["someone"]}),
    ("mcp__github__update_issue", {"milestone": 3}),
    ("mcp__github__issue_write", {"method": "update", "type": "Bug"}),
])
def test_mcp_fields_the_guard_cannot_check_are_blocked(policy, tool, extra):
    reply = pre(tool, mcp_update(labels=["module: docs"], **extra), policy=policy)
    assert reply == HookReply(2, "", "issuetriage blocked this call: the bot only adds labels, comments, "
                                     f"closes and transfers (not {', '.join(k for k in extra if k != 'method')})\n")


@pytest.mark.parametrize("args,flags,positional", [
    (["103", "--repo=a/b"], [("repo", "a/b")], ["103"]),
    (["103", "-Ra/b"], [("repo", "a/b")], ["103"]),
    (["103", "-R=a/b"], [("repo", "a/b")], ["103"]),
    (["103", "--body", "--repo"], [("body", "--repo")], ["103"]),  # a value is the next word, whatever it is
    (["--", "103", "--repo", "x"], [], ["103", "--repo", "x"]),
    (["103", "-R", "a/b", "--repo", "c/d"], [("repo", "a/b"), ("repo", "c/d")], ["103"]),
])
def test_gh_flags_are_read_as_pflag_reads_them(args, flags, positional):
    from issuetriage.agents.gh_commands import GH_ISSUE_FLAGS, pflag

    assert pflag(args, GH_ISSUE_FLAGS["comment"], "gh issue comment") == (flags, positional)


@pytest.mark.parametrize("args", [["103", "--rep", "a/b"], ["103", "-x"], ["103", "--body"]])
def test_gh_flags_gh_would_reject_are_refused(args):
    from issuetriage.agents.gh_commands import GH_ISSUE_FLAGS, Refused, pflag

    with pytest.raises(Refused):
        pflag(args, GH_ISSUE_FLAGS["comment"], "gh issue comment")


TOKENS = ["gh", "issue", "edit", "103", "7", "--repo", "-R", "evil/x", "pytorch/pytorch", "api", "-X",
          "POST", "-f", "a=b", "|", ";", "&&", "$(", ")", "`", "'", '"', "\\", "sh", "-c", "xargs",
          "curl", "https://api.github.com/x", "-d", "python", "import os", "<<EOF\n", "\nEOF", "#", "*", "{a,b}"]


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(st.lists(st.sampled_from(TOKENS), max_size=12).map(" ".join))
def test_any_command_line_gets_a_protocol_answer_never_a_crash(policy, command):
    """Exit 0 or 2 with the protocol's output, whatever the line: never an exception (exit 1)."""
    reply = pre("Bash", {"command": command}, policy=policy)
    assert reply.exit_code in (0, 2)
    if reply.exit_code == 2:
        assert reply.stdout == "" and reply.stderr.count("\n") == 1
    elif reply.stdout:
        assert json.loads(reply.stdout)["hookSpecificOutput"]["permissionDecision"] == "allow"


@pytest.mark.parametrize("value,seconds", [(None, 20.0), ("5", 5.0), ("0.5", 0.5), ("1000", 45.0),
                                           ("0", 20.0), ("-3", 20.0), ("soon", 20.0)])
def test_the_hook_deadline_comes_from_the_environment_within_bounds(value, seconds):
    from issuetriage.agents.hooks import deadline

    assert deadline({} if value is None else {"ISSUETRIAGE_HOOK_DEADLINE": value}) == seconds


@pytest.mark.parametrize("profile, why", [(None, "no profile names this repository"),
                                          ("pytorch", "is for pytorch/pytorch, not this repository")])
def test_a_write_to_a_repository_without_its_own_profile_is_blocked(profile, why, tmp_path, monkeypatch):
    """No policy handed in: the hook finds the target repository's profile as every command does,
    and never judges another repository's issue by PyTorch's profile."""
    monkeypatch.chdir(tmp_path)  # a checkout without .github/issuetriage/
    env = {"GITHUB_REPOSITORY": "acme/widgets", "TRIAGE_ISSUE_NUMBER": "103",
           **({"ISSUETRIAGE_PROFILE": profile} if profile else {})}
    current = make_issue(repo="acme/widgets", number=103, title="sorting order differs", body="equal keys move")
    reply = pre("Bash", {"command": "gh issue edit 103 --add-label 'module: docs' --repo acme/widgets"},
                env=env, current=current)
    assert reply.exit_code == 2 and why in reply.stderr
    assert reply.stdout == ""
