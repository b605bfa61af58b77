"""The fork server that runs inside the sandbox (standalone: it runs under the repro's Python 3.8+).

Started once per interpreter with the modules the repro imports already imported (torch takes
~1.5 s to import; a fork takes ~10 ms), it reads one JSON request per line from stdin and answers
one JSON line on the descriptor that was stdout when it started. Per request it forks a child in
a fresh run directory under the scratch dir; the child redirects stdout/stderr to files, starts
its own session, keeps the server's resource limits (set by prlimit, as for a cold run; CPU
time counts from zero in a child), seeds, and runs the script as `__main__` the way
`python repro.py` would (exit codes, SystemExit, uncaught exceptions, atexit, non-daemon threads).
The server enforces the timeout by killing the child's process group.

Sandboxed, the server is pid 1 of its own pid namespace and not dumpable, so a child cannot open
its pipes, memory or environment through /proc/1 nor signal it; after each run it kills every
other process in the namespace (kill(-1)), so nothing a run started survives it, and it deletes
what the run left in the scratch dir, /tmp and /dev/shm. Run folders have unpredictable names.
The answer comes from what the server observes: the child's wait status and the output files.

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
import tempfile
import time

_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*$")


_PR_SET_DUMPABLE = 4


def _set_dumpable(value):
    """prctl(PR_SET_DUMPABLE): a process that is not dumpable keeps its /proc entries (fds,
    memory, environ) from processes of the same uid."""
    try:
        import ctypes

        return ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_DUMPABLE, value, 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False


def _child(request, folder, reply_fd, known, root):
    os.setsid()
    os.close(reply_fd)  # a script must not be able to write answers for the server
    _set_dumpable(1)  # like a fresh process; the server itself stays undumpable
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

        threading._shutdown()  # type: ignore[attr-defined]
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


def _end_run(pid):
    """Kill what the run left: in the server's own pid namespace every other process, else the
    child's session (a process that left it survives: no isolation)."""
    if os.getpid() != 1:
        try:
            os.killpg(pid, signal.SIGKILL)
        except OSError:
            pass
        return
    try:
        os.kill(-1, signal.SIGKILL)
    except OSError:
        pass
    while True:  # orphans come to pid 1
        try:
            os.waitpid(-1, 0)
        except ChildProcessError:
            return
        except InterruptedError:
            continue


def _clean(kept):
    """Delete what a run added to the folders it can write (entries present at start stay)."""
    for folder, names in kept.items():
        try:
            entries = os.listdir(folder)
        except OSError:
            continue
        for name in entries:
            if name in names:
                continue
            path = os.path.join(folder, name)
            if os.path.isdir(path) and not os.path.islink(path):
                shutil.rmtree(path, ignore_errors=True)
            else:
                try:
                    os.unlink(path)
                except OSError:
                    pass


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
    if not _set_dumpable(0) and os.getpid() == 1:
        sys.exit("fork server: cannot protect its /proc entries")  # sandboxed runs then go cold
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
    writable = [root] + (["/tmp/", "/dev/shm"] if os.getpid() == 1 else [])  # only the sandbox's own
    kept = {folder: set(os.listdir(folder)) for folder in writable if os.path.isdir(folder)}
    reply.write(json.dumps({"ready": loaded}) + "\n")
    reply.flush()
    for line in sys.stdin:
        request = json.loads(line)
        folder = tempfile.mkdtemp(prefix="run", dir=root)
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
        _end_run(pid)
        answer = {"duration": round(time.monotonic() - start, 3), "timed_out": timed_out,
                  "exit_code": os.WEXITSTATUS(status) if os.WIFEXITED(status) else None,
                  "signal": os.WTERMSIG(status) if os.WIFSIGNALED(status) else None,
                  "stdout": _tail(os.path.join(folder, "stdout"), request["tail"]),
                  "stderr": _tail(os.path.join(folder, "stderr"), 4 * request["tail"])}
        reply.write(json.dumps(answer) + "\n")
        reply.flush()
        _learn(folder, known)
        _clean(kept)


if __name__ == "__main__":
    serve(json.loads(sys.argv[1]), os.path.join(os.getcwd(), ""))
