"""Red team, webhook surface: `issuetriage serve` (the receiver, as a process) on loopback, with a
low open-files limit, attacked by slow and idle clients, oversized and forged deliveries and
replays. Slow clients must be cut off and signed deliveries answered however many are held.

The server is the real command, run where only the `service` extra's distributions can be
imported (tests/service/fenced.py), with an open-files limit of 128 and a 0.25 s request deadline.
ISSUETRIAGE_TEST_EXTRA names another extra (`test`: every distribution), for a checkout whose
`service` extra cannot start `serve`. No timing is asserted: every wait has a generous guard.
"""

from __future__ import annotations

import hashlib
import hmac
import http.client
import json
import os
import resource
import select
import socket
import subprocess
import sys
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).parents[2]
SECRET = b"webhook red team"
REPO = "pytorch/pytorch"
OPEN_FILES = 128  # the server's limit: far fewer than the slow clients below
GUARD = 20.0  # seconds any single wait may take before the test fails (never a timing)


@dataclass
class Served:
    port: int
    process: subprocess.Popen[str]

    def connect(self) -> socket.socket:
        return socket.create_connection(("127.0.0.1", self.port), timeout=GUARD)

    def request(self, method: str, path: str, body: bytes = b"", headers: dict[str, str] | None = None
                ) -> http.client.HTTPResponse:
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=GUARD)
        conn.request(method, path, body=body, headers=headers or {})
        answer = conn.getresponse()
        answer.read()
        conn.close()
        return answer

    def deliver(self, data: Any = None, *, delivery: str | None = None, event: str = "issues",
                body: bytes | None = None, signature: str | None = "good") -> http.client.HTTPResponse:
        raw = body if body is not None else json.dumps(data if data is not None else opened()).encode()
        headers = {"X-GitHub-Event": event, "X-GitHub-Delivery": delivery or str(uuid.uuid4()),
                   "Content-Type": "application/json"}
        if signature is not None:
            headers["X-Hub-Signature-256"] = sign(raw) if signature == "good" else signature
        return self.request("POST", "/webhook", raw, headers)

    def metric(self, line_start: str) -> float:
        text = self.request_text("/metrics")
        found = [line.split()[-1] for line in text.splitlines() if line.startswith(line_start)]
        return float(found[0]) if found else 0.0

    def request_text(self, path: str) -> str:
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=GUARD)
        conn.request("GET", path)
        text = conn.getresponse().read().decode()
        conn.close()
        return text


def sign(body: bytes, secret: bytes = SECRET) -> str:
    return "sha256=" + hmac.new(secret, body, hashlib.sha256).hexdigest()


def opened(number: int = 7, repo: str = REPO) -> dict[str, Any]:
    return {"action": "opened", "sender": {"login": "reporter", "type": "User"}, "repository": {"full_name": repo},
            "installation": {"id": 4242},
            "issue": {"number": number, "user": {"login": "reporter"}, "updated_at": "2026-02-01T00:00:00Z"}}


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _low_open_files() -> None:
    resource.setrlimit(resource.RLIMIT_NOFILE, (OPEN_FILES, OPEN_FILES))  # soft and hard: serve cannot raise it


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    where = tmp_path_factory.mktemp("webhook")
    port = free_port()
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src"), "GITHUB_WEBHOOK_SECRET": SECRET.decode(),
           "GITHUB_TOKEN": "not-used-no-workers", "GITHUB_API_URL": "http://127.0.0.1:9",
           "ISSUETRIAGE_REQUEST_TIMEOUT": "0.25"}
    extra = os.environ.get("ISSUETRIAGE_TEST_EXTRA", "service")
    process = subprocess.Popen(
        [sys.executable, str(ROOT / "tests" / "service" / "fenced.py"), str(ROOT / "pyproject.toml"), extra,
         "serve", "--store", str(where / "t.db"), "--port", str(port), "--workers", "0",
         "--repo", "pytorch/pytorch"],
        env=env, cwd=where, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
        preexec_fn=_low_open_files)
    served = Served(port, process)
    for _ in range(int(GUARD / 0.05)):
        if process.poll() is not None:
            pytest.fail(f"serve exited {process.returncode}: {process.stderr.read() if process.stderr else ''}")
        try:
            served.connect().close()
            break
        except OSError:
            select.select([], [], [], 0.05)
    yield served
    process.terminate()
    process.communicate(timeout=60)


def cut_off(sock: socket.socket, trickle: bytes = b"") -> bool:
    """Whether the server closes `sock` (an answer such as 408 may come first), sending a byte of
    `trickle` whenever it is quiet, as a slowloris client does; False when the guard runs out."""
    for _ in range(int(GUARD / 0.1)):
        readable, _, _ = select.select([sock], [], [], 0.1)
        try:
            if readable:
                if sock.recv(65536) == b"":
                    return True
            elif trickle:
                sock.sendall(trickle[:1])
                trickle = trickle[1:] or trickle
        except OSError:  # reset by the server: cut off as well
            return True
    return False


HEAD = b"POST /webhook HTTP/1.1\r\nHost: 127.0.0.1\r\n"


# --- slow and idle clients: held forever before, cut off now ---------------------------------

SLOW_CLIENTS = {
    "slowloris headers, one byte at a time": (HEAD, b"X-Padding: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"),
    "headers complete, body one byte at a time": (HEAD + b"Content-Length: 1000\r\n\r\n", b"{" * 1000),
    "chunked body that never ends": (HEAD + b"Transfer-Encoding: chunked\r\n\r\n1\r\n{\r\n", b"1\r\n \r\n"),
    "connects and sends nothing": (b"", b""),
    "request line only, then silence": (b"POST /webhook HTTP/1.1\r\n", b""),
}


@pytest.mark.parametrize("opening, trickle", SLOW_CLIENTS.values(), ids=SLOW_CLIENTS.keys())
def test_a_slow_client_is_cut_off(served, opening, trickle):
    with served.connect() as sock:
        sock.sendall(opening)
        assert cut_off(sock, trickle)


def test_a_kept_alive_connection_that_trickles_its_next_request_is_cut_off(served):
    with served.connect() as sock:
        sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        assert b"200 OK" in sock.recv(65536)
        assert cut_off(sock, HEAD + b"X-Padding: " + b"a" * 200)


def test_signed_deliveries_are_answered_while_more_slow_connections_are_held_than_open_files(served):
    """The incident: more slow connections than the server's open-files limit; each signed
    delivery sent meanwhile is still answered 202, and the slow ones are all cut off."""
    held = []
    try:
        for _ in range(OPEN_FILES + 40):
            sock = served.connect()
            sock.sendall(HEAD)
            held.append(sock)
        answers = [served.deliver(opened(number=100 + i)).status for i in range(5)]
        assert answers == [202] * 5
        assert all(cut_off(sock) for sock in held)
    finally:
        for sock in held:
            sock.close()


def test_websocket_upgrades_past_the_connection_limit_leave_deliveries_answered(served):
    """An upgraded connection would leave the server's connection count: asked for more times
    than the limit allows, the next signed delivery must still be answered."""
    for _ in range(OPEN_FILES):
        with served.connect() as sock:
            sock.sendall(b"GET /webhook HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n"
                         b"Sec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n")
            sock.recv(65536)
    assert served.deliver(opened(number=160)).status == 202


def test_a_delivery_sent_in_pieces_within_the_deadline_is_answered(served):
    body = json.dumps(opened(number=150)).encode()
    head = (f"POST /webhook HTTP/1.1\r\nHost: 127.0.0.1\r\nX-GitHub-Event: issues\r\n"
            f"X-GitHub-Delivery: {uuid.uuid4()}\r\nX-Hub-Signature-256: {sign(body)}\r\n"
            f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n").encode()
    with served.connect() as sock:
        for piece in (head[:20], head[20:], body[:10], body[10:]):
            sock.sendall(piece)
        assert sock.recv(65536).startswith(b"HTTP/1.1 202")


# --- what held before and must keep holding ---------------------------------------------------

def test_an_unsigned_delivery_is_refused(served):
    assert served.deliver(signature=None).status == 401


@pytest.mark.parametrize("signature", [
    sign(json.dumps(opened()).encode(), b"another secret"),
    "sha256=" + "0" * 64,
    "sha1=" + "0" * 40,
    "sha256=",
], ids=["another secret", "zeros", "sha1", "empty"])
def test_a_forged_signature_is_refused(served, signature):
    assert served.deliver(signature=signature).status == 401


def test_a_signature_taken_from_another_body_is_refused(served):
    signature = sign(json.dumps(opened(number=1)).encode())
    assert served.deliver(opened(number=2), signature=signature).status == 401


def test_a_replayed_delivery_id_changes_nothing(served):
    before = served.metric('issuetriage_deliveries_total{outcome="queued"}')
    assert served.deliver(opened(number=300), delivery="replayed-1").status == 202
    assert served.deliver(opened(number=301), delivery="replayed-1").status == 200
    assert served.metric('issuetriage_deliveries_total{outcome="queued"}') == before + 1


def test_an_oversized_body_is_refused(served):
    assert served.deliver(body=b" " * (1024 * 1024 + 1)).status == 413


def test_an_oversized_chunked_body_is_refused(served):
    chunk = b"x" * 65536
    body = b"".join(b"%x\r\n%s\r\n" % (len(chunk), chunk) for _ in range(20)) + b"0\r\n\r\n"  # 1.25 MiB
    with served.connect() as sock:
        sock.sendall(HEAD + b"X-GitHub-Event: issues\r\nX-GitHub-Delivery: big\r\n"
                            b"Transfer-Encoding: chunked\r\n\r\n" + body)
        assert sock.recv(65536).startswith(b"HTTP/1.1 413")


def test_oversized_headers_are_refused(served):
    """h11 refuses headers still incomplete past 16 KiB; ones that arrive whole in one read of the
    socket (asyncio reads up to 256 KiB) are parsed, so this sends 1 MiB."""
    with served.connect() as sock:
        try:
            sock.sendall(HEAD + b"X-Padding: " + b"a" * (1024 * 1024) + b"\r\n\r\n")
            answer = sock.recv(65536)
        except (ConnectionResetError, BrokenPipeError):  # closed with the rest unread
            answer = b""
    assert answer.startswith(b"HTTP/1.1 400") or answer == b""


@pytest.mark.parametrize("body", [b"{not json", b"[" * 100_000 + b"]" * 100_000, b'"a string"'],
                         ids=["not JSON", "deeply nested", "not an object"])
def test_a_signed_malformed_body_is_refused(served, body):
    assert served.deliver(body=body).status == 400


def test_a_signed_delivery_for_a_repository_not_served_is_refused(served):
    assert served.deliver(opened(repo="someone/else")).status == 422


def test_a_delivery_without_its_id_is_refused(served):
    body = json.dumps(opened()).encode()
    answer = served.request("POST", "/webhook", body, {"X-GitHub-Event": "issues", "X-Hub-Signature-256": sign(body)})
    assert answer.status == 400


# --- benign ------------------------------------------------------------------------------------

def test_a_signed_delivery_is_accepted(served):
    assert served.deliver(opened(number=400)).status == 202


def test_health_and_metrics_answer(served):
    assert served.request("GET", "/healthz").status == 200
    assert "issuetriage_answers_total" in served.request_text("/metrics")


def test_the_review_app_and_report_run_on_the_service_extra_alone(served):
    assert [served.request("GET", page).status for page in ("/", "/report")] == [200, 200]


# --- framing (issue #26, item 6): the receiver's own answers too -------------------------------

@pytest.mark.parametrize("method, path, body", [
    ("GET", "/healthz", b""), ("GET", "/metrics", b""), ("POST", "/webhook", b"{}"),
    ("GET", "/webhook", b""), ("GET", "/no-such-page", b""), ("GET", "/", b""), ("GET", "/report", b""),
])
def test_every_receiver_answer_forbids_framing(served, method, path, body):
    answer = served.request(method, path, body)
    assert answer.getheader("x-frame-options") == "DENY"
    assert answer.getheader("content-security-policy") == "frame-ancestors 'none'"
