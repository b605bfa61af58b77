"""Credentials and API endpoints from the environment, the way GitHub Actions and GHES set them.

A token (`GITHUB_TOKEN`, then `GH_TOKEN`, then the GitHub CLI's `gh auth token`) or a GitHub App (`GITHUB_APP_ID` with
`GITHUB_APP_PRIVATE_KEY` or `GITHUB_APP_PRIVATE_KEY_PATH`, optional
`GITHUB_APP_INSTALLATION_ID`). githubkit mints installation tokens and refreshes them a
minute before they expire. Secrets never leave this module unredacted.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from issuetriage.errors import ConfigError

DEFAULT_API_URL = "https://api.github.com"
REDACTED = "***"


@dataclass(frozen=True)
class Endpoints:
    """Where the REST and GraphQL APIs live (github.com or a GitHub Enterprise Server)."""

    rest: str = DEFAULT_API_URL
    graphql: str = f"{DEFAULT_API_URL}/graphql"


@dataclass(frozen=True)
class Credentials:
    """A token or an App key; `repr` never shows either."""

    token: str | None = field(default=None, repr=False)
    app_id: str | None = None
    private_key: str | None = field(default=None, repr=False)
    installation_id: int | None = None

    @property
    def is_app(self) -> bool:
        return self.app_id is not None

    @property
    def secrets(self) -> tuple[str, ...]:
        """Every secret value, so messages can be scrubbed of them."""
        return tuple(s for s in (self.token, self.private_key) if s)


def endpoints_from_env(env: Mapping[str, str]) -> Endpoints:
    """`GITHUB_API_URL` / `GITHUB_GRAPHQL_URL`; GraphQL defaults next to REST (GHES: /api/graphql)."""
    rest = (env.get("GITHUB_API_URL") or DEFAULT_API_URL).rstrip("/")
    graphql = env.get("GITHUB_GRAPHQL_URL")
    if not graphql:
        graphql = re.sub(r"/api/v3$", "/api/graphql", rest) if rest.endswith("/api/v3") else f"{rest}/graphql"
    return Endpoints(rest=rest, graphql=graphql)


def credentials_from_env(env: Mapping[str, str]) -> Credentials:
    """Pick App credentials when an app id is set, else a token; ConfigError when neither is."""
    app_id = env.get("GITHUB_APP_ID", "").strip()
    if app_id:
        key = env.get("GITHUB_APP_PRIVATE_KEY", "")
        key_path = env.get("GITHUB_APP_PRIVATE_KEY_PATH", "")
        if not key and key_path:
            try:
                key = Path(key_path).read_text(encoding="utf-8")
            except OSError as exc:
                raise ConfigError(f"GITHUB_APP_PRIVATE_KEY_PATH: cannot read: {exc.strerror}") from None
        if not key:
            raise ConfigError("GITHUB_APP_ID is set but neither GITHUB_APP_PRIVATE_KEY nor "
                              "GITHUB_APP_PRIVATE_KEY_PATH is")
        installation = env.get("GITHUB_APP_INSTALLATION_ID", "").strip()
        if installation and not installation.isdigit():
            raise ConfigError("GITHUB_APP_INSTALLATION_ID must be a number")
        return Credentials(app_id=app_id, private_key=key,
                           installation_id=int(installation) if installation else None)
    token = (env.get("GITHUB_TOKEN") or env.get("GH_TOKEN") or gh_auth_token(env) or "").strip()
    if not token:
        raise ConfigError("no GitHub credentials: set GITHUB_TOKEN (or GH_TOKEN), log in with "
                          "`gh auth login`, or set a GitHub App (GITHUB_APP_ID and GITHUB_APP_PRIVATE_KEY)")
    return Credentials(token=token)


def gh_auth_token(env: Mapping[str, str]) -> str | None:
    """The token the GitHub CLI is logged in with (`gh auth token`), or None without gh or a login."""
    gh = shutil.which("gh", path=env.get("PATH", ""))  # only the given environment's PATH
    if gh is None:
        return None
    host = re.sub(r"^https?://(api\.)?|/api/v3$|/.*$", "", endpoints_from_env(env).rest) or "github.com"
    try:
        done = subprocess.run([gh, "auth", "token", "--hostname", host], capture_output=True,
                              text=True, timeout=10, env={**env, "GH_PROMPT_DISABLED": "1"})
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout.strip() or None if done.returncode == 0 else None


def redact(text: str, secrets: tuple[str, ...]) -> str:
    """`text` with every secret (and anything shaped like a GitHub token) replaced by ***."""
    for secret in secrets:
        if secret:
            text = text.replace(secret, REDACTED)
    return re.sub(r"\b(gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,})\b", REDACTED, text)
