"""Recognise issue writes in Claude Code tool calls: GitHub MCP tools and `gh` commands.

`parse` turns a tool call into a `Mutation` (or None for reads and unrelated tools);
`rewrite` turns a guarded mutation back into the same tool's input.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass, replace
from typing import Any

from issuetriage.agents.shell import Unsafe, reaches_github, simple_commands

MCP_UPDATE = {"mcp__github__update_issue", "mcp__github__issue_write"}
MCP_COMMENT = {"mcp__github__add_issue_comment"}
MCP_UPDATE_FIELDS = {"owner", "repo", "issue_number", "method", "labels", "state", "state_reason", "body"}
MCP_PREFIX = "mcp__github__"
MCP_READ = re.compile(r"(get|list|search)_\w+|\w+_read")  # the GitHub MCP server's read tools


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
        if tool_name.startswith(MCP_PREFIX) or tool_name == "Bash":
            raise Refused("tool_input must be a JSON object")
        return None
    if tool_name in MCP_UPDATE or tool_name in MCP_COMMENT:
        return _mcp(tool_name, tool_input)
    if tool_name == "Bash":
        return _gh(str(tool_input.get("command", "")), default_repo)
    if tool_name.startswith(MCP_PREFIX) and not MCP_READ.fullmatch(tool_name[len(MCP_PREFIX):]):
        raise Refused(f"{tool_name} may write to GitHub and is not a tool the hook can check")
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
    base = Mutation(f"{owner}/{repo}", int(digits))
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
        elif char in ";&|()<>\n$`#":
            return True
    return False


# gh's flags per command (https://cli.github.com/manual/), as pflag reads them: name → takes a value.
# ALLOWED: the ones a triage write may use; any other known flag is refused, unknown ones too.
_REPO = {"-R": ("repo", True), "--repo": ("repo", True), "-h": ("help", False), "--help": ("help", False)}
GH_ISSUE_FLAGS: dict[str, dict[str, tuple[str, bool]]] = {
    "edit": {**_REPO, "--add-label": ("add-label", True), "--remove-label": ("remove-label", True),
             "-b": ("body", True), "--body": ("body", True), "-F": ("body-file", True),
             "--body-file": ("body-file", True), "-t": ("title", True), "--title": ("title", True),
             "--add-assignee": ("assignee", True), "--remove-assignee": ("assignee", True),
             "--add-project": ("project", True), "--remove-project": ("project", True),
             "-m": ("milestone", True), "--milestone": ("milestone", True),
             "--remove-milestone": ("milestone", False)},
    "comment": {**_REPO, "-b": ("body", True), "--body": ("body", True), "-F": ("body-file", True),
                "--body-file": ("body-file", True), "-e": ("editor", False), "--editor": ("editor", False),
                "-w": ("web", False), "--web": ("web", False), "--edit-last": ("edit-last", False),
                "--delete-last": ("delete-last", False), "--create-if-none": ("edit-last", False),
                "--yes": ("yes", False)},
    "close": {**_REPO, "-c": ("comment", True), "--comment": ("comment", True),
              "-r": ("reason", True), "--reason": ("reason", True), "--duplicate-of": ("duplicate-of", True)},
    "transfer": dict(_REPO),
}
ALLOWED = {"edit": {"repo", "help", "add-label", "body"}, "comment": {"repo", "help", "body"},
           "close": {"repo", "help", "comment", "reason"}, "transfer": {"repo", "help"}}
GH_API_FLAGS = {"-X": ("method", True), "--method": ("method", True), "-F": ("field", True),
                "--field": ("field", True), "-f": ("field", True), "--raw-field": ("field", True),
                "--input": ("input", True), "-H": ("header", True), "--header": ("header", True),
                "-p": ("preview", True), "--preview": ("preview", True), "-i": ("include", False),
                "--include": ("include", False), "--paginate": ("paginate", False),
                "--slurp": ("slurp", False), "--silent": ("silent", False), "--verbose": ("verbose", False),
                "-t": ("template", True), "--template": ("template", True), "-q": ("jq", True),
                "--jq": ("jq", True), "--hostname": ("hostname", True), "--cache": ("cache", True),
                "-h": ("help", False), "--help": ("help", False)}
# Commands that only read. Anything else gh can run (aliases and extensions included) is refused.
GH_READS: dict[str, frozenset[str] | None] = {
    "issue": frozenset({"view", "list", "ls", "status"}), "pr": frozenset({"view", "list", "ls", "diff",
                                                                          "checks", "status"}),
    "search": None, "repo": frozenset({"view", "list"}), "label": frozenset({"list"}),
    "release": frozenset({"list", "view", "download"}), "run": frozenset({"list", "view", "watch", "download"}),
    "gist": frozenset({"list", "view"}), "cache": frozenset({"list"}),
    "workflow": frozenset({"list", "view"}), "alias": frozenset({"list"}), "auth": frozenset({"status"}),
    "status": None, "help": None, "version": None, "--version": None, "--help": None, "-h": None,
}
WRITE_VERBS = frozenset(GH_ISSUE_FLAGS)
COMPUTED = "\0computed"  # stands for a word the shell computes at run time


def pflag(args: list[str], spec: dict[str, tuple[str, bool]], what: str) -> tuple[list[tuple[str, str]], list[str]]:
    """Flags and positional arguments as spf13/pflag (gh's flag parser) reads them: `--f=v`,
    `--f v` (the next word whatever it is), `-fv`, `-f=v`, `-f v`, clustered booleans, `--`."""
    flags: list[tuple[str, str]] = []
    positional: list[str] = []
    i = 0
    while i < len(args):
        word = args[i]
        i += 1
        if word == "--":
            positional += args[i:]
            break
        if word.startswith("--"):
            name, eq, value = word.partition("=")
            if name not in spec:
                raise Refused(f"{what}: unknown flag {name}")
            key, takes = spec[name]
            if takes and not eq:
                if i >= len(args):
                    raise Refused(f"{what}: {name} needs a value")
                value, i = args[i], i + 1
            elif not takes and eq:
                raise Refused(f"{what}: {name} takes no value")
            flags.append((key, value))
        elif word.startswith("-") and word != "-":
            j = 1
            while j < len(word):
                short = "-" + word[j]
                if short not in spec:
                    raise Refused(f"{what}: unknown flag {short}")
                key, takes = spec[short]
                if not takes:
                    flags.append((key, ""))
                    j += 1
                    continue
                value = word[j + 1:]
                value = value[1:] if value.startswith("=") else value
                if not value:
                    if i >= len(args):
                        raise Refused(f"{what}: {short} needs a value")
                    value, i = args[i], i + 1
                flags.append((key, value))
                break
        else:
            positional.append(word)
    return flags, positional


def _path(words: list[str]) -> tuple[list[str], list[str]]:
    """gh's command path (`issue edit`) and its other arguments in their original order, finding
    the path as cobra does: `-R X` / `--repo X` may come before the verb."""
    path: list[str] = []
    rest: list[str] = []
    i = 1
    while i < len(words):
        word = words[i]
        if len(path) >= 2 or (path and GH_READS.get(path[0], frozenset()) is None) or path == ["api"]:
            rest += words[i:]
            break
        if word in {"-R", "--repo"}:
            rest += words[i:i + 2]
            i += 2
            continue
        if word.startswith(("-R", "--repo=")):
            rest.append(word)
        elif word.startswith("-") and word not in GH_READS:
            raise Refused(f"gh: flag {word} before the command is not one the hook can check")
        else:
            path.append(word)
        i += 1
    return path, rest


def classify_gh(words: tuple[str | None, ...], default_repo: str) -> Mutation | None:
    """A gh command line: None for a read, the Mutation of a triage write, Refused otherwise."""
    path, rest = _path([COMPUTED if w is None else w for w in words])
    if COMPUTED in path:
        raise Refused("gh: the command is computed at run time")
    group = path[0] if path else "help"
    if group == "api":
        _api(rest)  # refuses a write; a read falls through to None
        return None
    if group == "alias" and path[1:2] != ["list"]:
        raise Refused("gh aliases hide the command they run")
    if group == "label" and path[1:2] != ["list"]:
        raise Refused("the bot never creates, edits or deletes repository labels")
    reads = GH_READS.get(group, frozenset())
    if group in GH_READS and (reads is None or (len(path) > 1 and path[1] in reads)):
        return None
    if group != "issue" or len(path) < 2 or path[1] not in WRITE_VERBS:
        raise Refused(f"gh {' '.join(path)}: not a command the hook can check "
                      f"(writes go through gh issue edit, comment, close or transfer)")
    if COMPUTED in rest:
        raise Refused("gh issue: arguments computed at run time")
    return _issue_write(path[1], rest, default_repo)


def _api(args: list[str]) -> None:
    """`gh api` reads are allowed: GET (explicit, or implied by no fields and no --input)."""
    if COMPUTED in args:
        raise Refused("gh api: arguments computed at run time")
    flags, positional = pflag(args, GH_API_FLAGS, "gh api")
    if any(key == "help" for key, _ in flags):
        return None
    methods = [value for key, value in flags if key == "method"]
    implied = "POST" if any(key in {"field", "input"} for key, _ in flags) else "GET"
    method = methods[-1] if methods else implied
    if method.upper() != "GET" or positional[:1] == ["graphql"] or len(positional) != 1:
        raise Refused("gh api writes are not allowed; use gh issue")
    for key, value in flags:
        if key == "header" and value.split(":", 1)[0].strip().lower() not in {
                "accept", "x-github-api-version", "if-none-match", "if-modified-since"}:
            raise Refused(f"gh api header {value.split(':', 1)[0]!r} is not allowed")
    return None


def _issue_write(verb: str, args: list[str], default_repo: str) -> Mutation | None:
    flags, positional = pflag(args, GH_ISSUE_FLAGS[verb], f"gh issue {verb}")
    keys = {key for key, _ in flags}
    if "help" in keys:
        return None
    if keys - ALLOWED[verb]:
        raise Refused("the bot only adds labels, comments, closes and transfers")
    last = {key: value for key, value in flags}  # pflag: the last value of a flag wins
    wanted = 2 if verb == "transfer" else 1
    if len(positional) != wanted:
        raise Refused("one issue per call" if len(positional) > wanted else f"gh issue {verb} needs an issue")
    repo = last.get("repo", default_repo)
    if not re.fullmatch(r"[\w.-]+/[\w.-]+", repo or ""):
        raise Refused("gh --repo must be OWNER/NAME")
    repo, number = _issue_arg(positional[0], repo)
    base = Mutation(repo, number)
    if verb == "edit":
        labels = []
        for value in (v for k, v in flags if k == "add-label"):
            if '"' in value:
                raise Refused("label names with quotes are not allowed")
            labels += [x.strip() for x in value.split(",") if x.strip()]
        return replace(base, labels=tuple(labels), body=last.get("body"))
    if verb == "comment":
        return replace(base, comment=last.get("body", ""))
    if verb == "close":
        reason = {"not planned": "not_planned", "completed": "completed", "": "not_planned"}.get(
            last.get("reason", "").lower())
        if reason is None:
            raise Refused("gh issue close --reason must be 'completed' or 'not planned'")
        return replace(base, close=True, state_reason=reason, comment=last.get("comment"))
    return replace(base, transfer_repo=positional[1])


def _issue_arg(arg: str, repo: str) -> tuple[str, int]:
    """The issue gh writes to: a number (or #number) in `repo`, or an issue URL, whose repo gh
    uses whatever --repo says (gh's issueMetadataFromURL)."""
    digits = arg[1:] if arg.startswith("#") else arg
    if digits.isascii() and digits.isdigit():
        return repo, int(digits)
    url = re.fullmatch(r"https?://(?:www\.)?github\.com/([\w.-]+/[\w.-]+)/(?:issues|pull)/(\d+)([/?#].*)?",
                       arg, flags=re.IGNORECASE)
    if url is None or not url.group(2).isascii():
        raise Refused("gh issue needs an issue number or a github.com issue URL")
    return url.group(1), int(url.group(2))


def _gh(command: str, default_repo: str) -> Mutation | None:
    """The triage write a Bash command makes (None: it writes nothing we know of to GitHub)."""
    try:
        commands = simple_commands(command)
        gh = reaches_github(commands)
    except Unsafe as exc:
        raise Refused(str(exc)) from None
    writes = [m for m in (classify_gh(c.words, default_repo) for c in gh) if m is not None]
    if not writes:
        return None
    if len(commands) != 1 or _shell_syntax(command) or gh[0].assigns:
        raise Refused("run one plain gh command per call (no shell operators, substitutions or prefixes)")
    return writes[0]


def rewrite(tool_name: str, tool_input: dict[str, Any], m: Mutation, existing: tuple[str, ...]) -> dict[str, Any]:
    """The tool input that makes exactly the guarded mutation `m` (label sets keep `existing`)."""
    if tool_name != "Bash":
        out = {k: v for k, v in tool_input.items() if k not in {"labels", "state", "state_reason", "body"}}
        if tool_name in MCP_COMMENT:
            out["body"] = m.comment
            return out
        if tool_input.get("labels") is not None or m.labels:  # the tool replaces the set
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
