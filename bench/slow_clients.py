"""Benchmark: signed deliveries while slow clients hold connections (issue #26, item 5).

`issuetriage serve --workers 0` (the receiver, as a process) runs under an open-files limit of
1,024 (soft and hard, so it cannot raise it), as in the incident. One sender posts signed
deliveries one at a time and times each answer (connect to last byte, 10 s timeout: GitHub's):
with no slow client, then while an attacker (a process of its own) holds `--slow` connections
(1,100 by default: more than the limit), each sending a request line and then one header byte a
second, first without replacing those the server cuts off, then reconnecting at once, then with no
slow client again. All phases run against the same server; the figures are p99 ratios to the
deliveries with no slow client (both calm phases together).

    python bench/slow_clients.py [--deliveries 300] [--slow 1100] [--open-files 1024] [--src PATH/src]

`--src` runs another checkout's `serve` (e.g. main before the limits) against the same attack;
a phase stops after 5 deliveries in a row time out.
"""

from __future__ import annotations

import argparse
import hashlib
import hmac
import http.client
import json
import multiprocessing
import os
import resource
import selectors
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SECRET = b"bench slow clients"
OPEN_FILES = 1024
TIMEOUT = 10.0
HEAD = b"POST /webhook HTTP/1.1\r\nHost: 127.0.0.1\r\n"


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def start_server(src: Path, where: Path, port: int, open_files: int) -> subprocess.Popen[bytes]:
    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_NOFILE, (open_files, open_files))  # soft and hard: serve cannot raise it

    env = {**os.environ, "PYTHONPATH": str(src), "GITHUB_WEBHOOK_SECRET": SECRET.decode(),
           "GITHUB_TOKEN": "not-used-no-workers", "GITHUB_API_URL": "http://127.0.0.1:9"}
    process = subprocess.Popen([sys.executable, "-m", "issuetriage", "serve", "--store", str(where / "t.db"),
                                "--port", str(port), "--workers", "0"], env=env, cwd=where,
                               stdout=subprocess.DEVNULL, stderr=open(where / "serve.log", "wb"), preexec_fn=limit)
    for _ in range(600):
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return process
        except OSError:
            if process.poll() is not None:
                sys.exit(f"serve exited {process.returncode}: {(where / 'serve.log').read_text()[-2000:]}")
            time.sleep(0.05)
    sys.exit("serve did not start")


def deliver(port: int, number: int) -> float | None:
    """Seconds for one signed delivery's 202 (None: timed out, refused or another answer)."""
    body = json.dumps({"action": "opened", "sender": {"login": "reporter", "type": "User"},
                       "repository": {"full_name": "pytorch/pytorch"}, "installation": {"id": 1},
                       "issue": {"number": number, "user": {"login": "reporter"},
                                 "updated_at": "2026-02-01T00:00:00Z"}}).encode()
    headers = {"X-GitHub-Event": "issues", "X-GitHub-Delivery": str(uuid.uuid4()), "Content-Type": "application/json",
               "X-Hub-Signature-256": "sha256=" + hmac.new(SECRET, body, hashlib.sha256).hexdigest()}
    start = time.perf_counter()
    try:
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=TIMEOUT)
        conn.request("POST", "/webhook", body=body, headers=headers)
        status = conn.getresponse().status
        conn.close()
    except OSError:
        return None
    return time.perf_counter() - start if status == 202 else None


def phase(port: int, count: int, first: int) -> tuple[list[float], int]:
    times, failed, in_a_row = [], 0, 0
    for i in range(count):
        took = deliver(port, first + i)
        if took is None:
            failed, in_a_row = failed + 1, in_a_row + 1
            if in_a_row == 5:
                break
        else:
            times.append(took)
            in_a_row = 0
    return times, failed


class Attacker(multiprocessing.Process):
    """Holds `count` slow connections: a request line, then one header byte per second on each;
    a connection the server closes is replaced at once (`reconnect`). A process of its own, so the
    sender's timings do not wait for its GIL."""

    def __init__(self, port: int, count: int, reconnect: bool) -> None:
        super().__init__(daemon=True)
        self.port, self.count, self.reconnect = port, count, reconnect
        self.stop = multiprocessing.Event()
        self.cut = multiprocessing.Value("i", 0)
        self.open = multiprocessing.Value("i", 0)

    def open_one(self) -> None:
        try:
            sock = socket.create_connection(("127.0.0.1", self.port), timeout=TIMEOUT)
            sock.sendall(HEAD + b"X-Slow: ")
            sock.setblocking(False)
            self.selector.register(sock, selectors.EVENT_READ)
        except OSError:
            pass

    def run(self) -> None:
        _, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
        self.selector = selectors.DefaultSelector()
        for _ in range(self.count):
            self.open_one()
        last = time.monotonic()
        while not self.stop.is_set():
            for key, _ in self.selector.select(0.1):  # the server answered (408) or closed: cut off
                self.selector.unregister(key.fileobj)
                key.fileobj.close()  # type: ignore[union-attr]
                self.cut.value += 1
                if self.reconnect:
                    self.open_one()
            self.open.value = len(self.selector.get_map())
            if time.monotonic() - last >= 1.0:
                last = time.monotonic()
                for key in list(self.selector.get_map().values()):
                    try:
                        key.fileobj.send(b"a")  # type: ignore[union-attr]
                    except OSError:
                        pass
        for key in list(self.selector.get_map().values()):
            key.fileobj.close()  # type: ignore[union-attr]


def report(name: str, times: list[float], failed: int, base: list[float] | None = None) -> None:
    line = (f"{name}: answered {len(times)}/{len(times) + failed}, p50 {p(times, 50):.1f} ms, "
            f"p99 {p(times, 99):.1f} ms")
    if base and times:
        line += f"; p99 ratio to no slow client {p(times, 99) / p(base, 99):.2f}, p50 ratio {p(times, 50) / p(base, 50):.2f}"
    print(line, flush=True)


def p(values: list[float], q: float) -> float:
    return statistics.quantiles(values, n=100)[q - 1] * 1000 if len(values) >= 2 else float("nan")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--deliveries", type=int, default=300)
    parser.add_argument("--slow", type=int, default=1100)
    parser.add_argument("--src", type=Path, default=ROOT / "src")
    parser.add_argument("--open-files", type=int, default=OPEN_FILES, help="serve's limit, soft and hard")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        port = free_port()
        server = start_server(args.src, Path(tmp), port, args.open_files)
        try:
            print(f"serve from {args.src} under an open-files limit of {args.open_files}; "
                  f"{args.deliveries} signed deliveries per phase, one at a time, {TIMEOUT:g} s timeout")
            deliver(port, 1)  # warm up
            calm, calm_failed = phase(port, args.deliveries, 1000)
            attacked = []
            for n, reconnect in enumerate((False, True)):
                attacker = Attacker(port, args.slow, reconnect)
                attacker.start()
                time.sleep(2.0)  # the attacker opens its connections and starts trickling
                at_start = attacker.open.value
                times, failed = phase(port, args.deliveries, 5000 + 1000 * n)
                at_end = attacker.open.value
                attacker.stop.set()
                attacker.join(30)
                attacked.append((f"{args.slow} slow clients, {'reconnecting' if reconnect else 'held, not replaced'}",
                                 times, failed, f"the attacker had {at_start} then {at_end} connections open; "
                                 f"the server cut it off {attacker.cut.value} times"))
            again, again_failed = phase(port, args.deliveries, 9000)
            report("no slow client (before and after the attacks)", calm + again, calm_failed + again_failed)
            for name, times, failed, note in attacked:
                report(name, times, failed, calm + again)
                print(f"  {note}")
            cut = [line for line in _metrics(port).splitlines() if line.startswith("issuetriage_connections_cut_total")]
            print("server:", "; ".join(cut) or "(no connections_cut_total metric)")
        finally:
            server.terminate()
            try:
                server.wait(30)
            except subprocess.TimeoutExpired:
                server.kill()


def _metrics(port: int) -> str:
    try:
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=TIMEOUT)
        conn.request("GET", "/metrics")
        return conn.getresponse().read().decode()
    except OSError:
        return ""


if __name__ == "__main__":
    main()
