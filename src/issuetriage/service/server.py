"""Serving the ASGI app under uvicorn, bounded in time and in connections, so slow clients cannot
starve signed deliveries.

uvicorn alone leaves a connection open for as long as its client keeps sending a byte now and
then: its keep-alive timer is reset by every byte received, it has no deadline for a request to
arrive (encode/uvicorn#157), and `limit_concurrency` answers 503 to everyone once slow clients
fill it. So 1,100 slow connections under a 1,024 open-files limit made every signed delivery time
out. Here, on uvicorn's own h11 protocol:

* a request must arrive whole (request line, headers and body) within `request_timeout` seconds
  of the connection opening, or of the previous response on a kept-alive connection; otherwise
  the connection is answered 408 and closed;
* at most `max_connections` are open: the one more that a new connection would make closes the
  connection that has waited longest for its request (a slow or idle one; a request being
  answered is never cut), so a newcomer that sends its request at once is served however many
  slow clients there are, and file descriptors never run out;
* headers are at most `max_header_bytes` (h11 answers 400 beyond); the webhook's body has its own
  limit (receiver.MAX_BODY, 413).

The socket is bound before anything else is set up, so a busy port is one line and no files.
"""

from __future__ import annotations

import errno
import resource
import socket
from collections import Counter, OrderedDict
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from issuetriage.errors import UserError

if TYPE_CHECKING:
    import asyncio

REQUEST_TIMEOUT = 10.0  # seconds; GitHub waits 10 s for the whole answer, and sends its request in milliseconds
MAX_CONNECTIONS = 256
MAX_HEADER_BYTES = 16 * 1024
KEEP_ALIVE = 5  # seconds a kept-alive connection may sit idle (uvicorn's timer)
_TIMED_OUT = b"HTTP/1.1 408 Request Timeout\r\nconnection: close\r\ncontent-length: 0\r\n\r\n"
_UNAVAILABLE = b"HTTP/1.1 503 Service Unavailable\r\nconnection: close\r\ncontent-length: 0\r\n\r\n"


@dataclass(frozen=True)
class Limits:
    """How long a request may take to arrive, and how many connections may be open at once."""

    request_timeout: float = REQUEST_TIMEOUT
    max_connections: int = MAX_CONNECTIONS
    max_header_bytes: int = MAX_HEADER_BYTES

    def within_open_files(self) -> Limits:
        """At most half the process's open-files limit, the rest left to the store, the queue and
        the workers' GitHub connections."""
        soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
        if soft == resource.RLIM_INFINITY:
            return self
        return Limits(self.request_timeout, max(1, min(self.max_connections, soft // 2)), self.max_header_bytes)


def bind(host: str, port: int) -> socket.socket:
    """A listening socket on host:port (port 0: any free one); a one-line UserError when it cannot be had."""
    try:
        family, kind, proto, _, address = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM,
                                                             flags=socket.AI_PASSIVE)[0]
        sock = socket.socket(family, kind, proto)
    except OSError as exc:
        raise UserError(f"--host {host}: cannot listen there ({exc.strerror or exc})") from None
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as uvicorn does: restarts reuse the port
        sock.bind(address)
        sock.listen(2048)
    except OSError as exc:
        sock.close()
        if exc.errno == errno.EADDRINUSE:
            raise UserError(f"port {port} on {host} is in use (another serve?): stop it or pick "
                            "another --port") from None
        raise UserError(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from None
    return sock


def where(sock: socket.socket) -> str:
    """`http://HOST:PORT` of a bound socket (the port it got when asked for 0)."""
    host, port = sock.getsockname()[:2]
    return f"http://{f'[{host}]' if ':' in host else host}:{port}"


def run(app: Any, sock: socket.socket, limits: Limits, cut: Counter[str] | None = None) -> None:
    """Serve `app` on `sock` until SIGINT or SIGTERM; `cut` counts the connections closed by the
    limits, by reason (timeout, evicted, refused)."""
    import uvicorn

    config = uvicorn.Config(app, http=bounded_protocol(limits, Counter() if cut is None else cut),
                            timeout_keep_alive=KEEP_ALIVE, h11_max_incomplete_event_size=limits.max_header_bytes,
                            log_level="warning", log_config=None)
    uvicorn.Server(config).run(sockets=[sock])


def bounded_protocol(limits: Limits, cut: Counter[str]) -> type[asyncio.Protocol]:
    """uvicorn's h11 protocol with a deadline per request and a cap on open connections; every
    connection of one server shares `waiting` (one event loop, so no lock)."""
    import h11
    from uvicorn.protocols.http.h11_impl import H11Protocol

    waiting: OrderedDict[Bounded, None] = OrderedDict()  # awaiting (the rest of) a request, oldest first

    class Bounded(H11Protocol):
        deadline: asyncio.TimerHandle | None = None

        def connection_made(self, transport: asyncio.BaseTransport) -> None:
            super().connection_made(transport)  # type: ignore[arg-type]
            if sum(not c.transport.is_closing() for c in self.connections) > limits.max_connections:
                oldest = next(iter(waiting), None)
                if oldest is None:  # every other connection is being answered: this one waits for none
                    self.close_with(_UNAVAILABLE, "refused")
                    return
                oldest.close_with(_TIMED_OUT, "evicted")
            self.track()

        def data_received(self, data: bytes) -> None:
            super().data_received(data)
            self.track()

        def on_response_complete(self) -> None:
            super().on_response_complete()
            self.track()

        def connection_lost(self, exc: Exception | None) -> None:
            self.stop_waiting()
            super().connection_lost(exc)

        def track(self) -> None:
            """Start the deadline when a request is due (kept from the first byte on, never reset);
            stop it once the request is whole, or the connection closing."""
            if self.transport.is_closing() or self.conn.their_state not in (h11.IDLE, h11.SEND_BODY):
                self.stop_waiting()
            elif self.deadline is None:
                waiting[self] = None
                self.deadline = self.loop.call_later(limits.request_timeout, self.close_with, _TIMED_OUT, "timeout")

        def stop_waiting(self) -> None:
            waiting.pop(self, None)
            if self.deadline is not None:
                self.deadline.cancel()
                self.deadline = None

        def close_with(self, answer: bytes, reason: str) -> None:
            """Answer (unless a response has begun) and close; the app, if reading the body, sees a disconnect."""
            self.stop_waiting()
            cut[reason] += 1
            if self.conn.our_state is h11.IDLE and not self.transport.is_closing():
                self.transport.write(answer)
            self.transport.close()

    return Bounded
