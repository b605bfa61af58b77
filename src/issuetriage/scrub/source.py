"""Where the issue comes from: a JSON file (offline), or OWNER/REPO#N through the GitHub adapter."""

from __future__ import annotations

import json
import re
from pathlib import Path

from pydantic import ValidationError

from issuetriage.errors import UserError
from issuetriage.models import Issue

_REF = re.compile(r"^([\w.-]+/[\w.-]+)#(\d+)$")


def load_issue(spec: str) -> Issue:
    """A file path, or OWNER/REPO#N (needs `issuetriage.github`)."""
    path = Path(spec)
    if path.is_file():
        return issue_from_file(path)
    match = _REF.match(spec)
    if match:
        return fetch_issue(match.group(1), int(match.group(2)))
    raise UserError(f"{spec!r} is neither a JSON file nor OWNER/REPO#N")


def ref_of(spec: str) -> tuple[str, int] | None:
    """(OWNER/REPO, N) when `spec` names a live issue rather than an existing file."""
    match = _REF.match(spec)
    return (match.group(1), int(match.group(2))) if match and not Path(spec).is_file() else None


def issue_from_file(path: Path) -> Issue:
    """GitHub issue JSON, optionally {"issue": {...}, "comments": [...]}, with comments inline."""
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError) as exc:
        raise UserError(f"cannot read issue file {path}: {exc}") from exc
    if isinstance(data, dict) and isinstance(data.get("issue"), dict):
        data = {**data["issue"], "comments": data.get("comments", [])}
    try:
        return Issue.model_validate(data)
    except ValidationError as exc:
        raise UserError(f"{path} is not an issue: {exc.errors()[0]['msg']}") from exc


def fetch_issue(repo: str, number: int) -> Issue:
    """Fetch through the GitHub adapter (credentials from the environment)."""
    try:
        from issuetriage.github.client import GitHubClient
        from issuetriage.github.reads import fetch_issue as fetch
    except ImportError as exc:
        raise UserError("fetching OWNER/REPO#N needs the GitHub adapter (issuetriage.github), "
                        "which is not available; save the issue as JSON and pass the file") from exc
    client = GitHubClient.from_env(repo=repo)
    try:
        return fetch(client, repo, number)
    finally:
        client.close()
