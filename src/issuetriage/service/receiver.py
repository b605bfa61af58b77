"""`POST /webhook`, `/healthz` and `/metrics`: the receiver answers each delivery within
milliseconds and does no triage itself.

    bounded read (413) → signature (401) → JSON (400) → what it asks for (204 when nothing)
    → the resolver accepts the repository (422) → recorded in the store by delivery id
    → enqueued (coalesced per issue) → 202; a delivery id seen before → 200, nothing again.

A refused delivery writes nothing and enqueues nothing."""

from __future__ import annotations

import hashlib
import hmac
import json
import logging
import time
from collections import Counter
from dataclasses import dataclass, field

from starlette.requests import ClientDisconnect, Request
from starlette.responses import JSONResponse, PlainTextResponse, Response
from starlette.routing import Route

from issuetriage.errors import ConfigError, TriageError
from issuetriage.service.events import INSTALLATION, LABEL, BadPayload, Work, classify
from issuetriage.service.jobs import Jobs
from issuetriage.service.metrics import render

MAX_BODY = 1024 * 1024  # bytes; issue payloads are tens of kilobytes
log = logging.getLogger("issuetriage.service")


@dataclass
class Receiver:
    """The webhook endpoint over a store and a queue; `secrets`: the current webhook secret and,
    while it is being rotated, the previous one."""

    secrets: tuple[bytes, ...]
    jobs: Jobs
    max_body: int = MAX_BODY
    counts: Counter[str] = field(default_factory=Counter)
    cut: Counter[str] = field(default_factory=Counter)  # connections the server closed (server.py), by reason

    def routes(self) -> list[Route]:
        return [Route("/webhook", self.webhook, methods=["POST"]),
                Route("/healthz", self.healthz), Route("/metrics", self.metrics)]

    async def webhook(self, request: Request) -> Response:
        start = time.perf_counter()
        status, outcome, message = await self._handle(request)
        self.counts[outcome] += 1
        log.info("delivery", extra={"delivery": request.headers.get("x-github-delivery", ""), "status": status,
                                    "event": request.headers.get("x-github-event", ""), "outcome": outcome,
                                    "ms": round(1000 * (time.perf_counter() - start), 2)})
        if status == 204:
            return Response(status_code=204)
        return JSONResponse({"outcome": outcome, "message": message}, status_code=status)

    async def _handle(self, request: Request) -> tuple[int, str, str]:
        try:
            body = await _read_bounded(request, self.max_body)
        except ClientDisconnect:  # gone, or cut off by the server's deadline (server.py): nothing to answer
            return 408, "disconnected", "the body did not arrive"
        if body is None:
            return 413, "too_large", f"the body is over {self.max_body} bytes"
        problem = check_signature(self.secrets, body, request.headers.get("x-hub-signature-256"))
        if problem:
            return 401, "unauthorized", problem
        delivery = request.headers.get("x-github-delivery", "").strip()
        event = request.headers.get("x-github-event", "").strip()
        if not delivery or not event or len(delivery) > 100:
            return 400, "malformed", "X-GitHub-Delivery and X-GitHub-Event are required"
        try:
            work = classify(event, json.loads(body))
        except (ValueError, RecursionError) as exc:  # BadPayload is a ValueError, as is bad JSON
            return 400, "malformed", str(exc).splitlines()[0][:200] if isinstance(exc, BadPayload) else "not JSON"
        if work.kind is None:
            return 204, "ignored", ""
        if work.repo is not None and self.jobs.resolver is not None:
            reason = self.jobs.resolver.accepts(work.repo, work.installation)
            if reason:
                return 422, "refused", reason
        try:
            return self._record(delivery, work, body)
        except TriageError as exc:  # the store is down: GitHub shows the failure; redeliver later
            return 503, "unavailable", str(exc)

    def _record(self, delivery: str, work: Work, body: bytes) -> tuple[int, str, str]:
        store = self.jobs.store(record=True)
        with store.transaction():
            fresh = store.add_delivery(delivery, work.event, work.action, work.repo, work.number,
                                       work.installation, work.job, time.time())
            if fresh and work.kind == LABEL and work.repo and work.number and work.label is not None:
                store.add_label_event(work.repo, work.number, _event_id(delivery), work.action,
                                      work.label, work.sender, work.at)
        if fresh and work.kind == INSTALLATION and self.jobs.resolver is not None:
            self.jobs.resolver.installation_changed(work.event, json.loads(body))
        if not fresh:  # recorded work is enqueued already, or by `recover` when the receiver restarts
            return 200, "duplicate", "this delivery id was received before"
        if work.job and work.repo and work.number:
            queued = self.jobs.submit(work.job, work.repo, work.number, work.installation)
            return 202, "enqueued" if queued else "coalesced", ""
        return 202, "recorded", ""

    async def healthz(self, request: Request) -> Response:
        self.jobs.store().delivery_stats()
        len(self.jobs.huey)
        return PlainTextResponse("ok\n")

    async def metrics(self, request: Request) -> Response:
        return PlainTextResponse(render(self.jobs, self.counts, self.cut), media_type="text/plain; version=0.0.4")


def check_signature(secrets: tuple[bytes, ...], body: bytes, header: str | None) -> str | None:
    """Why `header` does not sign `body` with one of `secrets` (None: it does), in constant time.
    https://docs.github.com/en/webhooks/using-webhooks/validating-webhook-deliveries"""
    if not header:
        return "X-Hub-Signature-256 is missing"
    algorithm, _, given = header.partition("=")
    if algorithm != "sha256" or not given:
        return "X-Hub-Signature-256 must be sha256=HEX"
    good = [hmac.compare_digest("sha256=" + hmac.new(s, body, hashlib.sha256).hexdigest(), header)
            for s in secrets]
    return None if any(good) else "the signature does not match"


async def _read_bounded(request: Request, limit: int) -> bytes | None:
    """The body, or None as soon as it passes `limit` (Content-Length is only a first check)."""
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > limit:
        return None
    chunks, size = [], 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            return None
        chunks.append(chunk)
    return b"".join(chunks)


def _event_id(delivery: str) -> int:
    """A label event id for a webhook delivery: negative, so it never meets the events API's ids."""
    return -int(hashlib.sha256(delivery.encode()).hexdigest()[:15], 16)


def settings_secrets(current: str | None, previous: str | None) -> tuple[bytes, ...]:
    """The secrets the receiver accepts; a clear error when there is none."""

    if not current:
        raise ConfigError("GITHUB_WEBHOOK_SECRET is not set: the receiver refuses to start without "
                          "it (it never accepts unsigned deliveries)")
    return tuple(s.encode() for s in (current, previous) if s)


