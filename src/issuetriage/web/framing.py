"""No page of ours may be framed by another site: a framed review page lets a hostile page steer a
maintainer's click onto Approve or Reject (clickjacking). Every response, errors included, says so
twice: CSP `frame-ancestors 'none'` for current browsers, `X-Frame-Options: DENY` for older ones.
https://developer.mozilla.org/en-US/docs/Web/HTTP/Headers/Content-Security-Policy/frame-ancestors"""

from __future__ import annotations

from starlette.applications import Starlette
from starlette.types import ASGIApp, Message, Receive, Scope, Send

FRAMING = ((b"content-security-policy", b"frame-ancestors 'none'"), (b"x-frame-options", b"DENY"))


class Unframed(Starlette):
    """A Starlette app whose every response forbids framing; wrapped outside Starlette's own error
    middleware, so a 500, a 404 and a refused Host carry the headers too."""

    def build_middleware_stack(self) -> ASGIApp:
        return no_framing(super().build_middleware_stack())


def no_framing(app: ASGIApp) -> ASGIApp:
    """`app` with the framing headers added to each response that lacks them."""

    async def framed(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await app(scope, receive, send)
            return

        async def send_framed(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = list(message.get("headers", []))
                present = {name.lower() for name, _ in headers}
                message = {**message, "headers": headers + [h for h in FRAMING if h[0] not in present]}
            await send(message)

        await app(scope, receive, send_framed)

    return framed
