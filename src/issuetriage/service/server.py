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
* at most `max_connections` are open: at the limit, accepting one more first closes the
  connection that has waited longest for its request (a slow or idle one; a request being
  answered is never cut), so a newcomer that sends its request at once is served however many
  slow clients there are, and file descriptors never run out (`Gate`);
* headers are at most `max_header_bytes` (h11 answers 400 beyond); the webhook's body has its own
  limit (receiver.MAX_BODY, 413).

The socket is bound before anything else is set up, so a busy port is one line and no files.
"""

from __future__ import annotations

import errno
from collections import Counter, OrderedDict
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from issuetriage.errors import UserError

if TYPE_CHECKING:  # imported where used: every command loads this module's defaults
    import asyncio
    import socket

REQUEST_TIMEOUT = 10.0  # seconds; GitHub waits 10 s for the whole answer, and sends its request in milliseconds
MAX_CONNECTIONS = 1024
MAX_HEADER_BYTES = 16 * 1024
KEEP_ALIVE = 5  # seconds a kept-alive connection may sit idle (uvicorn's timer)
_TIMED_OUT = b"HTTP/1.1 408 Request Timeout\r\nconnection: close\r\ncontent-length: 0\r\n\r\n"


@dataclass(frozen=True)
class Limits:
    """How long a request may take to arrive, and how many connections may be open at once."""

    request_timeout: float = REQUEST_TIMEOUT
    max_connections: int = MAX_CONNECTIONS
    max_header_bytes: int = MAX_HEADER_BYTES

    def within_open_files(self) -> Limits:
        """At most half the process's open-files limit, the rest left to the store, the queue and
        the workers' GitHub connections; the soft limit is raised first, as far as the hard limit
        allows, to twice the connections asked for (as Go's runtime does for every program)."""
        import resource

        soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        wanted = 2 * self.max_connections
        if soft != resource.RLIM_INFINITY and soft < wanted:
            soft = wanted if hard == resource.RLIM_INFINITY else min(wanted, hard)
            resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
        if soft == resource.RLIM_INFINITY:
            return self
        return Limits(self.request_timeout, max(1, min(self.max_connections, soft // 2)), self.max_header_bytes)


def bind(host: str, port: int) -> socket.socket:
    """A listening socket on host:port (port 0: any free one); a one-line UserError when it cannot be had."""
    import socket

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
    limits, by reason (timeout, evicted)."""
    import uvicorn

    gate = Gate(limits, Counter() if cut is None else cut)
    # asyncio's loop (uvloop accepts in C, past the gate), h11, and no WebSocket upgrade: the
    # service has no WebSocket route, and an upgraded connection would leave the gate's count
    config = uvicorn.Config(app, http=gate.protocol(), loop="asyncio", ws="none", timeout_keep_alive=KEEP_ALIVE,
                            h11_max_incomplete_event_size=limits.max_header_bytes, log_level="warning",
                            log_config=None)
    uvicorn.Server(config).run(sockets=[gate.listening(sock)])


class Gate:
    """One server's limits, shared by its listening socket and its connections (one event loop,
    so no lock). The socket accepts while fewer than `max_connections` are open; at the limit each
    attempt closes the connection that has waited longest for its request, and accepts once that
    one's file descriptor is free. Counting at accept, not when a connection is set up, matters:
    asyncio accepts up to the listen backlog at once, and at EMFILE it stops serving altogether."""

    def __init__(self, limits: Limits, cut: Counter[str]) -> None:
        self.limits, self.cut = limits, cut
        self.held = 0  # accepted sockets not yet closed
        self.waiting: OrderedDict[Any, None] = OrderedDict()  # awaiting (the rest of) a request, oldest first
        self.closing: set[Any] = set()  # closed by the limits, file descriptor not yet released

    def admit(self) -> bool:
        """Whether one more connection may be accepted now; at the limit, make room for the next."""
        if self.held < self.limits.max_connections:
            return True
        if self.waiting and self.held - len(self.closing) >= self.limits.max_connections:
            next(iter(self.waiting)).close_with(_TIMED_OUT, "evicted")
        return False

    def listening(self, sock: socket.socket) -> socket.socket:
        """`sock`, accepting only what the gate admits."""
        import socket

        gate = self

        class Gated(socket.socket):
            def accept(self) -> tuple[socket.socket, Any]:
                if not gate.admit():  # asyncio reads this as "nothing to accept" and asks again
                    raise BlockingIOError(errno.EAGAIN, "at the connection limit")
                conn, address = super().accept()
                gate.held += 1
                return conn, address

        return Gated(sock.family, sock.type, sock.proto, fileno=sock.detach())

    def protocol(self) -> type[asyncio.Protocol]:
        """uvicorn's h11 protocol with a deadline per request, counted by the gate."""
        import h11
        from uvicorn.protocols.http.h11_impl import H11Protocol

        gate = self

        class Bounded(H11Protocol):
            deadline: asyncio.TimerHandle | None = None

            def connection_made(self, transport: asyncio.BaseTransport) -> None:
                super().connection_made(transport)  # type: ignore[arg-type]
                self.track()

            def data_received(self, data: bytes) -> None:
                super().data_received(data)
                self.track()

            def on_response_complete(self) -> None:
                super().on_response_complete()
                self.track()

            def connection_lost(self, exc: Exception | None) -> None:
                gate.held -= 1
                gate.closing.discard(self)
                self.stop_waiting()
                super().connection_lost(exc)

            def track(self) -> None:
                """Start the deadline when a request is due (kept from the first byte on, never
                reset); stop it once the request is whole, or the connection closing."""
                if self.transport.is_closing() or self.conn.their_state not in (h11.IDLE, h11.SEND_BODY):
                    self.stop_waiting()
                elif self.deadline is None:
                    gate.waiting[self] = None
                    self.deadline = self.loop.call_later(gate.limits.request_timeout, self.close_with,
                                                         _TIMED_OUT, "timeout")

            def stop_waiting(self) -> None:
                gate.waiting.pop(self, None)
                if self.deadline is not None:
                    self.deadline.cancel()
                    self.deadline = None

            def close_with(self, answer: bytes, reason: str) -> None:
                """Answer (unless a response has begun) and close; an app reading the body sees a disconnect."""
                self.stop_waiting()
                gate.cut[reason] += 1
                gate.closing.add(self)
                if self.conn.our_state is h11.IDLE and not self.transport.is_closing():
                    self.transport.write(answer)
                self.transport.close()

        return Bounded
