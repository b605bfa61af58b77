"""How a job finds its GitHub client and profile: the `Resolver` seam. The token mode (one
repository, `GITHUB_TOKEN`, `--profile`) lives here; the GitHub App mode implements the same
protocol (many installations, a profile per repository: service/app_mode.py)."""

from __future__ import annotations

import os
import threading
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Protocol

from issuetriage.github.client import GitHubClient
from issuetriage.policy import load_profile

if TYPE_CHECKING:
    from issuetriage.github.retry import Clock
    from issuetriage.policy import Policy

# (name, type, help, [(labels, value)]): one metric family for /metrics
MetricRows = list[tuple[str, str, str, list[tuple[str, float]]]]


class Resolver(Protocol):
    """Where a repository's jobs get their client and profile."""

    def accepts(self, repo: str, installation_id: int | None) -> str | None:
        """Why a delivery for `repo` is refused (not installed, no usable profile), or None.
        Answers from what is already known (no GitHub call): the receiver asks it per delivery."""

    def client(self, repo: str, installation_id: int | None) -> GitHubClient:
        """A client that acts for `repo` (the installation's token in App mode)."""

    def profile(self, repo: str, client: GitHubClient) -> Policy:
        """The profile `repo` is triaged with."""

    def installation_changed(self, event: str, payload: dict[str, Any]) -> None:
        """An `installation` / `installation_repositories` delivery, recorded, before the 202."""

    def metrics(self) -> MetricRows:
        """The resolver's own rows for /metrics (GitHub calls and rate budgets, for example)."""


class TokenResolver:
    """The repositories given (`--repo`, usually one), acting as `GITHUB_TOKEN`, with one profile
    (`--profile`); a client per thread, so each job counts its own calls."""

    def __init__(self, repos: str | tuple[str, ...], profile: str, env: Mapping[str, str] | None = None,
                 clock: Clock | None = None) -> None:
        self.repos = (repos,) if isinstance(repos, str) else repos
        self.repo = self.repos[0]
        self.profile_name = profile
        self.env = dict(os.environ if env is None else env)
        self.clock = clock
        self._local = threading.local()
        self._policy: Policy | None = None

    def accepts(self, repo: str, installation_id: int | None) -> str | None:
        if repo.lower() not in {r.lower() for r in self.repos}:
            return f"{repo}: not served here (this service acts as a token for {', '.join(self.repos)} only)"
        return None

    def client(self, repo: str, installation_id: int | None) -> GitHubClient:

        if getattr(self._local, "client", None) is None:
            self._local.client = GitHubClient.from_env(self.env, repo=repo, clock=self.clock)
            self._local.client.connect()
        return self._local.client  # type: ignore[no-any-return]

    def profile(self, repo: str, client: GitHubClient) -> Policy:

        if self._policy is None:
            self._policy = load_profile(self.profile_name)
        return self._policy

    def installation_changed(self, event: str, payload: dict[str, Any]) -> None:
        """Nothing to learn: a token serves the repositories it was given."""

    def metrics(self) -> MetricRows:
        return []
