"""The fork server that runs inside the sandbox (standalone: it runs under the repro's Python 3.8+).

Started once per interpreter with the modules the repro imports already imported (torch takes
~1.5 s to import; a fork takes ~10 ms), it reads one JSON request per line from stdin and answers
one JSON line on the descriptor that was stdout when it started. Per request it forks a child in
a fresh run directory under the scratch dir; the child redirects stdout/stderr to files, starts
its own session, keeps the server's resource limits (set by prlimit, as for a cold run; CPU
time counts from zero in a child), seeds, and runs the script as `__main__` the way
`python repro.py` would (exit codes, SystemExit, uncaught exceptions, atexit, non-daemon threads).
The server enforces the timeout by killing the child's process group.

Nothing of the script runs in the server itself: every child starts from the state right after
the pre-imports. Libraries also import lazily at run time (torch pulls in ~800 modules, sympy and
dynamo among them, on first use): each child lists the library modules it imported, and the
server imports those too before the next fork, so later runs skip them. Only names of modules
loaded from outside the scratch dir are learned, and the server's path has no scratch entry,
so a script cannot plant code in the server. Never import this module from issuetriage code;
`warm.py` sends its text.
"""

import json
import os
import re
import shutil
import signal
import sys
import time


_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*$")


def _child(request, folder, reply_fd, known, root):
    os.setsid()
    os.close(reply_fd)  # a script must not be able to write answers for the server
    os.chdir(folder)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.dup2(os.open("stdout", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), 1)
    os.dup2(os.open("stderr", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), 2)
    os.environ.update(HOME=folder, TMPDIR=folder)
    code = 0
    try:
        import random
        import runpy

        seed = int(os.environ.get("PYTHONHASHSEED", "0"))
        random.seed(seed)
        if "torch" in sys.modules:
            sys.modules["torch"].manual_seed(seed)
        sys.argv = [request["script"]]
        sys.path.insert(0, folder)
        runpy.run_path(request["script"], run_name="__main__")
    except SystemExit as exc:
        code = _exit_code(exc.code)
    except BaseException:
        sys.excepthook(*sys.exc_info())
        code = 1
    code = _shutdown(code)
    _write_learned(known, root)
    os._exit(code)


def _write_learned(known, root):
    """Library modules this run imported that the server does not have yet, in import order."""
    found = []
    for name, module in list(sys.modules.items()):
        spec = getattr(module, "__spec__", None)
        origin = getattr(spec, "origin", None) or ""
        if name in known or name == "__main__" or not _NAME.match(name) or getattr(spec, "name", None) != name:
            continue
        if origin.startswith("/") and not origin.startswith(root):
            found.append(name)
    try:
        with open("modules.json", "w") as handle:
            json.dump(found, handle)
    except Exception:
        pass


def _learn(folder, known):
    """Import what the last run imported lazily (library modules only; failures are skipped)."""
    try:
        with open(os.path.join(folder, "modules.json")) as handle:
            names = json.load(handle)
    except (OSError, ValueError):
        return
    for name in names if isinstance(names, list) else ():
        if isinstance(name, str) and name not in known and _NAME.match(name):
            try:
                __import__(name)
            except BaseException:
                pass
            known.add(name)


def _exit_code(value):
    if value is None:
        return 0
    if isinstance(value, int):
        return value & 0xFF
    sys.stderr.write(str(value) + "\n")
    return 1


def _shutdown(code):
    """What interpreter exit does: wait for non-daemon threads, run atexit, flush."""
    try:
        import threading

        threading._shutdown()
        import atexit

        atexit._run_exitfuncs()
    except BaseException:
        sys.excepthook(*sys.exc_info())
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except Exception:
            code = code or 120
    return code


def _wait(pid, timeout):
    """(status, timed_out): poll with a short sleep; kill the whole session on timeout."""
    deadline = time.monotonic() + timeout
    delay = 0.001
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            return status, False
        if time.monotonic() >= deadline:
            try:
                os.killpg(pid, signal.SIGKILL)
            except OSError:
                pass
            return os.waitpid(pid, 0)[1], True
        time.sleep(delay)
        delay = min(delay * 2, 0.02)


def _tail(path, size):
    try:
        with open(path, "rb") as handle:
            handle.seek(0, 2)
            handle.seek(max(0, handle.tell() - size))
            return handle.read().decode("utf-8", "replace")
    except OSError:
        return ""


def serve(preload, root):
    sys.path[:] = [p for p in sys.path if p not in ("", ".") and not os.path.abspath(p).startswith(root)]
    reply = os.fdopen(os.dup(1), "w")
    os.dup2(os.open(os.devnull, os.O_WRONLY), 1)  # library chatter must not reach the protocol
    loaded = []
    for name in preload:
        try:
            __import__(name)
            loaded.append(name)
        except BaseException:  # a module that fails to import fails again in the child, as it should
            pass
    known = set(sys.modules)
    reply.write(json.dumps({"ready": loaded}) + "\n")
    reply.flush()
    for number, line in enumerate(sys.stdin):
        request = json.loads(line)
        folder = os.path.join(root, "run%d" % number)
        os.makedirs(os.path.join(folder, "tmp"))
        with open(os.path.join(folder, request["script"]), "w") as handle:
            handle.write(request["code"])
        sys.stdout.flush()
        sys.stderr.flush()
        start = time.monotonic()
        pid = os.fork()
        if pid == 0:
            try:
                _child(request, folder, reply.fileno(), known, root)
            finally:
                os._exit(121)
        status, timed_out = _wait(pid, request["timeout"])
        answer = {"duration": round(time.monotonic() - start, 3), "timed_out": timed_out,
                  "exit_code": os.WEXITSTATUS(status) if os.WIFEXITED(status) else None,
                  "signal": os.WTERMSIG(status) if os.WIFSIGNALED(status) else None,
                  "stdout": _tail(os.path.join(folder, "stdout"), request["tail"]),
                  "stderr": _tail(os.path.join(folder, "stderr"), 4 * request["tail"])}
        reply.write(json.dumps(answer) + "\n")
        reply.flush()
        _learn(folder, known)
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    serve(json.loads(sys.argv[1]), os.path.join(os.getcwd(), ""))
