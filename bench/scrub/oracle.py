"""The one oracle every minimizer in the bench uses (standalone: runs under any Python 3.8+).

Interesting means: the candidate, run as repro.py in a fresh directory, fails with the same
exception class and a message containing the expected substring; when the original failure came
from inside the library, the innermost frame is still there and the substring is not a string
literal of the candidate; timeouts are not interesting. A spec with "hang" wants a timeout; one
with "output" wants a clean exit that prints that text (not as a literal of the candidate).

With "control_python" (the fixed release's interpreter), an interesting candidate must also pass
there (the differential oracle scrub uses when the fix is known): exit 0, and for an output spec
without printing the wrong output.

CLI (for shrinkray): python oracle.py SPEC.json FILE → exit 0 when interesting. Each call appends
one byte to SPEC's "counter" file and keeps the smallest interesting candidate in "best".

With "warm" in the spec (tools that call the oracle in-process: ours and pysource-minimize), runs go
through issuetriage's fork servers (issuetriage.scrub.warm, no sandbox, like the cold runs here)
with the spec's "preload" modules imported once; issuetriage must then be importable.
"""

from __future__ import annotations

import ast
import fcntl
import json
import os
import re
import subprocess
import sys
import tempfile

_FRAME = re.compile(r'^\s*File "([^"]+)", line (\d+)')


def run(code: str, spec: dict) -> tuple[int | None, str, str]:
    """(exit code or None on timeout, stderr, stdout) of one run of the candidate."""
    if spec.get("warm"):
        result = _warm_runner(spec)(code)
        return (None if result.timed_out else result.exit_code), result.stderr, result.stdout
    with tempfile.TemporaryDirectory(prefix="oracle-") as folder:
        with open(os.path.join(folder, "repro.py"), "w") as handle:
            handle.write(code)
        env = {"PATH": "/usr/bin:/bin", "PYTHONHASHSEED": "0", "OMP_NUM_THREADS": "1",
               "PYTHONPATH": spec.get("pythonpath", ""), "HOME": folder, "TMPDIR": folder}
        try:
            done = subprocess.run([spec["python"], "repro.py"], cwd=folder, env=env,
                                  capture_output=True, text=True, timeout=spec["timeout"])
        except subprocess.TimeoutExpired:
            return None, "", ""
        return done.returncode, done.stderr, done.stdout


_WARM: list = []  # [(key, runner)]: warm runners of the last two specs (a case and its control)


def _warm_runner(spec: dict):
    from pathlib import Path

    from issuetriage.scrub.model import Interpreter, Limits
    from issuetriage.scrub.warm import WarmRunner

    key = (spec["python"], spec.get("pythonpath", ""), tuple(spec.get("preload", ())), spec["timeout"])
    for known, runner in _WARM:
        if known == key:
            return runner
    while len(_WARM) > 1:
        _WARM.pop(0)[1].close()
    paths = (Path(spec["pythonpath"]),) if spec.get("pythonpath") else ()
    runner = WarmRunner(Interpreter("bench", Path(spec["python"]), paths), Limits(timeout_s=spec["timeout"]),
                        isolation=None, preload=key[2], size=spec.get("workers", 2))
    _WARM.append((key, runner))
    return runner


def last_failure(stderr: str) -> tuple[str, str, str] | None:
    """(exception class, message, innermost file) of the last traceback in stderr."""
    lines = stderr.splitlines()
    starts = [i for i, line in enumerate(lines) if line.startswith("Traceback (most recent call last)")]
    frames = [i for i, line in enumerate(lines) if _FRAME.match(line)]
    if not starts and not frames:
        return None
    innermost = ""  # a deep recursion's header can fall out of a warm run's stderr tail: start at a frame
    for i in range(starts[-1] + 1 if starts else frames[0], len(lines)):
        match = _FRAME.match(lines[i])
        if match:
            innermost = match.group(1)
        elif lines[i] and not lines[i][0].isspace():
            name, _, message = lines[i].partition(":")
            return name.strip(), message.strip(), innermost
    return None


def _literal(code: str, text: str) -> bool:
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return False
    return any(isinstance(n, ast.Constant) and isinstance(n.value, str) and text in n.value
               for n in ast.walk(tree))


def verdict(code: str, stderr: str, returncode: int | None, spec: dict, stdout: str = "") -> bool:
    if spec.get("hang"):  # the bug is that it never finishes
        return returncode is None
    if spec.get("output"):  # wrong output: still printed, and not as a literal of the candidate
        shown = " ".join(spec["output"].split()) in " ".join(stdout.split())
        return returncode == 0 and shown and not _literal(code, spec["output"].strip())
    if returncode is None or returncode == 0:
        return False
    failure = last_failure(stderr)
    if failure is None:
        return False
    name, message, innermost = failure
    if name.rsplit(".", 1)[-1] != spec["exception"].rsplit(".", 1)[-1] or spec["substring"] not in message:
        return False
    if spec["from_library"]:
        return not innermost.endswith("repro.py") and not _literal(code, spec["substring"])
    if spec.get("assertion"):  # scrub's added check must still ask something: a call or an attribute
        return any(isinstance(n, ast.Assert) and isinstance(n.msg, ast.Constant) and n.msg.value == spec["substring"]
                   and any(isinstance(m, (ast.Call, ast.Attribute, ast.Subscript, ast.Name)) for m in ast.walk(n.test))
                   for n in ast.walk(ast.parse(code)))
    return True


def interesting(code: str, spec: dict) -> bool:
    try:
        compile(code, "repro.py", "exec")
    except (SyntaxError, ValueError):
        return False
    returncode, stderr, stdout = run(code, spec)
    return verdict(code, stderr, returncode, spec, stdout) and not on_control(code, spec)


def on_control(code: str, spec: dict) -> bool:
    """With a "control_python" (the fixed release): True when the candidate does not pass there,
    so it does not show the difference the fix made and is not interesting."""
    if not spec.get("control_python"):
        return False
    control = {**spec, "python": spec["control_python"], "control_python": None}
    returncode, _, stdout = run(code, control)
    shown = bool(spec.get("output")) and " ".join(spec["output"].split()) in " ".join(stdout.split())
    return returncode != 0 or shown


def size(code: str) -> tuple[int, int]:
    return (sum(1 for line in code.splitlines() if line.strip()), len(code))


def record(code: str, ok: bool, spec: dict) -> None:
    """Count the call; keep the smallest interesting candidate (a tool stopped at its cap keeps it)."""
    with open(spec["counter"], "ab") as handle:
        handle.write(b".")
    if not ok:
        return
    with open(spec["best"] + ".lock", "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        best = open(spec["best"]).read() if os.path.exists(spec["best"]) else None
        if best is None or size(code) < size(best):
            with open(spec["best"], "w") as handle:
                handle.write(code)


def main() -> int:
    spec = json.load(open(sys.argv[1]))
    code = open(sys.argv[2]).read()
    ok = interesting(code, spec)
    record(code, ok, spec)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
