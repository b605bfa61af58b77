"""The GitHub App mode of the `Resolver` (service/resolver.py): many installations, each job acting
as its installation, each repository triaged with its own profile.

Where a repository's profile comes from is chosen per installation, in one server-side TOML file
(`ISSUETRIAGE_APP_PROFILES`):

    source = "mapping"                # the default for installations not listed: "mapping" or "repo"
    default = "pytorch"               # a mapped installation's repositories not listed below
    [repos]                           # owner/repo → a shipped profile's name or a folder
    "pytorch/pytorch" = "pytorch"
    "pytorch/vision" = "profiles/vision"   # relative to this file
    [installations]                   # installation id → where its repositories' profiles come from
    "4242" = "repo"                   # the repository's own .github/issuetriage/ (github/repo_profile.py)

docs/github-app.md has the rest.
"""

from __future__ import annotations

import os
import threading
import tomllib
from collections import OrderedDict
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from issuetriage.errors import ConfigError, all_problems
from issuetriage.github.client import GitHubClient
from issuetriage.github.installations import Budget, GitHubApp
from issuetriage.github.repo_profile import RepoProfiles
from issuetriage.github.retry import Clock
from issuetriage.policy import Policy, load_profile
from issuetriage.service.resolver import MetricRows

PROFILES_ENV = "ISSUETRIAGE_APP_PROFILES"
CLIENTS_PER_THREAD = 16
FAILURE_TTL = 300.0  # a repository's unusable profile is refused from memory this long, then re-read
Source = Literal["mapping", "repo"]


class ProfileMap(BaseModel):
    """Which profile each repository uses, and per installation where profiles come from."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    source: Source = "mapping"
    default: str | None = None
    repos: dict[str, str] = Field(default_factory=dict)
    installations: dict[str, Source] = Field(default_factory=dict)
    where: str = Field(default="(no mapping file)", exclude=True)

    def source_for(self, installation: int | None) -> Source:
        return self.installations.get(str(installation), self.source) if installation is not None else self.source

    def profile_for(self, repo: str) -> str | None:
        """The mapped profile (name or folder) for `repo`, else the default, else None."""
        found = {k.lower(): v for k, v in self.repos.items()}.get(repo.lower())
        return found or self.default


def load_profile_map(path: Path | None, default: str | None = None) -> ProfileMap:
    """The mapping file (folders resolved next to it). `default` (`--profile`) serves only its own
    repository (`repo` in its profile.toml), never every repository the App is installed on: a
    catalog made for one project must not label another's issues. Only the mapping file's own
    `default` key is a catch-all; a repository neither names has no usable profile (refused)."""
    own = {load_profile(default).meta.repo: default} if default else {}
    if path is None:
        return ProfileMap(repos=own)
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read: {exc.strerror or exc}") from None
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: not valid TOML: {exc}") from None
    try:
        found = ProfileMap.model_validate({**data, "where": str(path)})
    except ValidationError as exc:
        raise ConfigError(f"{path}: {all_problems(exc)[0]}") from None
    bad = next((k for k in found.installations if not k.isdigit()), None)
    if bad is not None:
        raise ConfigError(f"{path}: installations.{bad}: an installation id is a number")
    def near(value: str) -> str:
        return str(path.parent / value) if (path.parent / value).is_dir() else value
    return found.model_copy(update={"repos": {**own, **{k: near(v) for k, v in found.repos.items()}},
                                    "default": near(found.default) if found.default else None})


class AppResolver:
    """Clients act as the repository's installation; profiles come from its installation's source.

    `accepts` answers from memory only (the receiver asks it per delivery, within GitHub's 10 s):
    a repository known not to be installed, one a mapping has no profile for, or one whose profile
    was found unusable within the last FAILURE_TTL seconds is refused with that one-line reason.
    """

    def __init__(self, app: GitHubApp, profiles: ProfileMap, repo_profiles: RepoProfiles | None = None,
                 failure_ttl: float = FAILURE_TTL) -> None:
        self.app = app
        self.profiles = profiles
        self.repo_profiles = repo_profiles or RepoProfiles()
        self.failure_ttl = failure_ttl
        self._lock = threading.Lock()
        self._failures: dict[str, tuple[str, float]] = {}
        self._local = threading.local()

    @classmethod
    def from_env(cls, env: Mapping[str, str], default_profile: str | None = None,
                 clock: Clock | None = None, max_wait: float | None = None) -> AppResolver:
        """App credentials and the mapping file from `env`; `max_wait`: how long a call may wait
        for its installation's budget before BudgetExhausted hands the job back (None: no limit)."""
        path = env.get(PROFILES_ENV)
        return cls(GitHubApp.from_env(env, clock, max_wait=max_wait),
                   load_profile_map(Path(path) if path else None, default_profile))

    def accepts(self, repo: str, installation_id: int | None) -> str | None:
        if installation_id is None and self.app.is_known_absent(repo):
            return f"the App is not installed on {repo}"
        installation = installation_id if installation_id is not None else self.app.known_installation(repo)
        if self.profiles.source_for(installation) == "mapping" and self.profiles.profile_for(repo) is None:
            return f"{repo}: no profile: not in the server's mapping ({self.profiles.where})"
        with self._lock:
            failed = self._failures.get(repo.lower())
        if failed and self.app.app.clock.now() - failed[1] < self.failure_ttl:
            return failed[0]
        return None

    def client(self, repo: str, installation_id: int | None) -> GitHubClient:
        if installation_id is None:
            installation_id = self.app.installation_for(repo)
        else:
            self.app.remember(repo, installation_id)  # a signed delivery says where it comes from
        return self._reused(installation_id)

    def _reused(self, installation: int) -> GitHubClient:
        """This thread's client for `installation` (its connections kept for the next job), at most
        CLIENTS_PER_THREAD of them, the least recently used closed first; none crosses a fork."""
        local = self._local
        if getattr(local, "pid", None) != os.getpid():
            local.pid, local.clients = os.getpid(), OrderedDict()
        clients: OrderedDict[int, GitHubClient] = local.clients
        if installation in clients:
            clients.move_to_end(installation)
        else:
            clients[installation] = self.app.client(installation)
            while len(clients) > CLIENTS_PER_THREAD:
                clients.popitem(last=False)[1].close()
        return clients[installation]

    def profile(self, repo: str, client: GitHubClient) -> Policy:
        """The repository's own profile or its mapped one; ConfigError (remembered for `accepts`)
        when it has none that loads."""
        try:
            if self.profiles.source_for(self.app.known_installation(repo)) == "repo":
                policy = self.repo_profiles.load(client, repo)
            else:
                name = self.profiles.profile_for(repo)
                if name is None:
                    raise ConfigError(f"{repo}: no profile: not in the server's mapping ({self.profiles.where})")
                policy = load_profile(name)
        except ConfigError as exc:
            with self._lock:
                self._failures[repo.lower()] = (" ".join(str(exc).split()), self.app.app.clock.now())
            raise
        with self._lock:
            self._failures.pop(repo.lower(), None)
        return policy

    def installation_changed(self, event: str, payload: dict[str, Any]) -> None:
        """What an `installation` / `installation_repositories` delivery says about where each
        repository is: added ones are on the installation, removed (or uninstalled, suspended)
        ones are refused from then on, from memory.
        https://docs.github.com/en/webhooks/webhook-events-and-payloads#installation"""
        found = payload.get("installation")
        installation = found.get("id") if isinstance(found, dict) else None
        if not isinstance(installation, int):
            return
        action = payload.get("action")
        gone = action in {"deleted", "suspend"} or event == "installation_repositories" and action == "removed"
        keys = ("repositories", "repositories_added", "repositories_removed")
        for key in keys:
            for repo in payload.get(key) or []:
                name = repo.get("full_name") if isinstance(repo, dict) else None
                if isinstance(name, str):
                    self.app.remember(name, None if gone or key == "repositories_removed" else installation)

    def metrics(self) -> MetricRows:
        """(name, type, help, [(labels, value)]) for /metrics: this process's GitHub calls and what
        GitHub last said of each installation's budget, per resource, and the waits for a reset."""
        rows = self.app.budgets.rows()

        def samples(value: Callable[[Budget], float | None]) -> list[tuple[str, float]]:
            return [(f'{{installation="{b.installation}",resource="{b.resource}"}}', v)
                    for b in rows if (v := value(b)) is not None]

        return [
            ("github_app_calls_total", "counter", "GitHub calls sent per installation and resource (this process).",
             samples(lambda b: b.calls)),
            ("github_rate_remaining", "gauge", "Calls left in the window, as GitHub last reported.",
             samples(lambda b: b.remaining)),
            ("github_rate_reset_timestamp_seconds", "gauge", "When the window refills (epoch seconds).",
             samples(lambda b: b.reset or None)),
            ("github_rate_waits_total", "counter", "Calls that waited for the window to reset.",
             samples(lambda b: b.waits)),
            ("github_rate_waited_seconds_total", "counter", "Seconds calls waited for a reset.",
             samples(lambda b: b.waited)),
            ("github_tokens_minted_total", "counter", "Installation tokens minted (this process).",
             [("", float(self.app.tokens.minted))]),
        ]
