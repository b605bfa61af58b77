"""A small exception hierarchy; the CLI turns each into a one-line message and an exit code."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pydantic import ValidationError


class TriageError(Exception):
    """Base class: anything issuetriage reports to a user as a clean one-line error."""

    exit_code = 2


class UserError(TriageError):
    """Bad input from the user: malformed files, missing fields, unknown names."""


class ConfigError(TriageError):
    """A profile, model or configuration file that does not validate."""


class StoreError(TriageError):
    """The local SQLite store is missing, corrupt or from an unknown schema."""


class GitHubError(TriageError):
    """A GitHub API call failed; `status` is the HTTP status (0 for connection errors)."""

    def __init__(self, message: str, status: int = 0) -> None:
        super().__init__(message)
        self.status = status


class GitHubClientError(GitHubError):
    """A 4xx answer from GitHub: never retried."""


class GitHubServerError(GitHubError):
    """A 5xx answer or connection failure that survived its retries."""


class ReproError(TriageError):
    """The scrub flow could not pick, review or run a reproduction."""


class ModelError(TriageError):
    """A learned model that is missing, corrupt or made for another profile or version."""


class LLMError(TriageError):
    """An LLM provider failed or answered outside the schema after its retry."""


def first_problem(exc: ValidationError, top: str = "(top level)") -> str:
    """`key.path: what is wrong` for the first error pydantic found: one line for a user."""
    return all_problems(exc, top)[0]


def all_problems(exc: ValidationError, top: str = "(top level)") -> list[str]:
    """`key.path: what is wrong` for every error pydantic found, in its order."""
    out = []
    for error in exc.errors():
        key = ".".join(str(p) for p in error["loc"]) or top
        kind = {"extra_forbidden": "unknown key", "missing": "missing"}.get(error["type"], error["msg"])
        out.append(f"{key}: {kind}")
    return out
