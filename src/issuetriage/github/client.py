"""The one seam to GitHub: typed methods over githubkit, each one API call, retried by retry.py.

Callers see `Issue`, `Comment` and small dataclasses; JSON stays in this package.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from githubkit import AppAuthStrategy, AppInstallationAuthStrategy, GitHub, TokenAuthStrategy
from githubkit.exception import GitHubException, GraphQLFailed, RateLimitExceeded, RequestError, RequestFailed
from githubkit.graphql import GraphQLResponse

from issuetriage.errors import ConfigError, GitHubClientError, GitHubServerError, TriageError
from issuetriage.github.auth import (
    Credentials,
    Endpoints,
    credentials_from_env,
    endpoints_from_env,
    redact,
)
from issuetriage.github.retry import Clock, Failure, RetryPolicy, is_rate_limited, wait_for
from issuetriage.models import Comment, Issue

PER_PAGE = 100


@dataclass(frozen=True)
class RepoLabel:
    """A label as the repository defines it."""

    name: str
    color: str = "ededed"
    description: str = ""


@dataclass(frozen=True)
class Page:
    """One page of a list call: its items, and the ETag to send next time (None = unchanged)."""

    items: tuple[dict[str, Any], ...]
    etag: str | None
    not_modified: bool = False


def split_repo(repo: str) -> tuple[str, str]:
    owner, _, name = repo.partition("/")
    if not owner or not name or "/" in name:
        raise ConfigError(f"repository must be OWNER/NAME, got {repo!r}")
    return owner, name


def build_github(creds: Credentials, endpoints: Endpoints) -> GitHub[Any]:
    """A githubkit client with its own retries and caching off: we retry and cache ourselves."""
    auth: Any
    if creds.is_app and creds.installation_id is not None:
        auth = AppInstallationAuthStrategy(creds.app_id, creds.private_key or "", creds.installation_id)
    elif creds.is_app:
        auth = AppAuthStrategy(creds.app_id, creds.private_key or "")
    else:
        auth = TokenAuthStrategy(creds.token or "")
    return github_with(auth, endpoints)


def github_with(auth: Any, endpoints: Endpoints) -> GitHub[Any]:
    """A githubkit client for one auth strategy (a token, the App's JWT, an installation)."""
    return GitHub(auth, base_url=endpoints.rest + "/", http_cache=False, auto_retry=False,
                  user_agent="issuetriage", timeout=30.0)


@dataclass
class GitHubClient:
    """Every GitHub call issuetriage makes; `calls` lists them (method and path) as sent."""

    gh: GitHub[Any] = field(repr=False)
    endpoints: Endpoints
    secrets: tuple[str, ...] = field(default=(), repr=False)
    clock: Clock = field(default_factory=Clock)
    policy: RetryPolicy = field(default_factory=RetryPolicy)
    calls: list[tuple[str, str]] = field(default_factory=list, repr=False)
    _open: bool = field(default=False, repr=False)

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None, repo: str | None = None,
                 clock: Clock | None = None, policy: RetryPolicy | None = None) -> GitHubClient:
        """Credentials and endpoints from `env` (default: os.environ); Apps find their installation."""
        env = os.environ if env is None else env
        creds = credentials_from_env(env)
        endpoints = endpoints_from_env(env)
        client = cls(build_github(creds, endpoints), endpoints, creds.secrets,
                     clock or Clock(), policy or RetryPolicy())
        if creds.is_app and creds.installation_id is None:
            if repo is None:
                raise ConfigError("GITHUB_APP_INSTALLATION_ID is needed when no repository is given")
            owner, name = split_repo(repo)
            # https://docs.github.com/en/rest/apps/apps#get-a-repository-installation-for-the-authenticated-app
            found = client.call("GET", f"/repos/{repo}/installation",
                                 lambda: client.gh.rest.apps.get_repo_installation(owner, name))
            auth = client.gh.auth
            assert isinstance(auth, AppAuthStrategy)
            client.close()
            client.gh = client.gh.with_auth(auth.as_installation(int(found.json()["id"])))
        return client

    def connect(self) -> None:
        """Keep one HTTP connection pool for all calls (githubkit otherwise opens one per call)."""
        if not self._open:
            self.gh.__enter__()
            self._open = True

    def close(self) -> None:
        if self._open:
            self.gh.__exit__()
            self._open = False

    def call(self, method: str, path: str, send: Callable[[], Any]) -> Any:
        """Send one call, waiting out rate limits and retrying 5xx/connection errors, never 4xx."""
        self.connect()
        attempt = 0
        while True:
            attempt += 1
            self.calls.append((method, path))
            try:
                return send()
            except GraphQLFailed as exc:
                errors = exc.response.errors or []
                messages = "; ".join(e.message for e in errors)
                status = 404 if any(getattr(e, "type", None) == "NOT_FOUND" for e in errors) else 400
                raise GitHubClientError(self._clean(f"{method} {path}: {messages}"), status) from None
            except RateLimitExceeded as exc:  # GraphQL reports these with status 200
                status = exc.response.status_code if exc.response.status_code >= 400 else 429
                failure = Failure(status, dict(exc.response.headers), "rate limit")
            except RequestFailed as exc:
                failure = Failure(exc.response.status_code, dict(exc.response.headers),
                                  _message(exc.response.raw_response))
            except RequestError as exc:
                inner = exc.exc
                if isinstance(inner, TriageError):  # ours, raised inside an auth flow (a token mint)
                    raise inner from None
                if isinstance(inner, RequestFailed):  # raised inside the App auth flow
                    failure = Failure(inner.response.status_code, dict(inner.response.headers),
                                      _message(inner.response.raw_response))
                else:
                    failure = Failure(0, {}, type(inner).__name__)
            except GitHubException as exc:
                raise ConfigError(self._clean(f"GitHub authentication failed: {exc}")) from None
            wait = wait_for(failure, attempt, self.clock.now(), self.policy)
            if wait is None:
                raise self._error(method, path, failure, attempt)
            self.clock.sleep(wait)

    def _error(self, method: str, path: str, failure: Failure, attempts: int) -> Exception:
        what = f"HTTP {failure.status}" if failure.status else "no answer"
        detail = f": {failure.message}" if failure.message else ""
        text = self._clean(f"{method} {path}: {what}{detail} (after {attempts} attempt(s))")
        if 400 <= failure.status < 500 and not is_rate_limited(failure):
            return GitHubClientError(text, failure.status)
        return GitHubServerError(text, failure.status)

    def _clean(self, text: str) -> str:
        return redact(text, self.secrets)

    def graphql(self, query: str, variables: dict[str, Any]) -> dict[str, Any]:
        """One GraphQL call to `GITHUB_GRAPHQL_URL`."""
        def send() -> dict[str, Any]:
            resp = self.gh.request("POST", self.endpoints.graphql,
                                   json={"query": query, "variables": variables},
                                   response_model=GraphQLResponse)
            return self.gh.graphql.parse_graphql_response(resp)
        return self.call("POST", "/graphql", send)


def _message(response: Any) -> str:
    try:
        body = response.json()
    except ValueError:
        return ""
    return str(body.get("message", "")) if isinstance(body, dict) else ""


def to_issue(repo: str, data: dict[str, Any], comments: tuple[Comment, ...] = ()) -> Issue:
    """Our Issue from GitHub's issue JSON (plus comments read separately)."""
    payload = {**data, "comments": comments}
    if not isinstance(data.get("repository_url"), str):
        payload["repo"] = repo
    return Issue.model_validate(payload)


def to_comment(data: dict[str, Any], me: str | None = None) -> Comment:
    """A REST comment; `me` (the login the client acts as) marks the bot's own."""
    comment = Comment.model_validate(data)
    return comment.model_copy(update={"by_bot": True}) if me and comment.author == me else comment
