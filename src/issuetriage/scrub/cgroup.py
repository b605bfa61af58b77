"""A cgroup v2 of its own per run, where one can be made: the kernel then charges every page the
run holds (anonymous memory, page cache, tmpfs and /dev/shm files, memfd, SysV shared memory,
kernel memory) to `memory.max`, and kills the run at the limit.

Runs are made under a delegated cgroup: `ISSUETRIAGE_SCRUB_CGROUP` names one (a folder of the
cgroup v2 mount whose `cgroup.subtree_control` has, or may get, `+memory`: e.g. a systemd
service with `Delegate=yes`, after moving the service's own processes into a leaf), else the
cgroup the scrub process is in, when that one already delegates memory to children (the root
cgroup of a host or container). Nothing is made on a cgroup v1 hierarchy, and where neither
works `parent()` is None and the sandbox counts memory itself (sandbox.py).
"""

from __future__ import annotations

import contextlib
import functools
import os
import time
import uuid
from pathlib import Path

ENV = "ISSUETRIAGE_SCRUB_CGROUP"


def _v2_mount(mountinfo: str = "/proc/self/mountinfo") -> tuple[Path, str] | None:
    """Where the cgroup v2 hierarchy is mounted (fstype `cgroup2`) and which of its folders."""
    try:
        lines = Path(mountinfo).read_text().splitlines()
    except OSError:
        return None
    for line in lines:
        fields = line.split()
        if " - " in line and line.split(" - ", 1)[1].split()[0] == "cgroup2":
            return Path(fields[4]), fields[3]
    return None


def _own_cgroup(procfile: str = "/proc/self/cgroup") -> str | None:
    """This process's cgroup v2 path (`0::/path`)."""
    try:
        for line in Path(procfile).read_text().splitlines():
            if line.startswith("0::"):
                return line[3:]
    except OSError:
        pass
    return None


def _read(path: Path) -> str:
    try:
        return path.read_text()
    except OSError:
        return ""


def usable(folder: Path) -> bool:
    """True when a child cgroup with a memory controller can be made under `folder`."""
    if "memory" not in _read(folder / "cgroup.subtree_control").split():
        if "memory" not in _read(folder / "cgroup.controllers").split():
            return False
        try:  # refused while the folder itself holds processes ("no internal processes")
            (folder / "cgroup.subtree_control").write_text("+memory")
        except OSError:
            return False
    probe = folder / f"scrub-probe-{os.getpid()}-{uuid.uuid4().hex[:8]}"
    try:
        probe.mkdir()
    except OSError:
        return False
    try:
        return (probe / "memory.max").exists() and (probe / "cgroup.procs").exists()
    finally:
        with contextlib.suppress(OSError):
            probe.rmdir()


@functools.cache
def parent() -> Path | None:
    """The delegated cgroup v2 folder runs are made under, or None (then the sandbox counts)."""
    found = _v2_mount()
    if found is None:
        return None
    mount, root = found
    named = os.environ.get(ENV)
    own = _own_cgroup()
    if named:
        folder: Path | None = Path(named)
    elif own is not None and (own + "/").startswith(root.rstrip("/") + "/"):
        folder = mount / own[len(root.rstrip("/")):].lstrip("/")
    else:
        folder = None
    return folder if folder is not None and usable(folder) else None


class RunCgroup:
    """One run's cgroup: `memory.max` = the limit, no swap, the whole group killed together."""

    def __init__(self, under: Path, memory_bytes: int) -> None:
        self.path = under / f"scrub-run-{uuid.uuid4().hex}"
        self.path.mkdir()
        try:
            (self.path / "memory.max").write_text(str(memory_bytes))
            for name, value in (("memory.swap.max", "0"), ("memory.oom.group", "1")):
                if (self.path / name).exists():
                    (self.path / name).write_text(value)
        except OSError:
            self.remove()
            raise

    def wrap(self, argv: list[str]) -> list[str]:
        """`argv` started inside this cgroup: a shell moves itself in, then execs it (every
        process of the run descends from it, so none starts outside)."""
        return ["/bin/sh", "-c", 'echo $$ > "$0" && exec "$@"', str(self.path / "cgroup.procs"), *argv]

    def oom_killed(self) -> bool:
        """The kernel killed something in the run for going over `memory.max`."""
        for line in _read(self.path / "memory.events").splitlines():
            name, _, count = line.partition(" ")
            if name == "oom_kill" and count.strip() not in ("", "0"):
                return True
        return False

    def kill(self) -> None:
        """SIGKILL every process in the run (`cgroup.kill`, Linux 5.14+)."""
        with contextlib.suppress(OSError):
            (self.path / "cgroup.kill").write_text("1")

    def remove(self) -> None:
        """Remove the (emptied) cgroup; its last processes may take a moment to go."""
        for _ in range(50):
            try:
                self.path.rmdir()
                return
            except FileNotFoundError:
                return
            except OSError:
                self.kill()
                time.sleep(0.02)
