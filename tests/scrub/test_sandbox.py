"""The sandbox really isolates: no network, no writes outside scratch, no host home or env."""

import socket
import sys
import threading
from pathlib import Path

import pytest
from scrub_helpers import needs_sandbox

from issuetriage.scrub.model import Interpreter, Limits
from issuetriage.scrub.sandbox import run_script

PY = Interpreter("py", Path(sys.executable))


@pytest.fixture
def listener():
    """A loopback TCP server on the host that records whether anyone connected."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen()
    server.settimeout(10)
    hits: list[bool] = []

    def accept() -> None:
        try:
            conn, _ = server.accept()
            hits.append(True)
            conn.close()
        except OSError:
            pass

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    yield server.getsockname()[1], hits
    server.close()


CONNECT = "import socket\ns = socket.socket()\ns.settimeout(3)\ns.connect(('127.0.0.1', {port}))\nprint('connected')\n"


@needs_sandbox
def test_sandbox_has_no_network(listener):
    port, hits = listener
    result = run_script(CONNECT.format(port=port), PY)
    assert result.exit_code != 0 and "connected" not in result.stdout and not hits


def test_without_isolation_the_same_script_connects(listener):
    port, hits = listener
    result = run_script(CONNECT.format(port=port), PY, isolation=None)
    assert "connected" in result.stdout


@needs_sandbox
def test_sandbox_cannot_write_outside_scratch(tmp_path):
    target = tmp_path / "escaped.txt"
    code = (f"import os\nfor p in [{str(target)!r}, '/usr/escaped.txt', '/etc/escaped.txt']:\n"
            "    try:\n        open(p, 'w').write('x')\n        print('wrote', p)\n"
            "    except OSError as e:\n        print('blocked', p)\n"
            "open('inside.txt', 'w').write('ok')\nprint('inside ok')\n")
    result = run_script(code, PY)
    assert "wrote" not in result.stdout and "inside ok" in result.stdout
    assert not target.exists() and not Path("/usr/escaped.txt").exists()
    assert not Path("/etc/escaped.txt").exists()


@needs_sandbox
def test_sandbox_hides_home_secrets_and_environment(tmp_path, monkeypatch):
    monkeypatch.setenv("SCRUB_TEST_SECRET", "hunter2")
    code = ("import os\nprint(sorted(os.environ))\nprint(os.path.exists('/etc/shadow'), "
            "os.path.exists(os.path.expanduser('~/.ssh')), os.path.exists('/root/.bash_history'))\n"
            "print(os.getcwd())\n")
    result = run_script(code, PY)
    assert "SCRUB_TEST_SECRET" not in result.stdout
    assert "False False False" in result.stdout and result.stdout.strip().endswith("/scratch")
    assert result.isolation.startswith("bwrap")


@needs_sandbox
def test_file_size_limit_stops_a_runaway_writer():
    code = "with open('big.bin', 'wb') as f:\n    f.write(b'0' * (8 * 1024 * 1024))\n"
    result = run_script(code, PY, Limits(file_bytes=1024 * 1024))
    assert result.exit_code != 0


def test_timeout_is_recorded():
    result = run_script("import time\ntime.sleep(30)\n", PY, Limits(timeout_s=0.5), isolation=None)
    assert result.timed_out and result.exit_code is None


@needs_sandbox
def test_segfault_shows_signal_11_through_bwrap():
    result = run_script("import ctypes\nctypes.string_at(0)\n", PY)
    assert result.signal == 11 and result.exit_code == 139
    assert "Fatal Python error" in result.stderr and 'File "repro.py", line 2' in result.stderr


def test_segfault_shows_minus_11_without_isolation():
    result = run_script("import ctypes\nctypes.string_at(0)\n", PY, isolation=None)
    assert result.signal == 11 and result.exit_code == -11


def test_no_isolation_is_refused_when_no_sandbox_works(monkeypatch):
    from issuetriage.errors import ReproError
    from issuetriage.scrub import sandbox

    monkeypatch.setattr(sandbox, "isolation_mode", lambda: None)
    with pytest.raises(ReproError, match="--no-isolation"):
        sandbox.run_script("print(1)", PY)
    assert sandbox.run_script("print(1)", PY, isolation=None).stdout == "1\n"


@needs_sandbox
def test_tmp_inside_the_sandbox_is_part_of_scratch():
    result = run_script("open('/tmp/t.txt', 'w').write('x')\nimport os\nprint(os.path.exists('/scratch/tmp/t.txt'))\n", PY)
    assert result.stdout == "True\n"


@needs_sandbox
def test_interpreter_and_library_under_tmp_stay_visible(tmp_path):
    """A CI checkout's venv or a library folder may live under /tmp, which the sandbox replaces."""
    import venv
    env_dir = tmp_path / "venv"
    venv.create(env_dir, with_pip=False)
    lib = tmp_path / "lib"
    lib.mkdir()
    (lib / "tinylib.py").write_text("VALUE = 42\n")
    interp = Interpreter("tmp-venv", env_dir / "bin" / "python", pythonpath=(lib,))
    result = run_script(f"import sys, tinylib\nprint(tinylib.VALUE, sys.prefix == {str(env_dir)!r})\n",
                        interp, Limits(timeout_s=60))
    assert result.stdout == "42 True\n", result.stderr
