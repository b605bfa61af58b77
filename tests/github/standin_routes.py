"""The stand-in's REST and GraphQL routes: each a small function of the state and the request."""

from __future__ import annotations

import base64
import hashlib
import re
from datetime import UTC, datetime
from typing import Any

from standin import Request, StandIn, sample

Answer = tuple[int, dict[str, str], Any]
ISSUE = r"/repos/(?P<repo>[^/]+/[^/]+)/issues/(?P<n>\d+)"


def route(s: StandIn, req: Request) -> Answer:
    for method, pattern, handler in ROUTES:
        match = re.fullmatch(pattern, req.path)
        if match and method == req.method:
            return handler(s, req, **match.groupdict())
    return 404, {}, {"message": "Not Found"}


def _issue(s: StandIn, repo: str, n: str) -> dict[str, Any] | None:
    return s.state.issues.get((repo, int(n)))


def get_issue(s: StandIn, req: Request, repo: str, n: str) -> Answer:
    if (repo, int(n)) in s.state.moved:
        to_repo, to_n = s.state.moved[(repo, int(n))]
        return 301, {"Location": f"{s.url}/repos/{to_repo}/issues/{to_n}"}, {"message": "Moved Permanently"}
    issue = _issue(s, repo, n)
    return (200, {}, issue) if issue else (404, {}, {"message": "Not Found"})


def patch_issue(s: StandIn, req: Request, repo: str, n: str) -> Answer:
    issue = _issue(s, repo, n)
    if issue is None:
        return 404, {}, {"message": "Not Found"}
    before = issue["state"]
    for key in ("title", "body", "state", "state_reason"):
        if key in req.body:
            issue[key] = req.body[key]
    if issue["state"] != before:
        s.state.add_event(repo, int(n), "closed" if issue["state"] == "closed" else "reopened", s.state.viewer)
    issue["updated_at"] = s.state.tick()
    return 200, {}, issue


def list_comments(s: StandIn, req: Request, repo: str, n: str) -> Answer:
    items = s.state.comments.get((repo, int(n)))
    if items is None:
        return 404, {}, {"message": "Not Found"}
    per_page = int(req.query.get("per_page", ["30"])[0])
    page = int(req.query.get("page", ["1"])[0])
    return 200, {}, items[(page - 1) * per_page: page * per_page]


def post_comment(s: StandIn, req: Request, repo: str, n: str) -> Answer:
    if _issue(s, repo, n) is None:
        return 404, {}, {"message": "Not Found"}
    s.state.subscriptions[(repo, int(n))] = "SUBSCRIBED"  # GitHub subscribes whoever comments
    return 201, {}, s.state.add_comment(repo, int(n), req.body["body"], s.state.viewer)


def add_labels(s: StandIn, req: Request, repo: str, n: str) -> Answer:
    issue = _issue(s, repo, n)
    if issue is None:
        return 404, {}, {"message": "Not Found"}
    names = req.body["labels"] if isinstance(req.body, dict) else req.body
    have = {label["name"] for label in issue["labels"]}
    issue["labels"] += [s.state.label(repo, name) for name in names if name not in have]
    for name in dict.fromkeys(names):
        if name not in have:
            s.state.add_event(repo, int(n), "labeled", s.state.viewer, name)
    issue["updated_at"] = s.state.tick()
    return 200, {}, issue["labels"]


def list_events(s: StandIn, req: Request, repo: str, n: str) -> Answer:
    """https://docs.github.com/en/rest/issues/events#list-issue-events (oldest first)"""
    if _issue(s, repo, n) is None:
        return 404, {}, {"message": "Not Found"}
    items = s.state.events.get((repo, int(n)), [])
    per_page = int(req.query.get("per_page", ["30"])[0])
    page = int(req.query.get("page", ["1"])[0])
    return 200, {}, items[(page - 1) * per_page: page * per_page]


def list_labels(s: StandIn, req: Request, repo: str) -> Answer:
    per_page = int(req.query.get("per_page", ["30"])[0])
    page = int(req.query.get("page", ["1"])[0])
    items = list(s.state.labels.get(repo, {}).values())
    return 200, {}, items[(page - 1) * per_page: page * per_page]


def create_label(s: StandIn, req: Request, repo: str) -> Answer:
    if req.body["name"] in s.state.labels.get(repo, {}):
        return 422, {}, {"message": "Validation Failed", "errors": [{"code": "already_exists"}]}
    label = s.state.label(repo, req.body["name"], req.body.get("color", "ededed"), req.body.get("description", ""))
    return 201, {}, label


def update_label(s: StandIn, req: Request, repo: str, name: str) -> Answer:
    label = s.state.labels.get(repo, {}).get(name)
    if label is None:
        return 404, {}, {"message": "Not Found"}
    label.update({k: v for k, v in req.body.items() if k in {"color", "description"}})
    if req.body.get("new_name"):
        del s.state.labels[repo][name]
        label["name"] = req.body["new_name"]
        s.state.labels[repo][label["name"]] = label
    return 200, {}, label


def list_issues(s: StandIn, req: Request, repo: str) -> Answer:
    q = {k: v[0] for k, v in req.query.items()}
    since, state = q.get("since", ""), q.get("state", "open")  # GitHub's default is open
    wanted = {x for x in q.get("labels", "").split(",") if x}
    items = [i for (r, _), i in s.state.issues.items()
             if r == repo and i["updated_at"] >= since and state in {"all", i["state"]}
             and wanted <= {label["name"] for label in i["labels"]}]
    key = q.get("sort", "created") + "_at"
    items.sort(key=lambda i: (i[key], i["number"]), reverse=q.get("direction", "desc") == "desc")
    per_page, page = int(q.get("per_page", "30")), int(q.get("page", "1"))
    chunk = items[(page - 1) * per_page: page * per_page]
    etag = f'W/"{hash(tuple((i["number"], i["updated_at"]) for i in chunk)) & 0xffffffff:x}"'
    if req.headers.get("if-none-match") == etag:
        return 304, {"ETag": etag}, None
    return 200, {"ETag": etag}, chunk


def latest_release(s: StandIn, req: Request, repo: str) -> Answer:
    tag = s.state.releases.get(repo)
    return (200, {}, {**sample("release"), "tag_name": tag}) if tag else (404, {}, {"message": "Not Found"})


def collaborator(s: StandIn, req: Request, repo: str, user: str) -> Answer:
    return (204, {}, None) if (repo, user) in s.state.collaborators else (404, {}, {"message": "Not Found"})


def search(s: StandIn, req: Request) -> Answer:
    q = req.query.get("q", [""])[0]
    repo = re.search(r"repo:(\S+)", q).group(1)  # type: ignore[union-attr]
    # bare words joined by OR (what issuetriage sends): any of them matches; qualifiers and
    # operators are not words
    words = [w.lower() for w in q.split() if ":" not in w and w not in {"OR", "AND", "NOT"}]
    items = [i for (r, _), i in s.state.issues.items()
             if r == repo and any(w in (i["title"] + i["body"]).lower() for w in words)]
    return 200, {}, {"total_count": len(items), "incomplete_results": False, "items": items}


def installation(s: StandIn, req: Request, repo: str) -> Answer:
    """https://docs.github.com/en/rest/apps/apps#get-a-repository-installation-for-the-authenticated-app"""
    installations = s.state.installations
    if installations and repo not in installations:
        return 404, {}, {"message": "Not Found"}
    return 200, {}, {"id": installations.get(repo, 4242), "account": {"login": repo.split("/")[0]}}


def access_token(s: StandIn, req: Request, inst: str) -> Answer:
    """A new token each mint, expiring `token_ttl` seconds after the stand-in's `now`."""
    token = sample("installation_token")
    token["token"] = f"ghs_standin{inst}x{len(s.minted) + 1:04d}" + "t" * 20
    token["expires_at"] = datetime.fromtimestamp(s.now() + s.token_ttl, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    s.accepted_tokens.add(token["token"])
    s.minted[token["token"]] = int(inst)
    return 201, {}, token


def list_installation_repos(s: StandIn, req: Request) -> Answer:
    """https://docs.github.com/en/rest/apps/installations#list-repositories-accessible-to-the-app-installation"""
    token = req.headers.get("authorization", "").partition(" ")[2]
    inst = s.minted.get(token)
    repos = sorted({r for r, i in s.state.installations.items() if i == inst} if s.state.installations
                   else {r for r, _ in s.state.issues})
    return 200, {}, {"total_count": len(repos), "repositories": [{"full_name": r} for r in repos]}


def list_installations(s: StandIn, req: Request) -> Answer:
    """https://docs.github.com/en/rest/apps/apps#list-installations-for-the-authenticated-app"""
    ids = sorted(set(s.state.installations.values()) or {4242})
    return 200, {}, [{"id": i, "account": {"login": f"org{i}"}} for i in ids]


def list_deliveries(s: StandIn, req: Request) -> Answer:
    """Newest first, `per_page` a page; the next page's `cursor` is in the Link header.
    https://docs.github.com/en/rest/apps/webhooks#list-deliveries-for-an-app-webhook"""
    per_page = int(req.query.get("per_page", ["30"])[0])
    start = int(req.query.get("cursor", ["0"])[0])
    chunk = s.state.deliveries[start:start + per_page]
    headers = {}
    if start + per_page < len(s.state.deliveries):
        headers["Link"] = f'<{s.url}/app/hook/deliveries?per_page={per_page}&cursor={start + per_page}>; rel="next"'
    return 200, headers, chunk


def redeliver(s: StandIn, req: Request, id: str) -> Answer:
    """https://docs.github.com/en/rest/apps/webhooks#redeliver-a-delivery-for-an-app-webhook"""
    found = next((d for d in s.state.deliveries if d["id"] == int(id)), None)
    if found is None:
        return 404, {}, {"message": "Not Found"}
    s.state.redelivered.append(int(id))
    return 202, {}, {}


def git_sha(content: bytes) -> str:
    return hashlib.sha1(b"blob %d\0" % len(content) + content).hexdigest()


def get_contents(s: StandIn, req: Request, repo: str, path: str) -> Answer:
    """A file or a folder listing at the default branch.
    https://docs.github.com/en/rest/repos/contents#get-repository-content"""
    files = s.state.files.get(repo, {})
    path = path.strip("/")
    if path in files:
        content = files[path]
        return 200, {}, {"type": "file", "name": path.rsplit("/", 1)[-1], "path": path, "sha": git_sha(content),
                         "size": len(content), "encoding": "base64", "content": base64.b64encode(content).decode()}
    entries: dict[str, dict[str, Any]] = {}
    for name, content in files.items():
        if name.startswith(path + "/"):
            rest = name[len(path) + 1:]
            child = rest.split("/", 1)[0]
            is_dir = "/" in rest
            entries[child] = {"type": "dir" if is_dir else "file", "name": child, "path": f"{path}/{child}",
                              "sha": "0" * 40 if is_dir else git_sha(content), "size": 0 if is_dir else len(content)}
    if not entries:
        return 404, {}, {"message": "Not Found"}
    listing = sorted(entries.values(), key=lambda e: e["name"])
    etag = f'"{hashlib.sha1(repr(listing).encode()).hexdigest()}"'
    if req.headers.get("if-none-match") == etag:
        return 304, {"ETag": etag}, None
    return 200, {"ETag": etag}, listing


def get_blob(s: StandIn, req: Request, repo: str, sha: str) -> Answer:
    """https://docs.github.com/en/rest/git/blobs#get-a-blob"""
    for content in s.state.files.get(repo, {}).values():
        if git_sha(content) == sha:
            return 200, {}, {"sha": sha, "size": len(content), "encoding": "base64",
                             "content": base64.b64encode(content).decode()}
    return 404, {}, {"message": "Not Found"}


def graphql(s: StandIn, req: Request) -> Answer:
    query, v = req.body["query"], req.body.get("variables", {})
    if "issueOrPullRequest" in query:
        return 200, {}, _read_issue(s, v)
    if "viewer { login }" in query:
        return 200, {}, {"data": {"viewer": {"login": s.state.viewer}}}
    if "transferIssue" in query:
        return 200, {}, _transfer(s, v["issueId"], v["repositoryId"])
    if "updateSubscription" in query:
        key = _by_node(s, v["id"])
        s.state.subscriptions[key] = v["state"]
        return 200, {}, {"data": {"updateSubscription": {"subscribable": {"viewerSubscription": v["state"]}}}}
    repo = f"{v['owner']}/{v['name']}"
    issue = s.state.issues.get((repo, int(v["number"])))
    if issue is None:
        return 200, {}, {"data": None, "errors": [{"type": "NOT_FOUND", "message": "Could not resolve to an Issue"}]}
    data: dict[str, Any] = {"repository": {"issue": {
        "id": issue["node_id"],
        "viewerSubscription": s.state.subscriptions.get((repo, issue["number"]), "UNSUBSCRIBED")}}}
    if "target" in query:
        data["target"] = {"id": f"R_{v['toOwner']}/{v['toName']}"}
    return 200, {}, {"data": data}


def _read_issue(s: StandIn, v: dict[str, Any]) -> dict[str, Any]:
    """GitHub's answer to the one-call issue read: issue, labels, state, comments, latest release
    (a transferred number resolves to the issue where it lives now, as on GitHub)."""
    repo, number = f"{v['owner']}/{v['name']}", int(v["number"])
    where = s.state.moved.get((repo, number), (repo, number))
    issue = s.state.issues.get(where)
    if issue is None:
        return {"data": {"repository": {"issueOrPullRequest": None}},
                "errors": [{"type": "NOT_FOUND", "path": ["repository", "issueOrPullRequest"],
                            "message": f"Could not resolve to an issue or pull request with the number of {number}."}]}
    tag = s.state.releases.get(repo)
    release = {"tagName": tag} if tag else None
    if issue.get("pull_request"):
        return {"data": {"repository": {"latestRelease": release,
                                        "issueOrPullRequest": {"__typename": "PullRequest", "number": number}}}}
    comments = s.state.comments.get(where, [])
    start = int(v["after"]) if v.get("after") else 0
    page = comments[start:start + 100]
    user = issue.get("user") or {}
    node = {
        "__typename": "Issue", "number": where[1], "title": issue["title"], "body": issue["body"] or "",
        "state": issue["state"].upper(), "createdAt": issue["created_at"], "locked": issue.get("locked", False),
        "authorAssociation": issue.get("author_association", "NONE"),
        "author": {"login": user.get("login", "")} if user else None,
        "repository": {"nameWithOwner": where[0]},
        "labels": {"nodes": [{"name": label["name"]} for label in issue["labels"]],
                   "pageInfo": {"hasNextPage": False}},
        "comments": {"totalCount": len(comments),
                     "nodes": [{"body": c["body"], "createdAt": c["created_at"],
                                "authorAssociation": c.get("author_association", "NONE"),
                                "viewerDidAuthor": c["user"]["login"] == s.state.viewer,
                                "author": {"login": c["user"]["login"]}} for c in page],
                     "pageInfo": {"hasNextPage": start + 100 < len(comments),
                                  "endCursor": str(start + 100)}},
    }
    return {"data": {"repository": {"latestRelease": release, "issueOrPullRequest": node}}}


def _by_node(s: StandIn, node: str) -> tuple[str, int]:
    return next(k for k, i in s.state.issues.items() if i["node_id"] == node)


def _transfer(s: StandIn, issue_id: str, repo_id: str) -> dict[str, Any]:
    old = _by_node(s, issue_id)
    target = repo_id.removeprefix("R_")
    number = 1 + max((n for (r, n) in s.state.issues if r == target), default=0)
    issue = s.state.issues.pop(old)
    s.state.add_issue(target, number, issue["title"], issue["body"], author=issue["user"]["login"])
    s.state.comments[(target, number)] = s.state.comments.pop(old)
    s.state.moved[old] = (target, number)
    moved = s.state.issues[(target, number)]
    return {"data": {"transferIssue": {"issue": {
        "number": number, "url": f"https://github.com/{target}/issues/{number}", "state": "OPEN",
        "labels": {"nodes": [{"name": label["name"]} for label in moved["labels"]]},
        "repository": {"nameWithOwner": target}}}}}


R = r"/repos/(?P<repo>[^/]+/[^/]+)"
ROUTES = [
    ("GET", ISSUE, get_issue),
    ("PATCH", ISSUE, patch_issue),
    ("GET", ISSUE + "/comments", list_comments),
    ("POST", ISSUE + "/comments", post_comment),
    ("POST", ISSUE + "/labels", add_labels),
    ("GET", ISSUE + "/events", list_events),
    ("GET", R + "/labels", list_labels),
    ("POST", R + "/labels", create_label),
    ("PATCH", R + "/labels/(?P<name>.+)", update_label),
    ("GET", R + "/issues", list_issues),
    ("GET", R + "/releases/latest", latest_release),
    ("GET", R + "/collaborators/(?P<user>[^/]+)", collaborator),
    ("GET", R + "/installation", installation),
    ("GET", "/search/issues", search),
    ("POST", r"/app/installations/(?P<inst>\d+)/access_tokens", access_token),
    ("GET", "/app/installations", list_installations),
    ("GET", "/installation/repositories", list_installation_repos),
    ("GET", "/app/hook/deliveries", list_deliveries),
    ("POST", r"/app/hook/deliveries/(?P<id>\d+)/attempts", redeliver),
    ("GET", R + "/contents/(?P<path>.*)", get_contents),
    ("GET", R + "/git/blobs/(?P<sha>[0-9a-f]{40})", get_blob),
    ("POST", "/graphql", graphql),
]
