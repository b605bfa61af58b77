"""Claude Code hooks: our guard and target check in front of an agent's GitHub tool calls.

`issuetriage hook pre-tool-use` reads the hook event (JSON on stdin with `tool_name` and
`tool_input`) and answers with Claude Code's protocol: exit 0 and nothing for a call it can prove
only reads (a Bash line of read-only commands, a known MCP read) and for Claude Code's other
tools; exit 0 with `hookSpecificOutput.permissionDecision = "allow"` (and `updatedInput` when the
guard trimmed the call) for writes to the target issue the guard accepts; exit 2 with the reason
on stderr for everything else, and when it cannot answer within its deadline. `post-tool-use`
adds `bot-triaged` after a write went through.
https://docs.claude.com/en/docs/claude-code/hooks
"""

from __future__ import annotations

import json
import os
import signal
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from issuetriage.agents import gh_commands, mcp_tools
from issuetriage.agents.gh_commands import Mutation, Refused

if TYPE_CHECKING:  # imported when a call must be checked: a hook with nothing to do stays fast
    from issuetriage.engine.decided import Decided
    from issuetriage.judges.base import Judge
    from issuetriage.models import Issue, Plan
    from issuetriage.policy import Policy

ReadIssue = Callable[[str, int], "Issue"]
AddLabel = Callable[[str, int, str], None]
AGENT = "agent:hook"
# Claude Code runs the call when a hook is still busy after 60 s (its default timeout): the hook
# blocks first. ISSUETRIAGE_HOOK_DEADLINE may lower it, or raise it up to MAX_DEADLINE.
DEADLINE, MAX_DEADLINE = 20.0, 45.0


@dataclass(frozen=True)
class HookReply:
    """What the hook process prints and how it exits."""

    exit_code: int = 0
    stdout: str = ""
    stderr: str = ""


def target(env: Mapping[str, str]) -> tuple[str, int]:
    """The one issue this run may write to, from the trusted workflow's environment."""
    repo, number = env.get("GITHUB_REPOSITORY", ""), env.get("TRIAGE_ISSUE_NUMBER", "")
    if repo.count("/") != 1 or not all(repo.split("/")):
        raise Refused("GITHUB_REPOSITORY must be OWNER/NAME")
    if not (number.isascii() and number.isdigit()) or int(number) <= 0:
        raise Refused("TRIAGE_ISSUE_NUMBER must be a positive integer")
    return repo, int(number)


def log(env: Mapping[str, str], event: str, message: str) -> None:
    """Append one line to TRIAGE_HOOK_DEBUG_LOG when it is set; secrets scrubbed."""
    path = env.get("TRIAGE_HOOK_DEBUG_LOG")
    if not path:
        return
    from issuetriage.github.auth import redact  # lazy: only with a debug log (it loads subprocess and more)

    secrets = tuple(env[k] for k in ("GITHUB_TOKEN", "GH_TOKEN", "GITHUB_APP_PRIVATE_KEY") if env.get(k))
    line = f"[{datetime.now(UTC).isoformat()}] [{event}] {redact(message, secrets)}\n"
    try:
        with open(path, "a", encoding="utf-8") as handle:
            handle.write(line)
    except OSError:
        pass


def parse(tool: str, tool_input: Any, default_repo: str) -> Mutation | None:
    """The issue write a tool call makes, None when it provably makes none; Refused otherwise."""
    if mcp_tools.split(tool) is not None:
        return mcp_tools.parse(tool, tool_input)
    if tool != "Bash":
        return None  # Claude Code's other tools: the hook's matcher decides whether it sees them
    if not isinstance(tool_input, dict):
        raise Refused("tool_input must be a JSON object")
    return gh_commands.bash(str(tool_input.get("command", "")), default_repo)


def rewrite(tool: str, tool_input: dict[str, Any], m: Mutation, existing: tuple[str, ...]) -> dict[str, Any]:
    """The tool input that makes exactly the guarded mutation `m`."""
    if tool == "Bash":
        return {**tool_input, "command": gh_commands.command_line(m)}
    return mcp_tools.rewrite(tool, tool_input, m, existing)


def _template_of(text: str, policy: Policy) -> str | None:
    for name, template in policy.templates.items():
        if policy.template_marker(name) in text or " ".join(template.comment.split()) in " ".join(text.split()):
            return name
    return None


def proposal(m: Mutation, issue: Issue, policy: Policy, offline: Judge) -> tuple[Plan, list[str]]:
    """The plan this tool call amounts to (the agents' one proposal rule), and what was refused
    before the guard sees it."""
    from issuetriage.agents.proposal import Ask, build  # lazy: hook start-up: only a call that writes

    refused: list[str] = []
    templates: tuple[str, ...] = ()
    if m.comment is not None:
        name = _template_of(m.comment, policy)
        if name is None:
            refused.append("comment: the bot posts only the profile's templates")
        else:
            templates = (name,)
    added = tuple(label for label in m.labels if label not in issue.labels)
    ask = Ask(None, added, templates, close=m.close, body_edit=m.body, transfer_repo=m.transfer_repo)
    plan, rejected = build(ask, issue, policy, offline, AGENT)
    return plan, refused + [f"{r.item}: {r.reason}" for r in rejected]


def pre_tool_use(event: dict[str, Any], env: Mapping[str, str], policy: Policy | Callable[[], Policy],
                 read_issue: ReadIssue, offline: Judge | None = None) -> HookReply:
    """Allow, rewrite or block one tool call, through the one flow (`act`, read-only: the agent
    sends the call itself). `policy` may be a loader, called only when the call writes."""
    tool, tool_input = str(event.get("tool_name", "")), event.get("tool_input") or {}
    try:
        m = parse(tool, tool_input, env.get("GITHUB_REPOSITORY", ""))
        if m is None:
            log(env, "PreToolUse", f"{tool}: not an issue write; no opinion")
            return HookReply()
        goal = target(env)
        if (m.repo, m.number) != goal:
            raise Refused(f"target {m.repo}#{m.number} is not the triage target {goal[0]}#{goal[1]}")
        from issuetriage.act.agent import check  # lazy: hook start-up: only a call that writes
        from issuetriage.engine.decided import Decided  # lazy: hook start-up: only a call that writes
        policy = policy() if callable(policy) else policy
        judge: Judge = offline or _Heuristic()  # type: ignore[assignment]  # a Judge, loaded lazily
        refused: list[str] = []

        def decided(issue: Issue, policy: Policy) -> Decided:
            plan, why = proposal(m, issue, policy, judge)
            refused.extend(why)
            return Decided(plan, None, AGENT)

        report = check(read_issue, m.repo, m.number, policy, decided)
        if report.plan is None:
            raise Refused(str(report.skipped))
        if report.held:
            raise Refused(f"profile {policy.name} is in shadow mode: the bot's writes are held for review")
        issue, kept = report.before, report.plan
        reasons = refused + [f"{r.item}: {r.reason}" for r in report.rejections]
    except Refused as exc:
        return _block(env, tool, str(exc))
    except Exception as exc:  # the hook must fail closed, whatever went wrong
        return _block(env, tool, f"hook could not check the call: {type(exc).__name__}: {exc}")
    if not kept.has_effect:
        return _block(env, tool, "; ".join(reasons) or "nothing left to do")
    marker = policy.bot.bot_triaged  # post-tool-use adds it after the write went through
    labels = tuple(label for label in kept.labels_added if label != marker or label in m.labels)
    guarded = replace(m, labels=labels, close=kept.close, body=kept.body_edit,
                      transfer_repo=kept.transfer_repo,
                      comment="\n\n".join(policy.render_template(t) for t in kept.templates) or None)
    if mcp_tools.is_comment(tool) and guarded.comment is None:  # what is left needs another tool
        return _block(env, tool, "; ".join(reasons) or "nothing left to do")
    if tool != "Bash" and not mcp_tools.is_comment(tool) and guarded.close and guarded.comment:
        # the update tool cannot post the comment a close must carry: never close without it
        return _block(env, tool, "a close needs its comment, which this tool cannot post: "
                                 f"run `gh issue close {m.number} --comment ...` instead")
    updated = rewrite(tool, tool_input, guarded, issue.labels)
    # a gh command always runs as we parsed it (quoted, explicit --repo); MCP input only if trimmed
    changed = (updated != tool_input if tool == "Bash"
               else _final(guarded, issue, set_semantics=False) != _final(m, issue, m.labels_set))
    reason = "issuetriage guard: " + ("; ".join(reasons) or "allowed")
    decision: dict[str, Any] = {"hookEventName": "PreToolUse", "permissionDecision": "allow",
                                "permissionDecisionReason": reason}
    if changed:
        decision["updatedInput"] = updated
    log(env, "PreToolUse", f"{tool}: allow{' (rewritten)' if changed else ''}: {reason}")
    return HookReply(0, json.dumps({"hookSpecificOutput": decision}))


def _final(m: Mutation, issue: Issue, set_semantics: bool) -> tuple[object, ...]:
    """What the issue would look like after `m`, for telling a rewrite from a pass-through."""
    labels = frozenset(m.labels) if set_semantics else frozenset(issue.labels) | frozenset(m.labels)
    return (labels, m.comment, m.close, m.body, m.transfer_repo)


class _Heuristic:
    """The offline judge, imported only when a close or transfer must be corroborated."""

    def judge(self, *args: Any) -> Any:
        from issuetriage.judges.heuristic import (
            HeuristicJudge,  # lazy: only when a close or transfer needs corroborating
        )

        return HeuristicJudge().judge(*args)


def _block(env: Mapping[str, str], tool: str, reason: str) -> HookReply:
    reason = " ".join(reason.split())  # one line, whatever the command held
    log(env, "PreToolUse", f"{tool}: block: {reason}")
    return HookReply(2, "", f"issuetriage blocked this call: {reason}\n")


def post_tool_use(event: dict[str, Any], env: Mapping[str, str], policy: Policy | Callable[[], Policy],
                  add_label: AddLabel) -> HookReply:
    """After a write on the target went through, add `bot-triaged` (the marker humans filter on)."""
    tool, tool_input = str(event.get("tool_name", "")), event.get("tool_input") or {}
    try:
        m = parse(tool, tool_input, env.get("GITHUB_REPOSITORY", ""))
        goal = target(env) if m is not None else None
    except Refused as exc:
        log(env, "PostToolUse", f"{tool}: ignored: {exc}")
        return HookReply()
    if m is None or (m.repo, m.number) != goal or _failed(event.get("tool_response")):
        log(env, "PostToolUse", f"{tool}: nothing to mark")
        return HookReply()
    policy = policy() if callable(policy) else policy
    try:
        add_label(m.repo, m.number, policy.bot.bot_triaged)
    except Exception as exc:
        log(env, "PostToolUse", f"{tool}: could not add {policy.bot.bot_triaged}: {exc}")
        return HookReply(0, json.dumps({"decision": "block", "reason": f"could not add "
                                        f"{policy.bot.bot_triaged}: {type(exc).__name__}"}))
    log(env, "PostToolUse", f"{tool}: added {policy.bot.bot_triaged} to {m.repo}#{m.number}")
    return HookReply(0, json.dumps({"hookSpecificOutput": {
        "hookEventName": "PostToolUse",
        "additionalContext": f"issuetriage added {policy.bot.bot_triaged!r} to {m.repo}#{m.number}"}}))


def _failed(response: Any) -> bool:
    if isinstance(response, dict):
        return bool(response.get("isError") or response.get("is_error") or response.get("error")
                    or (response.get("exit_code") not in (None, 0)))
    return False


def run(event_name: str, stdin: str | bytes, env: Mapping[str, str] | None = None,
        policy: Policy | None = None, read_issue: ReadIssue | None = None,
        add_label: AddLabel | None = None) -> HookReply:
    """Entry used by the CLI. Never raises and never exits 1 (Claude Code runs the call on a
    non-blocking error): whatever goes wrong answers exit 2 with one line."""
    env = os.environ if env is None else env
    seconds = deadline(env)
    try:
        with _deadline(seconds):
            return _run(event_name, stdin, env, policy, read_issue, add_label)
    except _Late:
        log(env, event_name, f"no answer within {seconds:g} s")
        return HookReply(2, "", f"issuetriage hook: could not check the call within {seconds:g} s; blocking\n")
    except BaseException as exc:  # RecursionError, MemoryError, a broken profile, a bug
        if isinstance(exc, (KeyboardInterrupt, SystemExit)):
            raise
        reason = " ".join(f"{type(exc).__name__}: {exc}".split())[:300]
        try:
            log(env, event_name, f"internal error: {reason}")
        except Exception:
            pass
        return HookReply(2, "", f"issuetriage hook: could not check the call ({reason})\n")


def deadline(env: Mapping[str, str]) -> float:
    """The hook's own deadline in seconds: ISSUETRIAGE_HOOK_DEADLINE, within (0, MAX_DEADLINE]."""
    try:
        seconds = float(env.get("ISSUETRIAGE_HOOK_DEADLINE", DEADLINE))
    except ValueError:
        return DEADLINE
    return min(seconds, MAX_DEADLINE) if seconds > 0 else DEADLINE


class _Late(BaseException):
    """The deadline passed (a BaseException, so no `except Exception` on the way swallows it)."""


@contextmanager
def _deadline(seconds: float) -> Iterator[None]:
    """Raise _Late in this thread after `seconds` of wall time: SIGALRM interrupts sleeps, socket
    reads and the regex engine alike. Outside the main thread (no signals there) it does nothing."""

    def expire(signum: int, frame: Any) -> None:
        raise _Late()

    try:
        previous = signal.signal(signal.SIGALRM, expire)
    except ValueError:  # not the main thread
        yield
        return
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def _run(event_name: str, stdin: str | bytes, env: Mapping[str, str], policy: Policy | None,
         read_issue: ReadIssue | None, add_label: AddLabel | None) -> HookReply:
    """Nothing heavy (policy, guard, GitHub client) is imported until the call turns out to write
    to an issue."""
    if isinstance(stdin, bytes):
        try:
            stdin = stdin.decode("utf-8")
        except UnicodeDecodeError as exc:
            log(env, event_name, f"bad hook input: {exc}")
            return HookReply(2, "", f"issuetriage hook: stdin is not UTF-8: {exc}\n")
    try:
        event = json.loads(stdin or "{}")
        if not isinstance(event, dict):
            raise ValueError("not an object")
    except (ValueError, RecursionError) as exc:  # RecursionError: nested too deeply to read
        log(env, event_name, f"bad hook input: {exc}")
        return HookReply(2, "", f"issuetriage hook: invalid JSON on stdin: {exc}\n")
    log(env, event_name, f"event: {json.dumps(event)[:2000]}")

    def load() -> Policy:
        from issuetriage.policy import load_profile  # lazy: hook start-up: only a call that writes
        from issuetriage.policy.discover import profile_for  # lazy: hook start-up: only a call that writes

        # the profile of the target's repository, found as every command finds it (fail closed)
        return policy or load_profile(profile_for(env.get("ISSUETRIAGE_PROFILE"), target(env)[0]))

    def client(repo: str) -> Any:
        from issuetriage.github.client import GitHubClient  # lazy: hook start-up: githubkit only to read or write

        return GitHubClient.from_env(env, repo)

    def fetch(repo: str, number: int) -> Issue:
        from issuetriage.github import reads  # lazy: hook start-up: githubkit only to read or write

        return reads.fetch_issue(client(repo), repo, number)

    def label(repo: str, number: int, name: str) -> None:
        from issuetriage.github import writes  # lazy: hook start-up: githubkit only to read or write

        writes.add_labels(client(repo), repo, number, (name,))

    if event_name == "pre-tool-use":
        return pre_tool_use(event, env, load, read_issue or fetch)
    return post_tool_use(event, env, load, add_label or label)
