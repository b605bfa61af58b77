"""Probes against the scrub sandbox, run as whoever runs the suite (CI and this machine: root).

Each probe is a script an attacker could post as a repro. Nothing here writes to a kernel
interface: /proc/sys files are opened for writing and closed, never written. Limits are built
with `limits(...)`, which leaves out fields an older Limits lacks, so the same probes run (and
show the escape) against code from before the totals existed.
"""

import dataclasses
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from issuetriage.scrub.model import Interpreter, Limits
from issuetriage.scrub.sandbox import isolation_mode, run_script
from issuetriage.scrub.warm import WarmRunner

PY = Interpreter("py", Path(sys.executable))
MiB = 1024 * 1024

needs_sandbox = pytest.mark.skipif(isolation_mode() is None, reason="bwrap does not work here")


def limits(**values) -> Limits:
    known = {f.name for f in dataclasses.fields(Limits)}
    return Limits(**{k: v for k, v in values.items() if k in known})


def run(code: str, **values) -> object:
    return run_script(code, PY, limits(timeout_s=60, **values))


OPEN_FOR_WRITING = """
import os
opened = []
for path in ["/proc/sys/kernel/core_pattern", "/proc/sys/kernel/modprobe", "/proc/sys/vm/drop_caches",
             "/proc/sys/fs/suid_dumpable", "/proc/sysrq-trigger", "/sys/kernel/uevent_helper",
             "/proc/self/../1/oom_score_adj"]:
    try:
        os.close(os.open(path, os.O_WRONLY))  # open only: nothing is written
        opened.append(path)
    except OSError:
        pass
print("opened", opened)
"""


@needs_sandbox
def test_kernel_settings_cannot_be_opened_for_writing():
    result = run(OPEN_FOR_WRITING)
    assert result.stdout == "opened []\n", result.stdout + result.stderr


IDENTITY = """
import json, os
host = {}
for line in open("/proc/self/uid_map"):
    inside, outside, count = map(int, line.split())
    if inside <= os.getuid() < inside + count:
        host["uid"] = outside + os.getuid() - inside
status = {k: v.strip() for k, _, v in (line.partition(":") for line in open("/proc/self/status"))}
print(json.dumps({**host, **{k: status[k] for k in ("CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb",
                                                    "NoNewPrivs")}}))
"""


@needs_sandbox
def test_the_script_runs_as_an_unprivileged_host_uid_without_capabilities():
    result = run(IDENTITY)
    seen = json.loads(result.stdout or "{}")
    assert seen.get("uid") not in (None, 0), result.stdout + result.stderr
    assert {seen[k] for k in ("CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb")} == {"0000000000000000"}
    assert seen["NoNewPrivs"] == "1"


SECCOMP = """
import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
status = [line.split()[1] for line in open("/proc/self/status") if line.startswith("Seccomp:")]
nested = libc.unshare(0x10000000)  # CLONE_NEWUSER: a user namespace of its own
print(status, nested, os.strerror(ctypes.get_errno()) if nested else "made one")
"""


@needs_sandbox
def test_a_seccomp_filter_refuses_nested_user_namespaces():
    result = run(SECCOMP)
    assert result.stdout.startswith("['2'] -1 "), result.stdout + result.stderr


OTHER_PROCESSES = """
import os
reached = []
for pid in [p for p in os.listdir("/proc") if p.isdigit() and int(p) != os.getpid()]:
    for entry in ("environ", "fd", "mem", "cmdline"):
        path = f"/proc/{pid}/{entry}"
        try:
            os.listdir(path) if entry == "fd" else open(path, "rb").read(1)
            reached.append(f"{pid}/{entry}")
        except OSError:
            pass
print("reached", [r for r in reached if not r.endswith("cmdline")], "secret" if any(
    b"SCRUB_PROBE_SECRET" in open(f"/proc/{r.split('/')[0]}/environ", "rb").read()
    for r in reached if r.endswith("environ")) else "no secret")
"""


@needs_sandbox
def test_no_other_process_environment_or_descriptors_are_reachable(monkeypatch):
    monkeypatch.setenv("SCRUB_PROBE_SECRET", "hunter2")
    result = run(OTHER_PROCESSES)
    assert result.stdout == "reached [] no secret\n", result.stdout + result.stderr


@needs_sandbox
def test_the_fork_servers_proc_entries_are_out_of_reach(monkeypatch):
    monkeypatch.setenv("SCRUB_PROBE_SECRET", "hunter2")
    with WarmRunner(PY, limits(timeout_s=30)) as runner:
        result = runner(OTHER_PROCESSES)
        assert runner.cold_runs == 0
    assert result.stdout == "reached [] no secret\n", result.stdout + result.stderr


FORGE = """
import json, os, stat
answer = json.dumps({"duration": 0.0, "timed_out": False, "exit_code": 0, "signal": None,
                     "stdout": "FORGED", "stderr": ""}) + "\\n"
for pid in [p for p in os.listdir("/proc") if p.isdigit()]:
    try:
        fds = os.listdir(f"/proc/{pid}/fd")
    except OSError:
        continue
    for fd in fds:
        path = f"/proc/{pid}/fd/{fd}"
        try:
            if stat.S_ISFIFO(os.stat(path).st_mode):
                with open(path, "w") as pipe:
                    pipe.write(answer)
        except OSError:
            pass
raise ValueError("the real failure")
"""


@needs_sandbox
def test_a_candidate_cannot_forge_the_answer_of_a_warm_run():
    with WarmRunner(PY, limits(timeout_s=30)) as runner:
        forged = runner(FORGE)
        after = runner("print('mine')\n")
    assert forged.exit_code == 1 and "the real failure" in forged.stderr and "FORGED" not in forged.stdout
    assert after.stdout == "mine\n" and after.exit_code == 0


DAEMON = """
import os, subprocess, time
subprocess.Popen(["sleep", "300"], start_new_session=True)  # detached: its own session
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        os.execvp("sleep", ["sleep", "301"])
    os._exit(0)
time.sleep(0.2)
print("left")
"""
SURVIVORS = """
import os
found = []
for pid in [p for p in os.listdir("/proc") if p.isdigit()]:
    try:
        found.append(open(f"/proc/{pid}/cmdline", "rb").read().split(b"\\0")[0].decode())
    except OSError:
        pass
print(sorted(f for f in found if "sleep" in f))
"""


@needs_sandbox
def test_no_process_a_warm_run_starts_survives_it():
    with WarmRunner(PY, limits(timeout_s=30)) as runner:
        assert runner(DAEMON).stdout == "left\n"
        result = runner(SURVIVORS)
    assert result.stdout == "[]\n", result.stdout + result.stderr


PLANT = """
import os
for where in ["/tmp/left.txt", "/dev/shm/left.txt", "../left.txt"] + [
        f"../run{n}/planted.py" for n in range(8)]:
    try:
        os.makedirs(os.path.dirname(os.path.abspath(where)), exist_ok=True)
        open(where, "w").write("PLANTED = True\\n")
    except OSError:
        pass
"""
FIND_PLANTED = """
import os, sys
sys.path.insert(0, os.getcwd())
try:
    import planted
    imported = True
except ImportError:
    imported = False
print([p for p in ("/tmp/left.txt", "/dev/shm/left.txt", "../left.txt") if os.path.exists(p)], imported)
"""


@needs_sandbox
def test_a_warm_run_leaves_no_files_for_the_next_one():
    with WarmRunner(PY, limits(timeout_s=30)) as runner:
        runner(PLANT)
        result = runner(FIND_PLANTED)
    assert result.stdout == "[] False\n", result.stdout + result.stderr


HOG = """
import os, time
children = []
for _ in range(4):
    pid = os.fork()
    if pid == 0:
        held = b"x" * (256 * 1024 * 1024)  # touched: resident
        time.sleep(4)
        os._exit(0)
    children.append(pid)
print("all held" if all(os.waitpid(pid, 0)[1] == 0 for pid in children) else "some died")
"""


@needs_sandbox
def test_memory_is_a_total_over_all_the_runs_processes():
    result = run(HOG, memory_bytes=768 * MiB)
    assert "all held" not in result.stdout, result.stdout + result.stderr


FORK_MANY = """
import os, time
started = 0
children = []
for _ in range(64):
    try:
        pid = os.fork()
    except OSError:
        break
    if pid == 0:
        time.sleep(5)
        os._exit(0)
    children.append(pid)
print(len(children))
for pid in children:
    os.kill(pid, 9)
"""


@needs_sandbox
def test_processes_are_a_total_over_the_run():
    result = run(FORK_MANY, processes=32)
    assert result.stdout.strip().isdigit() and int(result.stdout) < 32, result.stdout + result.stderr


def _filler(paths: list[str], each: int) -> str:
    return (f"import errno\nwritten = 0\nfor path in {paths!r}:\n"
            "    try:\n        with open(path, 'wb') as f:\n"
            f"            for _ in range({each}):\n                f.write(b'x' * (1024 * 1024))\n"
            "                written += 1\n"
            "    except OSError as e:\n        print('full', errno.errorcode[e.errno], written)\n"
            "        break\nelse:\n    print('wrote', written)\n")


@needs_sandbox
def test_dev_shm_is_capped():
    result = run(_filler(["/dev/shm/big"], 64), shm_bytes=32 * MiB)
    assert result.stdout.startswith("full ENOSPC"), result.stdout + result.stderr


@needs_sandbox
def test_scratch_and_tmp_are_capped_together():
    result = run(_filler(["/scratch/a.bin", "/tmp/b.bin"], 24), scratch_bytes=32 * MiB)
    assert result.stdout.startswith("full ENOSPC"), result.stdout + result.stderr


def test_without_isolation_the_environment_is_cleared_and_a_warning_says_what_is_open(tmp_path):
    probe = ("import sys\nfrom pathlib import Path\nfrom issuetriage.scrub.model import Interpreter\n"
             "from issuetriage.scrub.sandbox import run_script\n"
             "r = run_script('import os; print(sorted(os.environ))', Interpreter('py', Path(sys.executable)),"
             " isolation=None)\nprint(r.stdout)\n")
    env = {**os.environ, "SCRUB_PROBE_SECRET": "hunter2", "GITHUB_TOKEN": "ghp_probe"}
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, env=env, timeout=60)
    names = json.loads(done.stdout.strip().replace("'", '"'))
    assert "SCRUB_PROBE_SECRET" not in names and "GITHUB_TOKEN" not in names
    assert "warning: no isolation" in done.stderr and "environ" in done.stderr
