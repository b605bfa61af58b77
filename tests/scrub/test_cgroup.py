"""The cgroup v2 seam of the memory limit, against a folder laid out like a cgroup (this machine's
memory controller is on cgroup v1, so the kernel's own accounting cannot run here; the sandbox's
fallback is exercised by tests/security/test_scrub_redteam.py)."""

import subprocess
from pathlib import Path

from issuetriage.scrub import cgroup

MOUNTINFO = ("25 30 0:22 / /sys/fs/cgroup/memory rw,relatime shared:9 - cgroup cgroup rw,memory\n"
             "36 25 0:30 / /sys/fs/cgroup/unified rw,relatime shared:10 - cgroup2 cgroup2 rw\n")


def test_the_v2_mount_and_own_cgroup_are_read_from_proc(tmp_path):
    (tmp_path / "mountinfo").write_text(MOUNTINFO)
    (tmp_path / "cgroup").write_text("4:memory:/a/b\n0::/system.slice/scrub.service\n")
    assert cgroup._v2_mount(str(tmp_path / "mountinfo")) == (Path("/sys/fs/cgroup/unified"), "/")
    assert cgroup._own_cgroup(str(tmp_path / "cgroup")) == "/system.slice/scrub.service"


def test_a_folder_without_the_memory_controller_is_not_used(tmp_path):
    (tmp_path / "cgroup.controllers").write_text("cpu io pids\n")
    (tmp_path / "cgroup.subtree_control").write_text("cpu\n")
    assert cgroup.usable(tmp_path) is False


def test_a_run_cgroup_sets_the_limit_and_the_run_starts_inside_it(tmp_path):
    group = cgroup.RunCgroup(tmp_path, 256 * 1024 * 1024)
    assert (group.path / "memory.max").read_text() == str(256 * 1024 * 1024)
    done = subprocess.run(group.wrap(["/bin/sh", "-c", "echo $$"]), capture_output=True, text=True, check=True)
    assert (group.path / "cgroup.procs").read_text().strip() == done.stdout.strip()  # moved itself in, then exec
    assert group.oom_killed() is False
    (group.path / "memory.events").write_text("low 0\nhigh 0\nmax 3\noom 1\noom_kill 1\n")
    assert group.oom_killed() is True
