"""A GitHub stand-in on loopback: issues, comments and labels held as state, answering the REST
and GraphQL calls issuetriage makes with payloads shaped like GitHub's (tests/github/samples/).

Faults are scripted per route: a status with headers for the next N matching requests, or a
dropped connection. Every request is logged, so tests count calls exactly.
"""

from __future__ import annotations

import copy
import json
import re
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit

SAMPLES = Path(__file__).parent / "samples"
TOKEN = "ghp_standinTOKEN0123456789abcdefghijklmn"
API = "https://api.github.com"


def sample(name: str) -> dict[str, Any]:
    return json.loads((SAMPLES / f"{name}.json").read_text())


@dataclass
class Fault:
    method: str
    path: str  # regular expression matched against the path (no query)
    status: int = 500
    headers: dict[str, str] = field(default_factory=dict)
    body: dict[str, Any] = field(default_factory=lambda: {"message": "Server Error"})
    times: int = 1
    drop: bool = False


@dataclass
class Request:
    method: str
    path: str
    query: dict[str, list[str]]
    body: Any
    headers: dict[str, str]
    rate: dict[str, str] | None = None  # the rate-limit headers its answer carries

    @property
    def is_write(self) -> bool:
        if self.method == "POST" and self.path == "/graphql":
            return "mutation" in str(self.body.get("query", ""))
        return self.method in {"POST", "PATCH", "PUT", "DELETE"} and "access_tokens" not in self.path


@dataclass
class RateWindow:
    """One installation's scripted budget: `remaining` calls until `reset`; then the next of
    `refills` (remaining, reset), else `limit` calls for another hour. A call past the budget
    gets GitHub's primary rate-limit 403."""

    remaining: int
    reset: float
    limit: int = 5000
    refills: list[tuple[int, float]] = field(default_factory=list)

    def spend(self, now: float, resource: str = "core") -> dict[str, str] | None:
        """The answer's headers after one call, or None when the budget is spent."""
        if now >= self.reset:
            self.remaining, self.reset = self.refills.pop(0) if self.refills else (self.limit, self.reset + 3600)
        if self.remaining <= 0:
            return None
        self.remaining -= 1
        return self.headers(resource)

    def headers(self, resource: str = "core") -> dict[str, str]:
        return {"x-ratelimit-limit": str(self.limit), "x-ratelimit-remaining": str(self.remaining),
                "x-ratelimit-reset": str(int(self.reset)), "x-ratelimit-resource": resource}


class State:
    """Repositories' issues, comments, labels, collaborators and subscriptions."""

    def __init__(self) -> None:
        self.issues: dict[tuple[str, int], dict[str, Any]] = {}
        self.comments: dict[tuple[str, int], list[dict[str, Any]]] = {}
        self.labels: dict[str, dict[str, dict[str, Any]]] = {}
        self.releases: dict[str, str] = {}
        self.collaborators: set[tuple[str, str]] = set()
        self.subscriptions: dict[tuple[str, int], str] = {}
        self.moved: dict[tuple[str, int], tuple[str, int]] = {}
        self.viewer = "issuetriage-bot"
        self.clock = 0
        self.events: dict[tuple[str, int], list[dict[str, Any]]] = {}
        self.installations: dict[str, int] = {}  # repo → installation (none set: every repo on 4242)
        self.files: dict[str, dict[str, bytes]] = {}  # repo → path → content at the default branch
        self.deliveries: list[dict[str, Any]] = []  # the App's webhook deliveries, newest first
        self.redelivered: list[int] = []

    def tick(self) -> str:
        self.clock += 1
        return f"2026-02-01T00:{self.clock // 60 % 60:02d}:{self.clock % 60:02d}Z"

    def label(self, repo: str, name: str, color: str = "ededed", description: str = "") -> dict[str, Any]:
        found = self.labels.setdefault(repo, {}).get(name)
        if found is None:
            found = {**sample("label"), "name": name, "color": color, "description": description,
                     "default": False, "url": f"{API}/repos/{repo}/labels/{name}"}
            self.labels[repo][name] = found
        return found

    def add_issue(self, repo: str, number: int, title: str, body: str, labels: tuple[str, ...] = (),
                  author: str = "reporter", state: str = "open", comments: tuple[str, ...] = ()) -> None:
        data = sample("issue")
        data.update(number=number, title=title, body=body, state=state,
                    url=f"{API}/repos/{repo}/issues/{number}",
                    repository_url=f"{API}/repos/{repo}",
                    html_url=f"https://github.com/{repo}/issues/{number}",
                    node_id=f"I_{repo.replace('/', '_')}_{number}")
        data["user"] = {**data["user"], "login": author}
        data["labels"] = [self.label(repo, name) for name in labels]
        self.issues[(repo, number)] = data
        self.comments[(repo, number)] = []
        for text in comments:
            self.add_comment(repo, number, text, "commenter")

    def add_comment(self, repo: str, number: int, body: str, author: str) -> dict[str, Any]:
        items = self.comments[(repo, number)]
        data = {**sample("comment"), "id": 2000000 + sum(len(c) for c in self.comments.values()) + 1,
                "body": body, "issue_url": f"{API}/repos/{repo}/issues/{number}",
                "created_at": self.tick()}
        data["user"] = {**data["user"], "login": author}
        items.append(data)
        self.issues[(repo, number)]["comments"] = len(items)
        self.issues[(repo, number)]["updated_at"] = data["created_at"]
        return data

    def add_event(self, repo: str, number: int, event: str, actor: str, label: str | None = None,
                  created_at: str | None = None) -> dict[str, Any]:
        """Record an issue event as GitHub's events API shows it (labeled, unlabeled, closed,
        reopened); only records it: the caller changes the issue itself."""
        items = self.events.setdefault((repo, number), [])
        data: dict[str, Any] = {
            "id": 9000000 + sum(len(e) for e in self.events.values()) + 1,
            "node_id": "LE_x", "url": f"{API}/repos/{repo}/issues/events/1", "event": event,
            "actor": {"login": actor, "type": "User"}, "commit_id": None, "commit_url": None,
            "created_at": created_at or self.tick()}
        if label is not None:
            data["label"] = {"name": label, "color": "ededed"}
        items.append(data)
        return data

    def human_labels(self, repo: str, number: int, names: tuple[str, ...], actor: str,
                     created_at: str | None = None) -> None:
        """A person adds labels on the website: the labels and their `labeled` events."""
        issue = self.issues[(repo, number)]
        for name in names:
            if name not in self.label_names(repo, number):
                issue["labels"].append(self.label(repo, name))
                self.add_event(repo, number, "labeled", actor, name, created_at)
        issue["updated_at"] = created_at or self.tick()

    def label_names(self, repo: str, number: int) -> list[str]:
        return [label["name"] for label in self.issues[(repo, number)]["labels"]]


class StandIn:
    """The server: start with `with StandIn() as gh:`; point GITHUB_API_URL at `gh.url`."""

    def __init__(self, token: str = TOKEN) -> None:
        self.state = State()
        self.token = token
        self.accepted_tokens = {token}
        self.faults: list[Fault] = []
        self.log: list[Request] = []
        self.jwt_check: Any = None
        self.ignore_writes = False  # answer writes with success but change nothing (a lying API)
        self.now: Callable[[], float] = time.time  # tests share their fake clock for token expiry
        self.token_ttl = 3600.0
        self.minted: dict[str, int] = {}  # installation token → installation
        self.rates: dict[int, RateWindow] = {}  # installation → scripted budget
        self._lock = threading.Lock()
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"

    def __enter__(self) -> StandIn:
        threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.01}, daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()

    def env(self, **extra: str) -> dict[str, str]:
        return {"GITHUB_API_URL": self.url, "GITHUB_GRAPHQL_URL": f"{self.url}/graphql",
                "GITHUB_TOKEN": self.token, **extra}

    @property
    def writes(self) -> list[Request]:
        return [r for r in self.log if r.is_write]

    def reset_log(self) -> None:
        self.log.clear()

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        standin = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:
                pass

            def _serve(self) -> None:
                split = urlsplit(self.path)
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
                body = json.loads(raw) if raw else None
                req = Request(self.command, unquote(split.path), parse_qs(split.query), body,
                              {k.lower(): v for k, v in self.headers.items()})
                with standin._lock:
                    standin.log.append(req)
                    answer = standin._fault(req) or standin._auth(req) or standin._rate(req) or standin._route(req)
                    rate = req.rate or {}
                if answer == "drop":
                    self.close_connection = True
                    self.connection.shutdown(2)
                    return
                status, headers, payload = answer
                data = b"" if payload is None else json.dumps(payload).encode()
                self.send_response(status)
                for key, value in {"Content-Type": "application/json", **rate, **headers}.items():
                    self.send_header(key, value)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            do_GET = do_POST = do_PATCH = do_PUT = do_DELETE = _serve

        return Handler

    def _fault(self, req: Request) -> Any:
        for fault in self.faults:
            if fault.times > 0 and fault.method == req.method and re.fullmatch(fault.path, req.path):
                fault.times -= 1
                return "drop" if fault.drop else (fault.status, fault.headers, fault.body)
        return None

    def _auth(self, req: Request) -> Any:
        scheme, _, value = req.headers.get("authorization", "").partition(" ")
        if req.path.startswith("/app/") or req.path.endswith("/installation"):
            if scheme.lower() == "bearer" and self.jwt_check and self.jwt_check(value):
                return None
            return 401, {}, {"message": "A JSON web token could not be decoded"}
        if scheme.lower() in {"token", "bearer"} and value in self.accepted_tokens:
            return None
        return 401, {}, {"message": "Bad credentials"}

    def _window(self, req: Request) -> RateWindow | None:
        token = req.headers.get("authorization", "").partition(" ")[2]
        installation = self.minted.get(token)
        return None if installation is None else self.rates.get(installation)

    def _rate(self, req: Request) -> Any:
        """Spend one call from the installation's scripted budget; past it, the primary limit."""
        window = self._window(req)
        if window is None:
            return None
        resource = "graphql" if req.path == "/graphql" else "core"
        req.rate = window.spend(self.now(), resource)
        if req.rate is None:
            return 403, window.headers(resource), {"message": "API rate limit exceeded for installation."}
        return None

    def _route(self, req: Request) -> Any:
        from standin_routes import route
        if self.ignore_writes and req.is_write:
            saved = copy.deepcopy(self.state.__dict__)
            answer = route(self, req)
            self.state.__dict__ = saved
            return answer
        return route(self, req)
