"""Nothing lost in an outage: redeliver the App's failed webhook deliveries, then sweep each
repository for issues opened since the last event seen that carry no bot marker.

GitHub does not retry a failed delivery; it keeps deliveries about three days and redelivers one
on request (with its original `X-GitHub-Delivery`, so the receiver's dedup still holds). Issues
whose events never became deliveries at all (the App was down, a delivery was lost) are found by
the sweep and handed to the queue's `enqueue`; the one flow's skip checks make a second triage of
the same issue a no-op.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any
from urllib.parse import urlencode

from issuetriage.errors import ConfigError, GitHubError
from issuetriage.github.client import PER_PAGE, GitHubClient, to_issue
from issuetriage.policy import Policy
from issuetriage.service.app_mode import AppResolver

Enqueue = Callable[[str, int, int, str], object]
SWEEP_REASON = "reconcile: opened since the last event seen, not triaged"


@dataclass
class Reconciled:
    """What one reconcile run did."""

    deliveries: int = 0
    redelivered: list[str] = field(default_factory=list)  # delivery guids
    enqueued: list[tuple[str, int]] = field(default_factory=list)
    skipped: list[tuple[str, str]] = field(default_factory=list)  # (repository, why)


def when(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


def deliveries(app: GitHubClient, since: datetime) -> list[dict[str, Any]]:
    """The App's deliveries back to `since`, newest first, following the Link header's cursor.
    https://docs.github.com/en/rest/apps/webhooks#list-deliveries-for-an-app-webhook"""
    found: list[dict[str, Any]] = []
    params: dict[str, Any] = {"per_page": PER_PAGE}
    while True:
        page = _get(app, "/app/hook/deliveries", params)
        items = page.json()
        for item in items:
            if when(item["delivered_at"]) < since:
                return found
            found.append(item)
        cursor = re.search(r'[?&]cursor=([^&>]+)[^>]*>;\s*rel="next"', page.headers.get("link", ""))
        if not items or cursor is None:
            return found
        params = {**params, "cursor": cursor.group(1)}


def to_redeliver(items: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """The latest attempt of each delivery none of whose attempts was answered 2xx, when the
    receiver did not answer at all or failed (5xx); a 4xx was a deliberate refusal and stays one."""
    attempts: dict[str, list[dict[str, Any]]] = {}
    for item in items:
        attempts.setdefault(item["guid"], []).append(item)
    out = []
    for tries in attempts.values():
        codes = [int(t.get("status_code") or 0) for t in tries]
        latest = max(tries, key=lambda t: when(t["delivered_at"]))
        code = int(latest.get("status_code") or 0)
        if not any(200 <= c < 300 for c in codes) and (code == 0 or code >= 500):
            out.append(latest)
    return out


def redeliver(app: GitHubClient, delivery_id: int) -> None:
    """https://docs.github.com/en/rest/apps/webhooks#redeliver-a-delivery-for-an-app-webhook"""
    path = f"/app/hook/deliveries/{delivery_id}/attempts"
    app.call("POST", path, lambda: app.gh.request("POST", path))


def installed_repos(resolver: AppResolver) -> dict[str, int]:
    """Every repository of every installation (the installations list, then each one's repositories).
    https://docs.github.com/en/rest/apps/apps#list-installations-for-the-authenticated-app
    https://docs.github.com/en/rest/apps/installations#list-repositories-accessible-to-the-app-installation"""
    out: dict[str, int] = {}
    for installation in _pages(resolver.app.app, "/app/installations", lambda data: data):
        number = int(installation["id"])
        client = resolver.app.client(number)
        for repo in _pages(client, "/installation/repositories", lambda data: data["repositories"]):
            out[repo["full_name"]] = number
            resolver.app.remember(repo["full_name"], number)
    return out


def unmarked_issues(client: GitHubClient, repo: str, since: datetime, policy: Policy) -> list[int]:
    """Open issues created at or after `since` that the profile says are untriaged (no bot marker,
    not triaged or routed by a person, not a pull request), newest first.
    https://docs.github.com/en/rest/issues/issues#list-repository-issues"""
    found: list[int] = []
    for item in _pages(client, f"/repos/{repo}/issues", lambda data: data,
                       state="open", sort="created", direction="desc"):
        if when(item["created_at"]) < since:
            break
        if policy.skip_reason(to_issue(repo, item)) is None:
            found.append(int(item["number"]))
    return found


def _get(client: GitHubClient, path: str, params: dict[str, Any]) -> Any:
    return client.call("GET", f"{path}?{urlencode(params)}", lambda: client.gh.request("GET", path, params=params))


def _pages(client: GitHubClient, path: str, items: Callable[[Any], list[dict[str, Any]]],
           **params: Any) -> Iterator[dict[str, Any]]:
    """Each item of a page-numbered list, reading the next page only when the caller wants more."""
    page = 1
    while True:
        batch = items(_get(client, path, {**params, "per_page": PER_PAGE, "page": page}).json())
        yield from batch
        if len(batch) < PER_PAGE:
            return
        page += 1


def reconcile(resolver: AppResolver, enqueue: Enqueue, since: datetime,
              last_seen: Callable[[str], datetime | None] = lambda repo: None,
              seen: Callable[[str, int], bool] = lambda repo, number: False,
              repos: Iterable[str] | None = None, dry_run: bool = False) -> Reconciled:
    """Redeliver failed deliveries back to `since`, then sweep each repository (default: every
    installed one) from its last event seen (else `since`); a repository that cannot be swept
    (no usable profile, a GitHub error) is skipped with its reason, the others still are. An
    issue `seen` says a delivery was recorded for is not missed (its job is the queue's).
    `dry_run` finds the same but neither redelivers nor enqueues."""
    app = resolver.app.app
    done = Reconciled()
    found = deliveries(app, since)
    done.deliveries = len(found)
    for item in to_redeliver(found):
        if not dry_run:
            redeliver(app, int(item["id"]))
        done.redelivered.append(str(item["guid"]))
    targets = {repo: None for repo in repos} if repos is not None else installed_repos(resolver)
    for repo, installation in targets.items():
        try:
            client = resolver.client(repo, installation)
            policy = resolver.profile(repo, client)
            start = max(since, last_seen(repo) or since)
            numbers = [n for n in unmarked_issues(client, repo, start, policy) if not seen(repo, n)]
            installation_id = resolver.app.known_installation(repo) or 0
        except (ConfigError, GitHubError) as exc:
            done.skipped.append((repo, " ".join(str(exc).split())))
            continue
        for number in numbers:
            if not dry_run:
                enqueue(repo, number, installation_id, SWEEP_REASON)
            done.enqueued.append((repo, number))
    return done
