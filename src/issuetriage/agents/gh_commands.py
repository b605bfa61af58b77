"""Recognise issue writes in `gh` command lines, and the GitHub reads that may run beside them.

`bash` turns a Bash command line into a `Mutation` (None for a line that only reads; Refused for
anything the hook cannot prove safe); `command_line` turns a guarded mutation back into the gh
command that makes exactly it. gh's flags are read as gh's parser (pflag) reads them.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass, replace

from issuetriage.agents.programs import check, jq_filter_ok, no_secrets, pflag
from issuetriage.agents.shell import Unsafe, commands

# One refusal for every reason: a call the hook cannot prove safe, or will not let through
# whatever the guard says (with the reason).
Refused = Unsafe


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
                "--jq": ("jq", True), "--cache": ("cache", True),
                "-h": ("help", False), "--help": ("help", False)}
# Commands that only read. Anything else gh can run (aliases and extensions included) is refused.
GH_READS: dict[str, frozenset[str] | None] = {
    "issue": frozenset({"view", "list", "ls", "status"}), "pr": frozenset({"view", "list", "ls", "diff",
                                                                          "checks", "status"}),
    "search": None, "repo": frozenset({"view", "list"}), "label": frozenset({"list"}),
    "release": frozenset({"list", "view"}), "run": frozenset({"list", "view", "watch"}),
    "gist": frozenset({"list", "view"}), "cache": frozenset({"list"}),
    "workflow": frozenset({"list", "view"}), "alias": frozenset({"list"}), "auth": frozenset({"status"}),
    "status": None, "help": None, "version": None, "--version": None, "--help": None, "-h": None,
}
WRITE_VERBS = frozenset(GH_ISSUE_FLAGS)


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


def classify_gh(words: tuple[str, ...], default_repo: str) -> Mutation | None:
    """A gh command line: None for a read, the Mutation of a triage write, Refused otherwise."""
    path, rest = _path(list(words))
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
        _read_flags(path, rest)
        return None
    if group != "issue" or len(path) < 2 or path[1] not in WRITE_VERBS:
        raise Refused(f"gh {' '.join(path)}: not a command the hook can check "
                      f"(writes go through gh issue edit, comment, close or transfer)")
    return _issue_write(path[1], rest, default_repo)


def _read_flags(path: list[str], args: list[str]) -> None:
    """A gh read stays a read: no `--web` (gh runs $BROWSER), no token shown (`auth status -t`),
    no jq filter or template reading the environment. Clustered short flags (`-cw`) are refused,
    as the hook does not hold every read command's flag table."""
    for i, word in enumerate(args):
        name = word.partition("=")[0]
        if name == "--web" or (word.startswith("-") and not word.startswith("--") and len(word) > 2):
            raise Refused(f"gh {' '.join(path)} {word}: opens a browser, or flags the hook cannot read one by one")
        if word == "-w" or (path == ["auth", "status"] and (word == "-t" or name == "--show-token")):
            raise Refused(f"gh {' '.join(path)} {word}: opens a browser or shows the token")
        if name in {"--jq", "--template"} or word in {"-q", "-t"}:
            jq_filter_ok(word.partition("=")[2] if "=" in word else (args[i + 1] if i + 1 < len(args) else ""))


def _api(args: list[str]) -> None:
    """`gh api` reads are allowed: GET (explicit, or implied by no fields and no --input)."""
    flags, positional = pflag(args, GH_API_FLAGS, "gh api")
    if any(key == "help" for key, _ in flags):
        return None
    methods = [value for key, value in flags if key == "method"]
    implied = "POST" if any(key in {"field", "input"} for key, _ in flags) else "GET"
    method = methods[-1] if methods else implied
    if method.upper() != "GET" or positional[:1] == ["graphql"] or len(positional) != 1:
        raise Refused("gh api writes are not allowed; use gh issue")
    if "://" in positional[0]:
        raise Refused("gh api: a path on the GitHub API, not a URL")
    for key, value in flags:
        if key in {"jq", "template"}:
            jq_filter_ok(value)
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
    if not _owner_name(repo):
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


def _owner_name(text: str) -> bool:
    owner, slash, name = text.partition("/")
    return bool(slash) and all(part and all(c.isascii() and (c.isalnum() or c in "._-") for c in part)
                               for part in (owner, name))


GITHUB_URLS = ("https://github.com/", "http://github.com/", "https://www.github.com/", "http://www.github.com/")


def _issue_arg(arg: str, repo: str) -> tuple[str, int]:
    """The issue gh writes to: a number (or #number) in `repo`, or an issue URL, whose repo gh
    uses whatever --repo says (gh's issueMetadataFromURL)."""
    digits = arg[1:] if arg.startswith("#") else arg
    if digits.isascii() and digits.isdigit():
        return repo, int(digits)
    prefix = next((p for p in GITHUB_URLS if arg.lower().startswith(p)), None)
    parts = arg[len(prefix):].split("/", 4) if prefix else []
    number = parts[3].split("?", 1)[0].split("#", 1)[0] if len(parts) > 3 else ""
    if len(parts) < 4 or not _owner_name(f"{parts[0]}/{parts[1]}") or parts[2] not in {"issues", "pull"} \
            or not (number.isascii() and number.isdigit()):
        raise Refused("gh issue needs an issue number or a github.com issue URL")
    return f"{parts[0]}/{parts[1]}", int(number)


def bash(command: str, default_repo: str) -> Mutation | None:
    """The triage write a Bash command makes, None for a line of read-only commands, Refused for
    anything else: a line the hook cannot read in full, a program or argument not on the
    read-only list, a gh write that is not the line's only command."""
    found = commands(command)
    for cmd in found:
        no_secrets(cmd.words + cmd.inputs) if cmd.name == "gh" else check(cmd)
    writes = [m for m in (classify_gh(c.words, default_repo) for c in found if c.name == "gh") if m is not None]
    if writes and len(found) != 1:
        raise Refused("run one plain gh command per call (no pipes, lists or other commands around a write)")
    return writes[0] if writes else None


def command_line(m: Mutation) -> str:
    """The gh command that makes exactly `m`, quoted, with its repository spelled out."""
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
    return shlex.join(words + ["--repo", m.repo])
