"""Where the issue comes from: a JSON file (offline), or OWNER/REPO#N through the GitHub adapter."""

from __future__ import annotations

import re
from pathlib import Path

from issuetriage.errors import UserError
from issuetriage.models import Issue
from issuetriage.records import STDIN, read_issues

_REF = re.compile(r"^([\w.-]+/[\w.-]+)#(\d+)$")


def load_issue(spec: str) -> Issue:
    """A file path or `-` (stdin) in any shape `issuetriage.records` reads, or OWNER/REPO#N
    (needs `issuetriage.github`)."""
    if spec == STDIN or Path(spec).is_file():
        issues = read_issues(spec)
        if len(issues) != 1:
            raise UserError(f"{spec}: holds {len(issues)} issues; scrub reads one")
        return issues[0]
    match = _REF.match(spec)
    if match:
        return fetch_issue(match.group(1), int(match.group(2)))
    raise UserError(f"{spec!r} is neither a JSON file nor OWNER/REPO#N")


def ref_of(spec: str) -> tuple[str, int] | None:
    """(OWNER/REPO, N) when `spec` names a live issue rather than an existing file."""
    match = _REF.match(spec)
    return (match.group(1), int(match.group(2))) if match and not Path(spec).is_file() else None


def fetch_issue(repo: str, number: int) -> Issue:
    """Fetch through the GitHub adapter (credentials from the environment)."""
    try:
        from issuetriage.github.client import GitHubClient  # lazy: the GitHub adapter only for a live issue
        from issuetriage.github.reads import fetch_issue as fetch  # lazy: the GitHub adapter only for a live issue
    except ImportError as exc:
        raise UserError("fetching OWNER/REPO#N needs the GitHub adapter (issuetriage.github), "
                        "which is not available; save the issue as JSON and pass the file") from exc
    client = GitHubClient.from_env(repo=repo)
    try:
        return fetch(client, repo, number)
    finally:
        client.close()
