"""A Starlette app over the store: the review queue, each plan with its trace and judge,
approve / edit / reject, and the report. Pages render through autoescaped Jinja2 templates;
every POST carries the per-process CSRF token; approvals run the one flow (`act/review.py`) through
the app's applier: GitHub in service mode, else the local store.

The process keeps no state but its token: the store holds the queue and every decision."""

from __future__ import annotations

import ipaddress
import secrets
from collections.abc import Awaitable, Callable
from pathlib import Path

from issuetriage.act.applier import Applier
from issuetriage.act.review import approve as approve_plan
from issuetriage.act.review import reject as reject_plan
from issuetriage.errors import TriageError, UserError

try:
    from starlette.applications import Starlette
    from starlette.middleware import Middleware
    from starlette.middleware.trustedhost import TrustedHostMiddleware
    from starlette.requests import Request
    from starlette.responses import HTMLResponse, RedirectResponse, Response
    from starlette.routing import Route

    from issuetriage.web.framing import Unframed
except ImportError:  # pragma: no cover - depends on the installed extras
    raise UserError("the review app needs starlette: pip install 'issuetriage[service]'") from None
from issuetriage.live import review
from issuetriage.live.outcomes import check_profile
from issuetriage.policy import Policy
from issuetriage.report import data, html
from issuetriage.store.applier import StoreApplier
from issuetriage.store.sqlite import Store

AppliesTo = Callable[[Store], Applier]  # where an approved plan is written, given the request's store
LOCAL_HOSTS = ["127.0.0.1", "localhost", "::1", "[::1]"]


def check_bind(host: str, allow_remote: bool) -> None:
    """Refuse a non-loopback address unless explicitly allowed: the app has no login."""
    try:
        local = host == "localhost" or ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        local = False
    if not local and not allow_remote:
        raise UserError(f"--host {host}: not a loopback address; the review app has no login "
                        "(pass --allow-remote to bind it anyway)")


def create_app(store_path: str | Path, policy: Policy, reviewer: str = "local",
               allowed_hosts: list[str] | None = None, token: str | None = None,
               applies_to: AppliesTo = StoreApplier) -> Starlette:
    """The app; `allowed_hosts` guards against DNS rebinding (default: loopback names only);
    `applies_to` gives the applier approvals write through (default: the local store)."""
    csrf = token or secrets.token_urlsafe(32)
    with Store(store_path, create=False) as db:  # fail now, not on the first request
        check_profile(db, policy, policy.meta.repo)

    def web(request: Request | None = None) -> dict[str, str]:
        return {"csrf": csrf, "message": request.query_params.get("m", "") if request else ""}

    def with_store(handler: Callable[[Request, Store], Response]) -> Callable[[Request], Awaitable[Response]]:
        async def endpoint(request: Request) -> Response:
            if request.method == "POST":
                form = await request.form()
                if not secrets.compare_digest(str(form.get("csrf", "")), csrf):
                    return _error("missing or wrong CSRF token", 403)
                request.state.form = form
            try:
                with Store(store_path, create=False) as db:
                    return handler(request, db)
            except TriageError as exc:
                return _error(str(exc), 400)
        return endpoint

    def queue_page(request: Request, db: Store) -> Response:
        items = review.queue(db, policy)
        return HTMLResponse(html.page("queue.html", items=items, web=web(request), repo=policy.meta.repo))

    def plan_page(request: Request, db: Store) -> Response:
        item = review.pending(db, policy, _audit_id(request))
        return HTMLResponse(html.page("plan.html", item=item, web=web()))

    def approve(request: Request, db: Store) -> Response:
        form = request.state.form
        edited = form.get("labels")
        labels = None if edited is None else tuple(x.strip() for x in str(edited).split(",") if x.strip())
        result = approve_plan(applies_to(db), db, policy, _audit_id(request), reviewer, labels)
        return _done(result.describe())

    def reject(request: Request, db: Store) -> Response:
        reject_plan(db, policy, _audit_id(request), reviewer, str(request.state.form.get("note", "")))
        return _done("rejected; recorded as a correction")

    def report_page(request: Request, db: Store) -> Response:
        return HTMLResponse(html.render(data.build(db, policy), web=web()))

    routes = [Route("/", with_store(queue_page)), Route("/report", with_store(report_page)),
              Route("/plan/{audit_id:int}", with_store(plan_page)),
              Route("/plan/{audit_id:int}/approve", with_store(approve), methods=["POST"]),
              Route("/plan/{audit_id:int}/reject", with_store(reject), methods=["POST"])]
    middleware = [Middleware(TrustedHostMiddleware, allowed_hosts=allowed_hosts or LOCAL_HOSTS)]
    return Unframed(routes=routes, middleware=middleware)  # no page may be framed (clickjacking)


def _audit_id(request: Request) -> int:
    return int(request.path_params["audit_id"])


def _done(message: str) -> Response:
    from urllib.parse import urlencode
    return RedirectResponse("/?" + urlencode({"m": message}), status_code=303)


def _error(message: str, status: int) -> Response:
    return HTMLResponse(html.page("error.html", message=message, web={}), status_code=status)
