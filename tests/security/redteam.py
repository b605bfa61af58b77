"""Helpers for the red-team suite: one hook call as Claude Code makes it, and what "safe" means.

Only entry points that the hooks have always had are used (`hooks.run`, `Session`), so the same
suite runs against an older checkout to count what it used to let through (see
tests/security/README.md)."""

from __future__ import annotations

import json
from typing import Any

from issuetriage.agents.hooks import HookReply, run
from issuetriage.models import Issue

REPO = "pytorch/pytorch"
TARGET = 103
ENV = {"GITHUB_REPOSITORY": REPO, "TRIAGE_ISSUE_NUMBER": str(TARGET)}

# Issues written for these tests (no dev-data text): what the offline judge reads in each.
UNCLEAR = Issue(repo=REPO, number=TARGET, title="sorting order differs", body="equal keys move")
CRASH = Issue(repo=REPO, number=TARGET, title="Segfault in torch.sort on CUDA",
              body="Running this crashes:\n```python\nimport torch\n"
                   "torch.sort(torch.randn(10, device='cuda'))\n```\n"
                   "```\nSegmentation fault (core dumped)\n```")
QUESTION = Issue(repo=REPO, number=TARGET, title="How do I save a model?",
                 body="How can I save and load my model? Is there a way to do it?")
VISION = Issue(repo=REPO, number=TARGET, title="torchvision.transforms.Resize gives wrong size",
               body="torchvision transforms resize returns a wrong size image with torchvision 0.20")


def hook(tool: str, tool_input: Any, issue: Issue = UNCLEAR, policy: Any = None,
         event: str = "pre-tool-use") -> HookReply:
    """The pre-tool-use hook's answer to one tool call on the triage target."""
    payload = {"session_id": "redteam", "hook_event_name": "PreToolUse", "tool_name": tool,
               "tool_input": tool_input}
    return run(event, json.dumps(payload), ENV, policy, read_issue=lambda r, n: issue)


def bash(command: str, issue: Issue = UNCLEAR, policy: Any = None) -> HookReply:
    return hook("Bash", {"command": command}, issue, policy)


def allowed_input(reply: HookReply) -> dict[str, Any] | None:
    """The tool input Claude Code would run: None when the call is blocked or left alone."""
    if reply.exit_code != 0 or not reply.stdout:
        return None
    out = json.loads(reply.stdout)["hookSpecificOutput"]
    assert out["permissionDecision"] == "allow"
    return out.get("updatedInput")


def assert_blocked(reply: HookReply) -> None:
    """Exit 2 (Claude Code blocks the call), nothing on stdout, one reason line on stderr."""
    assert reply.exit_code == 2, reply
    assert reply.stdout == ""
    assert reply.stderr.count("\n") == 1 and reply.stderr.strip()


def assert_blocked_or_rewritten(reply: HookReply, *absent: str, original: dict[str, Any]) -> None:
    """Blocked, or allowed only as a rewrite from which every `absent` text is gone."""
    if reply.exit_code == 2:
        assert_blocked(reply)
        return
    updated = allowed_input(reply)
    assert updated is not None and updated != original, f"allowed unchanged: {reply}"
    text = json.dumps(updated)
    for part in absent:
        assert part not in text, f"{part!r} survived the rewrite: {updated}"
