"""Warm runs: scripts run by fork servers that already imported what the repro imports.

A torch repro spends ~1.5-2 s importing torch and milliseconds failing; the minimizer runs it
hundreds of times. `WarmRunner` starts up to `size` fork servers (`forkserver.py`) in the same
sandbox, limits and environment as a cold `run_script`, each with the repro's top-level imports
done once; every run then forks a fresh child from that state. A server that dies or stops
answering is killed and that run falls back to a cold `run_script`, so a script cannot wedge or
forge the runner. Results are `RunResult`s like the cold path's; the minimizer re-verifies its
final answer cold (see flow.py), so a warm/cold difference can never reach a report.
"""

from __future__ import annotations

import ast
import json
import os
import queue
import select
import shutil
import subprocess
import tempfile
import threading
import time
from pathlib import Path

from issuetriage.scrub.model import Interpreter, Limits, RunResult
from issuetriage.scrub.sandbox import SCRIPT, TAIL, run_script, start

_SERVER = (Path(__file__).with_name("forkserver.py")).read_text()
_START_S = 180.0  # importing torch on a loaded machine
_GRACE_S = 15.0  # beyond the run's own timeout, enforced by the server


def imported_modules(code: str) -> tuple[str, ...]:
    """Top-level packages the script imports (absolute imports only), in order of appearance."""
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return ()
    names: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names += [alias.name.split(".")[0] for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.append(node.module.split(".")[0])
    return tuple(dict.fromkeys(n for n in names if n != "__future__"))


class _Server:
    """One fork server process and its line protocol."""

    def __init__(self, interp: Interpreter, limits: Limits, seed: int, isolation: str | None,
                 preload: tuple[str, ...]) -> None:
        self.scratch = tempfile.mkdtemp(prefix="scrub-warm-")
        cmd = [str(interp.python), "-X", "faulthandler", "-c", _SERVER, json.dumps(list(preload))]
        try:  # pid 1 of its sandbox: no bwrap init holds its pipes, and it can kill all a run left
            self.sandbox = start(cmd, self.scratch, interp, limits, seed, isolation, as_pid_1=True,
                                 bufsize=0, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                 stderr=subprocess.DEVNULL)
        except BaseException:  # no sandbox: the error is the cold path's; leave no scratch dir behind
            shutil.rmtree(self.scratch, ignore_errors=True)
            raise
        self.proc, self.mode = self.sandbox.proc, self.sandbox.mode
        self._buffer = b""
        ready = self._read(_START_S)
        if ready is None or "ready" not in ready:
            self.close()
            raise OSError("fork server did not start")
        self.loaded = tuple(ready["ready"])

    def run(self, code: str, limits: Limits) -> RunResult | None:
        """The run's result, or None when the server failed (it is then closed)."""
        request = {"code": code, "script": SCRIPT, "timeout": limits.timeout_s, "tail": TAIL}
        try:
            self.proc.stdin.write((json.dumps(request) + "\n").encode())  # type: ignore[union-attr]
        except OSError:
            self.close()
            return None
        answer = self._read(limits.timeout_s + _GRACE_S)
        if answer is None or "timed_out" not in answer:
            self.close()
            return None
        sig = answer["signal"]
        timed_out = bool(answer["timed_out"])
        return RunResult(None if timed_out else (-sig if sig else answer["exit_code"]),
                         None if timed_out else sig, answer["duration"], str(answer["stdout"]),
                         str(answer["stderr"]), timed_out, f"{self.mode} (warm)")

    def _read(self, timeout: float) -> dict | None:
        deadline = time.monotonic() + timeout
        fd = self.proc.stdout.fileno()  # type: ignore[union-attr]
        while b"\n" not in self._buffer:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([fd], [], [], left)[0]:
                return None
            chunk = os.read(fd, 1 << 16)
            if not chunk:
                return None
            self._buffer += chunk
        line, _, self._buffer = self._buffer.partition(b"\n")
        try:
            answer = json.loads(line)
        except ValueError:
            return None
        return answer if isinstance(answer, dict) else None

    def close(self) -> None:
        if self.proc.poll() is None:
            self.sandbox.kill()
        self.proc.wait()
        self.sandbox.close()
        for stream in (self.proc.stdin, self.proc.stdout):
            stream.close()  # type: ignore[union-attr]
        shutil.rmtree(self.scratch, ignore_errors=True)


class WarmRunner:
    """`runner(code) -> RunResult` through up to `size` fork servers; use as a context manager."""

    def __init__(self, interp: Interpreter, limits: Limits = Limits(), seed: int = 0,
                 isolation: str | None = "auto", preload: tuple[str, ...] = (), size: int = 1) -> None:
        self.interp, self.limits, self.seed, self.isolation = interp, limits, seed, isolation
        self.preload, self.size = preload, max(1, size)
        self.cold_runs = 0  # runs that fell back to a cold run_script
        self._idle: queue.SimpleQueue[_Server] = queue.SimpleQueue()
        self._started = 0
        self._broken = False
        self._lock = threading.Lock()
        self._servers: list[_Server] = []

    def __call__(self, code: str) -> RunResult:
        server = self._acquire()
        result = server.run(code, self.limits) if server else None
        if server is not None and result is None:
            with self._lock:  # it died or hung and is closed: another may start in its place
                self._started -= 1
                self._servers.remove(server)
        if result is None:
            with self._lock:
                self.cold_runs += 1
            return run_script(code, self.interp, self.limits, self.seed, self.isolation)
        self._idle.put(server)  # type: ignore[arg-type]
        return result

    def _acquire(self) -> _Server | None:
        """An idle server, a new one while fewer than `size` run, None when servers cannot start."""
        wait = 0.0
        while not self._broken:
            try:
                return self._idle.get(timeout=wait) if wait else self._idle.get_nowait()
            except queue.Empty:
                wait = 0.2
            with self._lock:
                start = self._started < self.size
                self._started += start
            if start:
                return self._start()
        return None

    def _start(self) -> _Server | None:
        try:
            server = _Server(self.interp, self.limits, self.seed, self.isolation, self.preload)
        except OSError:
            with self._lock:
                self._started -= 1
                self._broken = True
            return None
        with self._lock:
            self._servers.append(server)
        return server

    def close(self) -> None:
        with self._lock:
            servers, self._servers = self._servers, []
        for server in servers:
            server.close()

    def __enter__(self) -> WarmRunner:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

