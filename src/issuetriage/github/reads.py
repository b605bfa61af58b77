"""Reads: an issue with its comments, repo labels, the latest release, similar issues.

Each function is one API call unless it says otherwise; a doc link sits next to each.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import partial
from typing import Any

from issuetriage.errors import GitHubClientError, UserError
from issuetriage.github.client import PER_PAGE, GitHubClient, Page, RepoLabel, split_repo, to_comment, to_issue
from issuetriage.models import Comment, Issue


def issue_json(client: GitHubClient, repo: str, number: int) -> dict[str, Any]:
    """The raw issue (one call). https://docs.github.com/en/rest/issues/issues#get-an-issue"""
    owner, name = split_repo(repo)
    resp = client.call("GET", f"/repos/{repo}/issues/{number}",
                        lambda: client.gh.rest.issues.get(owner, name, number))
    return resp.json()


def viewer(client: GitHubClient) -> str:
    """The login the client acts as (a token's user, an App installation's bot).
    https://docs.github.com/en/graphql/reference/queries#viewer"""
    return str((client.graphql("query { viewer { login } }", {}).get("viewer") or {}).get("login") or "")


def comments(client: GitHubClient, repo: str, number: int, expected: int | None = None,
             me: str | None = None) -> tuple[Comment, ...]:
    """All comments, 100 a page; stops without an extra call once a page comes back short (or
    `expected` comments are in). `me` (the `viewer`): its comments are the bot's (`by_bot`).

    https://docs.github.com/en/rest/issues/comments#list-issue-comments
    """
    owner, name = split_repo(repo)
    found: list[Comment] = []
    def fetch(page: int) -> Any:
        return client.gh.rest.issues.list_comments(owner, name, number, per_page=PER_PAGE, page=page)

    for batch in _pages(client, f"/repos/{repo}/issues/{number}/comments", fetch):
        found += [to_comment(c, me) for c in batch]
        if expected is not None and len(found) >= expected:
            break
    return tuple(found)


def _pages(client: GitHubClient, path: str, fetch: Callable[[int], Any]) -> Iterator[list[Any]]:
    """Each page of a REST list, 100 items a page, until one comes back short."""
    page = 1
    while True:
        batch = client.call("GET", f"{path}?page={page}", partial(fetch, page)).json()
        yield batch
        if len(batch) < PER_PAGE:
            return
        page += 1


ISSUE_QUERY = """
query($owner: String!, $name: String!, $number: Int!, $after: String) {
  repository(owner: $owner, name: $name) {
    latestRelease { tagName }
    issueOrPullRequest(number: $number) {
      __typename
      ... on Issue {
        number title body state createdAt locked authorAssociation
        author { login }
        repository { nameWithOwner }
        labels(first: 100) { nodes { name } pageInfo { hasNextPage } }
        comments(first: 100, after: $after) {
          totalCount
          nodes { body createdAt authorAssociation viewerDidAuthor author { login } }
          pageInfo { hasNextPage endCursor }
        }
      }
      ... on PullRequest { number }
    }
  }
}"""


@dataclass(frozen=True)
class Snapshot:
    """An issue as GitHub shows it now, and the repository's latest release tag (None: no release)."""

    issue: Issue
    latest_release: str | None


def read_issue(client: GitHubClient, repo: str, number: int, moved_ok: bool = False) -> Snapshot:
    """Issue, labels, state, comments and the latest release in one GraphQL call; one more call per
    further 100 comments. https://docs.github.com/en/graphql/reference/objects#issue

    GitHub resolves a transferred issue's old number to where it lives now. Only a caller that
    expects the move (checking the outcome of our own transfer) gets it; anyone else gets a
    UserError, so nothing is ever triaged or written outside the repository asked for."""
    owner, name = split_repo(repo)
    variables: dict[str, Any] = {"owner": owner, "name": name, "number": number, "after": None}
    found: list[Comment] = []
    while True:
        data = client.graphql(ISSUE_QUERY, variables)
        repository = data.get("repository") or {}
        node = repository.get("issueOrPullRequest")
        if not node:
            raise GitHubClientError(f"{repo}#{number}: no such issue", 404)
        if node.get("__typename") == "PullRequest":
            issue = Issue(repo=repo, number=number, title="", body="", is_pull_request=True)
            return Snapshot(issue, None)
        page = node["comments"]
        found += [_comment(c) for c in page["nodes"]]
        if not page["pageInfo"]["hasNextPage"]:
            break
        variables["after"] = page["pageInfo"]["endCursor"]
    if node["labels"]["pageInfo"]["hasNextPage"]:
        raise GitHubClientError(f"{repo}#{number}: more than 100 labels; issuetriage reads at most 100", 422)
    where = node["repository"]["nameWithOwner"]
    issue = Issue(repo=where, number=node["number"], title=node["title"], body=node["body"] or "",
                  state=node["state"].lower(), created_at=node["createdAt"], locked=node["locked"],
                  author=(node.get("author") or {}).get("login", ""),
                  author_association=node.get("authorAssociation") or "NONE",
                  labels=tuple(label["name"] for label in node["labels"]["nodes"]),
                  comments=tuple(found))
    if (issue.repo, issue.number) != (repo, number) and not moved_ok:
        raise UserError(f"{repo}#{number} was moved to {issue.ref}; triage it there")
    release = repository.get("latestRelease") or {}
    return Snapshot(issue, release.get("tagName"))


def _comment(node: dict[str, Any]) -> Comment:
    return Comment(author=(node.get("author") or {}).get("login", ""), body=node.get("body") or "",
                   created_at=node.get("createdAt"),
                   author_association=node.get("authorAssociation") or "NONE",
                   by_bot=node.get("viewerDidAuthor") is True)


def fetch_issue(client: GitHubClient, repo: str, number: int, moved_ok: bool = False) -> Issue:
    """The issue as it is now (one GraphQL call; see `read_issue`)."""
    return read_issue(client, repo, number, moved_ok).issue


def minor_of(tag: str | None) -> str | None:
    """MAJOR.MINOR of a release tag (`v2.5.1` → `2.5`), or None."""
    match = re.search(r"(\d+)\.(\d+)", tag or "")
    return f"{match.group(1)}.{match.group(2)}" if match else None


def repo_labels(client: GitHubClient, repo: str) -> tuple[RepoLabel, ...]:
    """Every label the repository defines. https://docs.github.com/en/rest/issues/labels#list-labels-for-a-repository"""
    owner, name = split_repo(repo)
    out: list[RepoLabel] = []
    page = 1
    while True:
        def send(p: int = page) -> Any:
            return client.gh.rest.issues.list_labels_for_repo(owner, name, per_page=PER_PAGE, page=p)

        resp = client.call("GET", f"/repos/{repo}/labels?page={page}", send)
        batch = resp.json()
        out += [RepoLabel(b["name"], b.get("color") or "ededed", b.get("description") or "") for b in batch]
        if len(batch) < PER_PAGE:
            return tuple(out)
        page += 1


def latest_minor(client: GitHubClient, repo: str) -> str | None:
    """MAJOR.MINOR of the latest release, or None when there is none.

    https://docs.github.com/en/rest/releases/releases#get-the-latest-release
    """
    owner, name = split_repo(repo)
    try:
        resp = client.call("GET", f"/repos/{repo}/releases/latest",
                            lambda: client.gh.rest.repos.get_latest_release(owner, name))
    except GitHubClientError as exc:
        if exc.status == 404:
            return None
        raise
    return minor_of(str(resp.json().get("tag_name", "")))


_SEARCH_WORD = re.compile(r"[a-z][a-z0-9_]{2,}")
_COMMON = frozenset("the and for with not when from this that are was has have does into after "
                    "before using use while error issue bug fails failed".split())


def search_terms(text: str, most: int = 5) -> str:
    """Up to `most` distinctive plain words of (untrusted) `text`, joined by OR.

    GitHub search ANDs bare words, so a whole title finds little but itself; and `repo:x`, `is:pr`
    or `AND`/`OR` in the text would be qualifiers or operators. Only lower-case word characters
    are kept (no `:`, no operators), the longest first; at most 5 words, as GitHub allows 5
    operators. https://docs.github.com/en/search-github/searching-on-github/searching-issues-and-pull-requests
    """
    words = [w for w in _SEARCH_WORD.findall(text.lower()) if w not in _COMMON]
    distinct = list(dict.fromkeys(words))
    return " OR ".join(sorted(distinct, key=len, reverse=True)[:most])


def similar_issues(client: GitHubClient, repo: str, words: str, limit: int = 5) -> tuple[Issue, ...]:
    """Issues in `repo` sharing some of `words` (one call; none without a usable word).
    https://docs.github.com/en/rest/search/search#search-issues-and-pull-requests"""
    terms = search_terms(words)
    if not terms:
        return ()
    query = f"repo:{repo} is:issue {terms}"
    resp = client.call("GET", f"/search/issues?q={query}",
                        lambda: client.gh.rest.search.issues_and_pull_requests(q=query, per_page=limit))
    items = [item for item in resp.json().get("items", [])
             if str(item.get("repository_url", f"/repos/{repo}")).endswith(f"/repos/{repo}")]
    return tuple(to_issue(repo, item) for item in items[:limit])


def is_collaborator(client: GitHubClient, repo: str, user: str) -> bool:
    """Whether `user` may be trusted to have their script run (204 yes, 404 no).

    https://docs.github.com/en/rest/collaborators/collaborators#check-if-a-user-is-a-repository-collaborator
    """
    owner, name = split_repo(repo)
    try:
        client.call("GET", f"/repos/{repo}/collaborators/{user}",
                     lambda: client.gh.rest.repos.check_collaborator(owner, name, user))
    except GitHubClientError as exc:
        if exc.status == 404:
            return False
        raise
    return True


def issues_page(client: GitHubClient, repo: str, since: str | None, page: int, etag: str | None) -> Page:
    """One page of issues updated since `since`, oldest first; 304 when the ETag still matches.

    https://docs.github.com/en/rest/issues/issues#list-repository-issues
    """
    owner, name = split_repo(repo)
    headers = {"If-None-Match": etag} if etag else None
    kwargs: dict[str, Any] = {"state": "all", "sort": "updated", "direction": "asc",
                              "per_page": PER_PAGE, "page": page}
    if since:
        kwargs["since"] = since
    resp = client.call("GET", f"/repos/{repo}/issues?since={since or ''}&page={page}",
                        lambda: client.gh.rest.issues.list_for_repo(owner, name, headers=headers, **kwargs))
    if resp.status_code == 304:
        return Page((), etag, not_modified=True)
    return Page(tuple(resp.json()), resp.headers.get("etag"))


def open_issues_page(client: GitHubClient, repo: str, page: int, label: str | None = None) -> tuple[Issue, ...]:
    """One page of open issues (and PRs), oldest first, optionally with `label`.

    https://docs.github.com/en/rest/issues/issues#list-repository-issues
    """
    owner, name = split_repo(repo)
    kwargs: dict[str, Any] = {"state": "open", "sort": "created", "direction": "asc",
                              "per_page": PER_PAGE, "page": page}
    if label:
        kwargs["labels"] = label
    resp = client.call("GET", f"/repos/{repo}/issues?state=open&labels={label or ''}&page={page}",
                       lambda: client.gh.rest.issues.list_for_repo(owner, name, **kwargs))
    return tuple(to_issue(repo, item) for item in resp.json())


def issue_events(client: GitHubClient, repo: str, number: int) -> tuple[dict[str, Any], ...]:
    """Every event of one issue (labeled, unlabeled, closed, reopened, ...), oldest first, 100 a
    page. https://docs.github.com/en/rest/issues/events#list-issue-events"""
    owner, name = split_repo(repo)
    def fetch(page: int) -> Any:
        return client.gh.rest.issues.list_events(owner, name, number, per_page=PER_PAGE, page=page)

    return tuple(event for batch in _pages(client, f"/repos/{repo}/issues/{number}/events", fetch) for event in batch)
