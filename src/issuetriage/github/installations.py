"""GitHub App auth at scale: an installation token per installation, minted once and shared by
every job in the process, and every call spending from its installation's rate budget.

The App's own calls (minting tokens, finding a repository's installation, webhook deliveries) go
through a client signed with the App's JWT (githubkit's AppAuthStrategy). Each installation's
calls go through `InstallationAuth`, one httpx auth flow that waits out a low budget, puts the
cached token on the request, and records the budget GitHub reports on the answer.
https://docs.github.com/en/apps/creating-github-apps/authenticating-with-a-github-app/authenticating-as-a-github-app-installation
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Generator, Mapping
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any

import httpx
from githubkit import AppAuthStrategy
from githubkit.auth.base import BaseAuthStrategy

from issuetriage.errors import ConfigError, GitHubClientError, GitHubServerError
from issuetriage.github.auth import Credentials, Endpoints, credentials_from_env, endpoints_from_env
from issuetriage.github.client import GitHubClient, github_with, split_repo
from issuetriage.github.retry import Clock, RetryPolicy

REFRESH_EARLY = 300.0  # a token is replaced this many seconds before GitHub says it expires
LOW_BUDGET = 50  # calls left at which the next call waits for the window to reset


def resource_of(path: str) -> str:
    """The rate-limit resource a request spends from (GitHub keeps separate budgets)."""
    if path.endswith("/graphql"):
        return "graphql"
    return "search" if "/search/" in path else "core"


@dataclass
class Budget:
    """One installation's budget for one resource as GitHub last reported it, and what this
    process spent from it: calls made, and how often and how long calls waited for the reset."""

    installation: str
    resource: str
    calls: int = 0
    remaining: int | None = None
    reset: float = 0.0
    waits: int = 0
    waited: float = 0.0


class BudgetExhausted(GitHubServerError):
    """The installation's budget is low and resets only after `max_wait`: a queue puts the job
    back until `until` (releasing its worker and its issue lock) instead of holding them."""

    def __init__(self, installation: str, until: float) -> None:
        super().__init__(f"installation {installation}: rate budget low until {until:.0f}", 429)
        self.installation, self.until = installation, until


class RateBudgets:
    """Every installation's budgets, shared by all jobs in a process (thread-safe).

    A call whose budget is at or below `low` waits until the window resets instead of spending
    the last calls and failing (or, when that is more than `max_wait` seconds away, raises
    BudgetExhausted); secondary limits and `Retry-After` are retry.py's (the client).
    """

    def __init__(self, clock: Clock, low: int = LOW_BUDGET, max_wait: float | None = None) -> None:
        self.clock = clock
        self.low = low
        self.max_wait = max_wait
        self._lock = threading.Lock()
        self._budgets: dict[tuple[str, str], Budget] = {}

    def before(self, key: str, resource: str) -> None:
        """Count the call about to be sent; sleep first when the budget is low and not yet reset."""
        with self._lock:
            budget = self._budget(key, resource)
            budget.calls += 1
            now = self.clock.now()
            wait = 0.0
            if budget.remaining is not None and budget.remaining <= self.low and budget.reset > now:
                wait = budget.reset - now
                if self.max_wait is not None and wait > self.max_wait:
                    budget.calls -= 1  # not sent
                    raise BudgetExhausted(key, budget.reset)
                budget.waits += 1
                budget.waited += wait
            elif budget.remaining is not None:
                budget.remaining -= 1  # until the answer says, so concurrent jobs do not overshoot
        if wait:
            self.clock.sleep(wait)

    def record(self, key: str, resource: str, headers: Mapping[str, str]) -> None:
        """What the answer's `x-ratelimit-*` headers say is left and when it refills."""
        remaining, reset = headers.get("x-ratelimit-remaining"), headers.get("x-ratelimit-reset")
        if remaining is None or not remaining.isdigit():
            return
        with self._lock:
            budget = self._budget(key, headers.get("x-ratelimit-resource", resource))
            budget.remaining = int(remaining)
            if reset and reset.isdigit():
                budget.reset = float(reset)

    def _budget(self, key: str, resource: str) -> Budget:
        return self._budgets.setdefault((key, resource), Budget(key, resource))

    def rows(self) -> list[Budget]:
        """A copy of every budget, by installation and resource (what /metrics prints)."""
        with self._lock:
            return [replace(b) for _, b in sorted(self._budgets.items())]


class InstallationAuth(httpx.Auth):
    """The auth flow of one installation's calls: budget, token, and one retry with a fresh token
    when GitHub no longer takes the cached one (revoked early)."""

    def __init__(self, key: str, token: Callable[[], str], budgets: RateBudgets,
                 forget: Callable[[], None] | None = None) -> None:
        self.key, self.token, self.budgets, self.forget = key, token, budgets, forget

    def auth_flow(self, request: httpx.Request) -> Generator[httpx.Request, httpx.Response, None]:
        resource = resource_of(request.url.path)
        for attempt in (1, 2):
            self.budgets.before(self.key, resource)
            request.headers["Authorization"] = f"token {self.token()}"
            response = yield request
            self.budgets.record(self.key, resource, response.headers)
            if response.status_code != 401 or self.forget is None or attempt == 2:
                return
            self.forget()


@dataclass
class InstallationAuthStrategy(BaseAuthStrategy):
    """githubkit's seam for `InstallationAuth`."""

    key: str
    token: Callable[[], str]
    budgets: RateBudgets
    forget: Callable[[], None] | None = None

    def get_auth_flow(self, github: Any) -> httpx.Auth:
        return InstallationAuth(self.key, self.token, self.budgets, self.forget)


@dataclass(frozen=True)
class InstallationToken:
    token: str = field(repr=False)
    expires_at: float


class InstallationTokens:
    """Installation tokens, minted by the App and reused until `refresh_early` seconds before they
    expire; one lock per installation, so a slow mint for one does not hold up the others."""

    def __init__(self, app: GitHubClient, refresh_early: float = REFRESH_EARLY) -> None:
        self.app = app
        self.refresh_early = refresh_early
        self.minted = 0
        self._lock = threading.Lock()
        self._locks: dict[int, threading.Lock] = {}
        self._tokens: dict[int, InstallationToken] = {}

    def token(self, installation: int) -> str:
        with self._lock:
            lock = self._locks.setdefault(installation, threading.Lock())
        with lock:
            held = self._tokens.get(installation)
            if held is None or self.app.clock.now() >= held.expires_at - self.refresh_early:
                held = self._tokens[installation] = self._mint(installation)
            return held.token

    def forget(self, installation: int) -> None:
        with self._lock:
            self._tokens.pop(installation, None)

    def _mint(self, installation: int) -> InstallationToken:
        """https://docs.github.com/en/rest/apps/apps#create-an-installation-access-token-for-an-app"""
        path = f"/app/installations/{installation}/access_tokens"
        data = self.app.call("POST", path, lambda: self.app.gh.request("POST", path)).json()
        self.minted += 1
        try:
            expires = datetime.fromisoformat(str(data["expires_at"]).replace("Z", "+00:00")).timestamp()
            return InstallationToken(str(data["token"]), expires)
        except (KeyError, ValueError, TypeError):
            raise GitHubClientError(f"POST {path}: no token in GitHub's answer", 502) from None


class GitHubApp:
    """The App: its JWT client, the shared tokens and budgets, and which installation each
    repository is on (cached; `forget_repo` when GitHub says it moved)."""

    def __init__(self, app: GitHubClient, budgets: RateBudgets | None = None,
                 refresh_early: float = REFRESH_EARLY) -> None:
        self.app = app
        self.tokens = InstallationTokens(app, refresh_early)
        self.budgets = budgets or RateBudgets(app.clock)
        self._lock = threading.Lock()
        self._installations: dict[str, int | None] = {}

    @classmethod
    def from_env(cls, env: Mapping[str, str], clock: Clock | None = None, policy: RetryPolicy | None = None,
                 low: int = LOW_BUDGET, max_wait: float | None = None) -> GitHubApp:
        """`GITHUB_APP_ID` and its private key (auth.py), at `GITHUB_API_URL`; `max_wait`: see
        RateBudgets."""
        creds = credentials_from_env(env)
        if not creds.is_app:
            raise ConfigError("App mode needs GITHUB_APP_ID and GITHUB_APP_PRIVATE_KEY (or _PATH)")
        app = app_client(creds, endpoints_from_env(env), clock or Clock(), policy or RetryPolicy())
        return cls(app, RateBudgets(app.clock, low, max_wait))

    def installation_for(self, repo: str) -> int:
        """The installation `repo` is on (one call the first time).
        https://docs.github.com/en/rest/apps/apps#get-a-repository-installation-for-the-authenticated-app"""
        with self._lock:
            if repo in self._installations:
                known = self._installations[repo]
                if known is None:
                    raise GitHubClientError(f"the App is not installed on {repo}", 404)
                return known
        owner, name = split_repo(repo)
        try:
            found = self.app.call("GET", f"/repos/{repo}/installation",
                                  lambda: self.app.gh.rest.apps.get_repo_installation(owner, name))
        except GitHubClientError as exc:
            if exc.status == 404:
                self.remember(repo, None)
                raise GitHubClientError(f"the App is not installed on {repo}", 404) from None
            raise
        installation = int(found.json()["id"])
        self.remember(repo, installation)
        return installation

    def known_installation(self, repo: str) -> int | None:
        """What the cache says, without a call: an id, or None (unknown or not installed)."""
        with self._lock:
            return self._installations.get(repo)

    def is_known_absent(self, repo: str) -> bool:
        with self._lock:
            return repo in self._installations and self._installations[repo] is None

    def remember(self, repo: str, installation: int | None) -> None:
        """Record where `repo` is (a webhook's signed payload says so too), or that it is not."""
        with self._lock:
            self._installations[repo] = installation

    def forget_repo(self, repo: str) -> None:
        with self._lock:
            self._installations.pop(repo, None)

    def client(self, installation: int) -> GitHubClient:
        """A client acting as `installation`, for one job (its own call log, the shared token
        and budget)."""
        auth = InstallationAuthStrategy(str(installation), lambda: self.tokens.token(installation),
                                        self.budgets, lambda: self.tokens.forget(installation))
        return GitHubClient(github_with(auth, self.app.endpoints), self.app.endpoints, self.app.secrets,
                            self.app.clock, self.app.policy)


def app_client(creds: Credentials, endpoints: Endpoints, clock: Clock, policy: RetryPolicy) -> GitHubClient:
    """The client signed with the App's JWT (githubkit makes and renews the JWT)."""
    auth = AppAuthStrategy(creds.app_id, creds.private_key or "")
    return GitHubClient(github_with(auth, endpoints), endpoints, creds.secrets, clock, policy)
