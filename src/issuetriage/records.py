"""The one reader of issue records: our JSONL data files, GitHub's REST JSON and `gh` JSON.

Accepted shapes, each as one object, a JSON array of them, or JSON Lines:
* our records (`repo`, `number`, `title`, `body`, `labels` as names, `comments`);
* the REST API's issue object (`user`, `html_url`/`repository_url`, label objects), optionally
  wrapped as `{"issue": {...}, "comments": [...]}` with the comments endpoint's answer;
* `gh issue view N --json number,title,body,author,labels,comments,state,url` (and `gh issue
  list --json ...`, an array): `author.login`, upper-case `state`, camelCase comment keys.
The repository comes from the record, its URL, or the caller's `repo`.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from issuetriage.errors import UserError, first_problem
from issuetriage.models import Issue

STDIN = "-"


def _login(value: Any) -> Any:
    """`gh` writes people as `{"login": ...}` objects; we keep the login."""
    return value.get("login", "") if isinstance(value, dict) else value


def normalize_record(data: dict[str, Any]) -> dict[str, Any]:
    """gh CLI JSON (camelCase keys, author objects, OPEN/CLOSED) and a REST issue wrapped with
    its comments, in our record's terms (other keys pass through)."""
    if isinstance(data.get("issue"), dict):  # a REST issue with its comments beside it
        data = {**data["issue"], "comments": data.get("comments", [])}
    data = dict(data)
    if "author" in data:
        data["author"] = _login(data["author"])
    for camel, snake in (("authorAssociation", "author_association"), ("createdAt", "created_at"),
                         ("isPullRequest", "is_pull_request")):
        if camel in data and snake not in data:
            data[snake] = data.pop(camel)
    if isinstance(data.get("state"), str):
        data["state"] = data["state"].lower()
    if isinstance(data.get("comments"), list):
        data["comments"] = [normalize_record(c) if isinstance(c, dict) else c for c in data["comments"]]
    return data


def _repo_from_url(data: dict[str, Any]) -> str | None:
    """OWNER/NAME from an issue's web or REST URL, or None."""
    url = str(data.get("html_url") or data.get("url") or "")
    if "github.com/" not in url or "/issues/" not in url:
        return None
    host, tail = url.split("github.com/", 1)
    parts = tail.split("/")
    if host.endswith("api."):  # the REST URL: api.github.com/repos/OWNER/NAME/issues/N
        parts = parts[1:]
    return "/".join(parts[:2])


def issue_from_record(data: Any, where: str, repo: str | None = None) -> Issue:
    """Validate one decoded record of any accepted shape; errors name `where` and the key."""
    if not isinstance(data, dict):
        raise UserError(f"{where}: expected a JSON object, got {type(data).__name__}")
    data = normalize_record(data)
    if "repo" not in data:
        found = _repo_from_url(data) or repo
        if found:
            data["repo"] = found
    try:
        return Issue.model_validate(data)
    except ValidationError as exc:
        raise UserError(f"{where}: {first_problem(exc, 'record')}") from None


def parse_issue_record(line: str, where: str, repo: str | None = None) -> Issue:
    """One line of JSON → Issue."""
    try:
        data = json.loads(line)
    except json.JSONDecodeError as exc:
        raise UserError(f"{where}: malformed JSON ({exc.msg})") from None
    return issue_from_record(data, where, repo)


def _read_text(source: str | Path) -> str:
    if str(source) == STDIN:
        try:
            return sys.stdin.buffer.read().decode("utf-8")
        except UnicodeDecodeError as exc:
            raise UserError(f"stdin: cannot read ({exc})") from None
    path = Path(source)
    if not path.is_file():
        raise UserError(f"{path}: no such file")
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise UserError(f"{path}: cannot read ({exc.__class__.__name__}: {exc})") from None


def read_issues(source: str | Path, repo: str | None = None, *, lines: bool | None = None,
                unique: bool = False) -> list[Issue]:
    """Every issue in a file (or `-` for stdin), all validated before any is returned.

    `lines` None: a `.jsonl` file is JSON Lines, any other file one JSON document (an object or
    an array), and stdin whichever of the two it parses as. Errors name the line or the item.
    `unique`: refuse an issue given twice and text SQLite cannot hold (for the store).
    """
    name = "stdin" if str(source) == STDIN else str(source)
    text = _read_text(source)
    if lines is None:
        lines = str(source).endswith(".jsonl")
    if not lines:
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            if str(source) != STDIN:
                raise UserError(f"{name}: malformed JSON ({exc.msg} at line {exc.lineno})") from None
            lines = True
        else:
            if not isinstance(data, list):
                return _checked([(name, "", data)], repo, unique)
            return _checked([(f"{name}[{i}]", f"item {i}", item) for i, item in enumerate(data)],
                            repo, unique)
    records = []
    for lineno, line in enumerate(text.splitlines(), 1):
        if line.strip():
            try:
                records.append((f"{name}:{lineno}", f"line {lineno}", json.loads(line)))
            except json.JSONDecodeError as exc:
                raise UserError(f"{name}:{lineno}: malformed JSON ({exc.msg})") from None
    return _checked(records, repo, unique)


def read_issues_jsonl(path: str | Path, repo: str | None = None) -> list[Issue]:
    """Issue records to store, from a JSONL file (or stdin, in any accepted shape); a bad line
    or an issue given twice is a UserError naming the line."""
    return read_issues(path, repo, lines=None if str(path) == STDIN else True, unique=True)


def _checked(records: list[tuple[str, str, Any]], repo: str | None, unique: bool) -> list[Issue]:
    """Issues from decoded records; with `unique`, refuses text SQLite cannot hold and an issue
    given twice."""
    issues: list[Issue] = []
    seen: dict[tuple[str, int], str] = {}
    for where, position, data in records:
        issue = issue_from_record(data, where, repo)
        if not unique:
            issues.append(issue)
            continue
        problem = _unstorable(issue)
        if problem:
            raise UserError(f"{where}: {problem}")
        first = seen.setdefault((issue.repo, issue.number), position)
        if first != position:  # which record is meant is ambiguous: refuse rather than guess
            raise UserError(f"{where}: {issue.ref} already at {first}")
        issues.append(issue)
    return issues


def _unstorable(issue: Issue) -> str | None:
    """Why SQLite cannot hold `issue` (text with a lone surrogate), or None. Numbers are bounded
    by the Issue model itself."""
    for key, value in issue.model_dump().items():
        try:
            json.dumps(value, default=str, ensure_ascii=False).encode("utf-8")
        except UnicodeEncodeError:
            return f"{key}: not valid Unicode (a lone surrogate escape)"
    return None
