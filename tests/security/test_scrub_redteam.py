"""Red team of the scrub surface (#26 item 4, #27 item 5): memory a repro holds outside its
processes' resident pages, safety-review evasions for file writes, and benign writes that must run.

The issue's attack held 9 GiB of memfd under an 8 GiB limit. The same attacks run here scaled
down (a 160 MiB limit, 240 MiB held, so a run costs a fraction of a second and this 24 GiB machine
is never at risk): the accounting does not depend on the size, only on which pages are counted.
Each memory attack tries its mechanism and, where the kernel refuses it, the next place a repro
could put pages, then holds them for 1.5 s; it got through when it runs to completion (exit 0).
Without a cgroup the limit is a 50 ms poll, so a run may print `held` just before it is killed.

Only entry points older than these fixes are used (`run_script`, `Limits` through `limits()`,
`review`), so the same file runs against an older checkout to count what used to get through:
    PYTHONPATH=<old checkout>/src python -m pytest tests/security/test_scrub_redteam.py
"""

from __future__ import annotations

import dataclasses
import sys
from pathlib import Path

import pytest

from issuetriage.scrub.model import Interpreter, Limits
from issuetriage.scrub.safety import review
from issuetriage.scrub.sandbox import isolation_mode, run_script

PY = Interpreter("py", Path(sys.executable))
MiB = 1024 * 1024
LIMIT_MIB, HELD_MIB = 160, 240
needs_sandbox = pytest.mark.skipif(isolation_mode() is None, reason="bwrap does not work here")


def limits(**values) -> Limits:
    known = {f.name for f in dataclasses.fields(Limits)}
    return Limits(**{k: v for k, v in values.items() if k in known})


# Helpers every memory attack starts with: where pages can live, tried in order.
PRELUDE = f"""
import ctypes, mmap, os, socket, time
MiB, TOTAL, CHUNK = 1024 * 1024, {HELD_MIB}, 48
held, keep = 0, []

def fill(fd, mib):
    block = b"x" * MiB
    spilled = 0
    for _ in range(mib):
        try:
            os.write(fd, block)
        except OSError:  # that place is full: go on in the next one
            spilled += 1
            fd = os.open(f"/tmp/spill{{len(keep)}}-{{spilled}}", os.O_RDWR | os.O_CREAT, 0o600)
            keep.append(fd)
            os.write(fd, block)

def shm_file(n):
    for folder in ("/dev/shm", "/tmp", "."):
        try:
            return os.open(f"{{folder}}/hold{{n}}", os.O_RDWR | os.O_CREAT, 0o600)
        except OSError:
            continue

def memfd(n):
    try:
        return os.memfd_create(f"hold{{n}}")
    except OSError:
        return shm_file(n)

def finish():
    print("held", held, flush=True)
    time.sleep(1.5)
"""

ATTACKS = {
    "memfd written": """
for n in range(TOTAL // CHUNK):
    fd = memfd(n); fill(fd, CHUNK); keep.append(fd); held += CHUNK
finish()
""",
    "memfd mapped, touched, unmapped": """
for n in range(TOTAL // CHUNK):
    fd = memfd(n); os.ftruncate(fd, CHUNK * MiB)
    m = mmap.mmap(fd, CHUNK * MiB)
    for i in range(0, CHUNK * MiB, 4096):
        m[i] = 1
    m.close(); keep.append(fd); held += CHUNK
finish()
""",
    "memfd in flight over a unix socket": """
a, b = socket.socketpair(socket.AF_UNIX)
for n in range(TOTAL // CHUNK):
    fd = memfd(n); fill(fd, CHUNK)
    socket.send_fds(a, [b"x"], [fd]); os.close(fd); held += CHUNK
try:
    os.unlink("/dev/shm/hold0")
except OSError:
    pass
finish()
""",
    "unlinked /dev/shm files kept open": """
for n in range(TOTAL // CHUNK):
    fd = shm_file(n); fill(fd, CHUNK); keep.append(fd); held += CHUNK
    for folder in ("/dev/shm", "/tmp", "."):
        try:
            os.unlink(f"{folder}/hold{n}")
        except OSError:
            pass
finish()
""",
    "/dev/shm and /tmp files together": """
for n in range(TOTAL // CHUNK):
    folder = "/dev/shm" if n % 2 else "/tmp"
    try:
        fd = os.open(f"{folder}/hold{n}", os.O_RDWR | os.O_CREAT, 0o600)
        fill(fd, CHUNK); os.close(fd); held += CHUNK
    except OSError:
        pass
finish()
""",
    "SysV shared memory, detached": """
libc = ctypes.CDLL(None, use_errno=True)
libc.shmat.restype = ctypes.c_void_p
libc.shmat.argtypes = [ctypes.c_int, ctypes.c_void_p, ctypes.c_int]
libc.shmdt.argtypes = [ctypes.c_void_p]
for n in range(TOTAL // CHUNK):
    ident = libc.shmget(0, CHUNK * MiB, 0o1600)
    if ident < 0:
        fd = shm_file(n); fill(fd, CHUNK); keep.append(fd); held += CHUNK
        continue
    addr = libc.shmat(ident, None, 0)
    ctypes.memset(addr, 1, CHUNK * MiB); libc.shmdt(addr); held += CHUNK
finish()
""",
    "O_TMPFILE in /tmp": """
for n in range(TOTAL // CHUNK):
    fd = os.open("/tmp", os.O_TMPFILE | os.O_RDWR, 0o600); fill(fd, CHUNK); keep.append(fd); held += CHUNK
finish()
""",
    "shared anonymous mapping": """
m = mmap.mmap(-1, TOTAL * MiB, flags=mmap.MAP_SHARED)
for i in range(0, TOTAL * MiB, 4096):
    m[i] = 1
held = TOTAL
finish()
""",
}


@needs_sandbox
@pytest.mark.parametrize("name", list(ATTACKS))
def test_memory_outside_resident_pages_counts_against_the_limit(name):
    result = run_script(PRELUDE + ATTACKS[name], PY, limits(timeout_s=60, memory_bytes=LIMIT_MIB * MiB,
                                                           file_bytes=1024 * MiB))
    assert result.exit_code != 0 and not result.timed_out, f"{name}: {result.stdout}{result.stderr[-500:]}"


# The case, scaled: an 8 GiB limit and 9 GiB of memfd become 160 MiB and 240 MiB.
@needs_sandbox
def test_memfd_above_the_limit_is_killed_with_a_clear_outcome():
    result = run_script(PRELUDE + ATTACKS["memfd written"], PY,
                        limits(timeout_s=60, memory_bytes=LIMIT_MIB * MiB, file_bytes=1024 * MiB))
    assert result.signal == 9 and result.exit_code != 0, result.stdout + result.stderr[-500:]
    assert f"scrub: killed: the run held more than its memory limit of {LIMIT_MIB * MiB} bytes" in result.stderr


# Safety review: writes outside the run's folders, with the path built to look temporary.
EVASIONS = {
    "temp name rebound to /etc": "import tempfile\nd = tempfile.mkdtemp()\nd = '/etc'\nopen(d + '/cron.d/x', 'w')\n",
    "walrus rebinding": "import tempfile\nd = tempfile.mkdtemp()\nif (d := '/etc'):\n    open(d + '/x', 'w')\n",
    "climbing out of a temp folder": "import os, tempfile\nd = tempfile.mkdtemp()\n"
                                     "open(os.path.join(d, '..', '..', 'etc', 'x'), 'w')\n",
    "f-string rooted elsewhere": "import tempfile\nd = tempfile.mkdtemp()\nopen(f'/etc/{d}', 'w')\n",
    "augmented relative path": "p = 'out.txt'\np += '/../../etc/x'\nopen(p, 'w')\n",
    "home folder": "from pathlib import Path\n(Path.home() / '.bashrc').write_text('x')\n",
}


@pytest.mark.parametrize("name", list(EVASIONS))
def test_writes_outside_the_runs_folders_are_still_findings(name):
    assert "file_write" in {f.rule for f in review(EVASIONS[name])}, name


# Benign: a repro writing in its own temp or working folder (#27 item 5) is not held back.
BENIGN = {
    "temp folder join": "import os, tempfile\nwith tempfile.TemporaryDirectory() as d:\n"
                        "    path = os.path.join(d, 'a.toml')\n    with open(path, 'w') as f:\n        f.write('x')\n",
    "named temporary file reopened": "import tempfile\nwith tempfile.NamedTemporaryFile('w', delete=False) as f:\n"
                                     "    name = f.name\nwith open(name, 'w') as g:\n    g.write('y')\n",
    "working folder": "import os\nopen(os.path.join(os.getcwd(), 'out.txt'), 'w').write('x')\n",
    "gettempdir": "import os, tempfile\np = os.path.join(tempfile.gettempdir(), 'x.txt')\nopen(p, 'w').write('x')\n",
    "relative name": "name = 'out.txt'\nopen(name, 'w').write('x')\n",
}


@pytest.mark.parametrize("name", list(BENIGN))
def test_benign_writes_in_the_runs_own_folders_are_not_findings(name):
    assert review(BENIGN[name]) == [], name


@needs_sandbox
def test_benign_shared_memory_within_the_limit_runs():
    code = ("import mmap, os\nfd = os.open('/dev/shm/ok', os.O_RDWR | os.O_CREAT, 0o600)\n"
            "os.write(fd, b'x' * (16 * 1024 * 1024))\nm = mmap.mmap(-1, 32 * 1024 * 1024, flags=mmap.MAP_SHARED)\n"
            "m[0] = 1\nprint('fine')\n")
    result = run_script(code, PY, limits(timeout_s=60, memory_bytes=LIMIT_MIB * MiB))
    assert result.stdout == "fine\n" and result.exit_code == 0, result.stderr[-500:]
