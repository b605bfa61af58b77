"""`issuetriage sync`: mirror a repository's issues, comments and labels into the store,
incrementally (`since` the newest update seen, with the first page's ETag), a page at a time so
a crash loses at most one page of work."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from issuetriage.github import mirror, reads
from issuetriage.github.client import PER_PAGE, GitHubClient, to_issue
from issuetriage.live import events as label_events
from issuetriage.store.sqlite import Store


@dataclass(frozen=True)
class SyncReport:
    issues: int
    comments: int
    labels: int
    pages: int
    not_modified: bool
    since: str | None
    events: int = 0


def sync(client: GitHubClient, store: Store, repo: str, since: str | None = None,
         on_issue: Callable[[int], None] = lambda n: None) -> SyncReport:
    """Fetch what changed since the last sync (or `since`), store it, advance the cursor."""
    saved_since, saved_etag = mirror.cursor(store, repo)
    start = since or saved_since
    etag = saved_etag if since is None else None
    labels = reads.repo_labels(client, repo)
    me: str | None = None  # whose comments are the bot's own (their markers count), asked when first needed
    mirror.save_labels(store, repo, labels)
    issues = comments = pages = events = 0
    newest = start
    first_etag: str | None = None
    page = 1
    while True:
        batch = reads.issues_page(client, repo, start, page, etag if page == 1 else None)
        pages += 1
        if batch.not_modified:
            return SyncReport(0, 0, len(labels), pages, True, start)
        first_etag = batch.etag if page == 1 else first_etag
        with store.transaction():
            for data in batch.items:
                count = data.get("comments") if isinstance(data.get("comments"), int) else None
                if count and me is None:
                    me = reads.viewer(client)
                found = reads.comments(client, repo, data["number"], count, me) if count else ()
                store.put_issue(to_issue(repo, data, found))
                events += _sync_events(client, store, repo, data["number"])
                issues, comments = issues + 1, comments + len(found)
                newest = max(newest or "", data.get("updated_at") or "") or newest
                on_issue(data["number"])
            # An ETag is only worth keeping for the exact query we will send next time.
            mirror.save_cursor(store, repo, newest, first_etag if newest == start else None)
        if len(batch.items) < PER_PAGE:
            return SyncReport(issues, comments, len(labels), pages, False, newest, events)
        page += 1


def _sync_events(client: GitHubClient, store: Store, repo: str, number: int) -> int:
    """Store the label and state events of one changed issue (who did what, when)."""
    found = (label_events.from_github(number, e) for e in reads.issue_events(client, repo, number))
    return label_events.save(store, repo, number, [e for e in found if e is not None])
