"""What a run's processes hold, read from /proc by the scrub process (the sandbox's memory watch)."""

from __future__ import annotations

import os


def process_tree(root: int) -> list[int]:
    """`root` and every process below it (children of any of their threads)."""
    found, todo = [], [root]
    while todo:
        pid = todo.pop()
        try:
            tasks = os.listdir(f"/proc/{pid}/task")
        except OSError:
            continue
        found.append(pid)
        for tid in tasks:
            try:
                with open(f"/proc/{pid}/task/{tid}/children") as handle:
                    todo += [int(child) for child in handle.read().split()]
            except OSError:
                continue
    return found


def total_memory(pids: list[int], limit: int) -> int:
    """Resident bytes of `pids` together; near the limit, proportional (PSS), so pages a fork
    shares with its parent count once."""
    page = os.sysconf("SC_PAGE_SIZE")
    rss = sum(_read_int(f"/proc/{pid}/statm", 1) * page for pid in pids)
    if rss <= limit:
        return rss
    return sum(_pss_kb(pid) * 1024 for pid in pids)


def tmpfs_used(pids: list[int], mounts: tuple[str, ...]) -> int:
    """Bytes in the sandbox's own tmpfs `mounts` (files, unlinked files still open or mapped),
    seen through the root of the first of `pids` inside it (bwrap itself, outside, is left out)."""
    for pid in pids:
        used, seen = 0, False
        for mount in mounts:
            try:
                info = os.statvfs(f"/proc/{pid}/root{mount}")
            except OSError:
                continue
            seen = True
            used += (info.f_blocks - info.f_bfree) * info.f_frsize
        if seen:
            return used
    return 0


def _read_int(path: str, field: int) -> int:
    try:
        with open(path) as handle:
            return int(handle.read().split()[field])
    except (OSError, ValueError, IndexError):
        return 0


def _pss_kb(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/smaps_rollup") as handle:
            for line in handle:
                if line.startswith("Pss:"):
                    return int(line.split()[1])
    except (OSError, ValueError, IndexError):
        pass
    return 0
