"""Recognise issue writes in Claude Code tool calls: GitHub MCP tools and `gh` commands.

`parse` turns a tool call into a `Mutation` (or None for reads and unrelated tools);
`rewrite` turns a guarded mutation back into the same tool's input.
"""

from __future__ import annotations

import argparse
import re
import shlex
from dataclasses import dataclass, replace
from typing import Any

MCP_UPDATE = {"mcp__github__update_issue", "mcp__github__issue_write"}
MCP_COMMENT = {"mcp__github__add_issue_comment"}
MCP_UPDATE_FIELDS = {"owner", "repo", "issue_number", "method", "labels", "state", "state_reason", "body"}
GH_WORD = re.compile(r"(?<![\w.-])gh(?![\w.-])")
GH_WRITES = {"edit", "comment", "close", "transfer", "create", "delete", "lock", "pin", "reopen"}


class Refused(Exception):
    """A tool call we will not let through whatever the guard says (with the reason)."""


@dataclass(frozen=True)
class Mutation:
    """What a tool call would change on one issue. `labels_set`: the tool replaces the set."""

    repo: str
    number: int
    labels: tuple[str, ...] = ()
    labels_set: bool = False
    comment: str | None = None
    close: bool = False
    state_reason: str | None = None
    body: str | None = None
    transfer_repo: str | None = None


def parse(tool_name: str, tool_input: dict[str, Any], default_repo: str) -> Mutation | None:
    """The mutation a tool call makes, None when it makes none; Refused for writes we never allow."""
    if not isinstance(tool_input, dict):
        if tool_name in MCP_UPDATE or tool_name in MCP_COMMENT or tool_name == "Bash":
            raise Refused("tool_input must be a JSON object")
        return None
    if tool_name in MCP_UPDATE or tool_name in MCP_COMMENT:
        return _mcp(tool_name, tool_input)
    if tool_name == "Bash":
        return _gh(str(tool_input.get("command", "")), default_repo)
    return None


def _mcp(tool: str, data: dict[str, Any]) -> Mutation:
    if tool == "mcp__github__issue_write" and data.get("method") != "update":
        raise Refused("issue_write may only update the triage target")
    owner, repo, number = data.get("owner"), data.get("repo"), data.get("issue_number")
    digits = str(number)
    if not isinstance(owner, str) or not isinstance(repo, str) or not (digits.isascii() and digits.isdigit()):
        raise Refused("tool_input needs owner, repo and a numeric issue_number")
    labels = data.get("labels") or []
    if not isinstance(labels, list) or not all(isinstance(label, str) for label in labels):
        raise Refused("labels must be a list of label names")
    base = Mutation(f"{owner}/{repo}", int(number))
    if tool in MCP_COMMENT:
        return replace(base, comment=str(data.get("body", "")))
    if "title" in data or data.get("state") == "open":
        raise Refused("the bot never changes titles or reopens issues")
    unchecked = sorted(set(data) - MCP_UPDATE_FIELDS)
    if unchecked:  # assignees, milestone, type...: passed through unguarded otherwise
        raise Refused(f"the bot only adds labels, comments, closes and transfers (not {', '.join(unchecked)})")
    return replace(base, labels=tuple(labels), labels_set="labels" in data,
                   close=data.get("state") == "closed", state_reason=data.get("state_reason"),
                   body=data.get("body"))


def _gh_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(add_help=False, exit_on_error=False)
    p.add_argument("number")
    p.add_argument("target", nargs="?")
    p.add_argument("-R", "--repo")
    p.add_argument("--add-label", action="append", default=[])
    p.add_argument("--remove-label", action="append", default=[])
    p.add_argument("-b", "--body")
    p.add_argument("-c", "--comment")
    p.add_argument("-r", "--reason")
    p.add_argument("-t", "--title")
    return p


def _shell_syntax(command: str) -> bool:
    """Whether the shell would do more than run one command with literal words: operators or
    newlines outside quotes, `$` or backticks outside single quotes."""
    quote = ""
    escaped = False
    for char in command:
        if escaped:
            escaped = False
        elif char == "\\" and quote != "'":
            escaped = True
        elif quote:
            if char == quote:
                quote = ""
            elif quote == '"' and char in "$`":
                return True
        elif char in "'\"":
            quote = char
        elif char in ";&|()<>\n$`":
            return True
    return False


def _subcommand(words: list[str]) -> tuple[list[str], list[str]]:
    """gh's two subcommand words, and its other arguments with any flags given before the verb
    (`gh -R X issue edit`, `gh issue --repo X edit`) moved after it."""
    path: list[str] = []
    early: list[str] = []
    i = 1
    while i < len(words) and len(path) < 2:
        word = words[i]
        if word in {"-R", "--repo"} and i + 1 < len(words):
            early += words[i:i + 2]
            i += 2
            continue
        (early if word.startswith("-") else path).append(word)
        i += 1
    return path, words[i:] + early


def _gh(command: str, default_repo: str) -> Mutation | None:
    try:
        words = shlex.split(command)
    except ValueError:
        raise Refused("cannot parse the shell command") from None
    if not words or words[0] != "gh" or _shell_syntax(command):
        if GH_WORD.search(command):  # gh behind a prefix, operator or substitution: we cannot see its target
            raise Refused("run one plain gh command per call (no shell operators, substitutions or prefixes)")
        return None
    path, args_after = _subcommand(words)
    if len(path) < 2:
        return None
    if path[0] == "api" and any(w in {"-X", "--method", "-f", "-F", "--field", "--raw-field", "--input"}
                                for w in words):
        raise Refused("gh api writes are not allowed; use gh issue")
    if path[0] == "label" and path[1] != "list":
        raise Refused("the bot never creates, edits or deletes repository labels")
    if path[0] != "issue" or path[1] not in GH_WRITES:
        return None
    verb = path[1]
    if verb not in {"edit", "comment", "close", "transfer"}:
        raise Refused(f"gh issue {verb} is not a triage action")
    try:
        args, rest = _gh_parser().parse_known_args(args_after)
    except argparse.ArgumentError as exc:
        raise Refused(f"cannot parse gh issue {verb}: {exc}") from None
    if rest or args.remove_label or args.title:
        raise Refused("the bot only adds labels, comments, closes and transfers")
    if args.target is not None and verb != "transfer":
        raise Refused("one issue per call")  # gh issue edit takes several issues at once
    repo, number = _issue_arg(args.number, args.repo or default_repo)
    base = Mutation(repo, number)
    labels = tuple(x.strip() for group in args.add_label for x in group.split(",") if x.strip())
    if verb == "edit":
        return replace(base, labels=labels, body=args.body)
    if verb == "comment":
        return replace(base, comment=args.body)
    if verb == "close":
        reason = {"not planned": "not_planned", "completed": "completed"}.get((args.reason or "").lower())
        return replace(base, close=True, state_reason=reason or "not_planned", comment=args.comment)
    return replace(base, transfer_repo=args.target)


def _issue_arg(arg: str, repo: str) -> tuple[str, int]:
    """The issue gh writes to: a number in `repo`, or a github.com URL (whose repo gh uses)."""
    if arg.isascii() and arg.isdigit():
        return repo, int(arg)
    url = re.fullmatch(r"https://github\.com/([\w.-]+/[\w.-]+)/issues/(\d+)", arg)
    if url is None:
        raise Refused("gh issue needs an issue number or a github.com issue URL")
    return url.group(1), int(url.group(2))


def rewrite(tool_name: str, tool_input: dict[str, Any], m: Mutation, existing: tuple[str, ...]) -> dict[str, Any]:
    """The tool input that makes exactly the guarded mutation `m` (label sets keep `existing`)."""
    if tool_name != "Bash":
        out = {k: v for k, v in tool_input.items() if k not in {"labels", "state", "state_reason", "body"}}
        if tool_name in MCP_COMMENT:
            out["body"] = m.comment
            return out
        if tool_input.get("labels") is not None:
            out["labels"] = sorted(set(existing) | set(m.labels))
        if m.close:
            out["state"], out["state_reason"] = "closed", m.state_reason
        if m.body is not None:
            out["body"] = m.body
        return out
    words = ["gh", "issue"]
    if m.transfer_repo:
        words += ["transfer", str(m.number), m.transfer_repo]
    elif m.close:
        words += ["close", str(m.number), "--reason", "not planned" if m.state_reason != "completed" else "completed"]
        words += ["--comment", m.comment] if m.comment else []
    elif m.comment is not None and not m.labels:
        words += ["comment", str(m.number), "--body", m.comment]
    else:
        words += ["edit", str(m.number)] + [a for label in m.labels for a in ("--add-label", label)]
        words += ["--body", m.body] if m.body is not None else []
    return {**tool_input, "command": shlex.join(words + ["--repo", m.repo])}
