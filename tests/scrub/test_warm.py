"""Warm runs (fork servers) behave like cold runs, isolate the same way and fall back cold."""

import os
import sys
from pathlib import Path

import pytest
from scrub_helpers import block, make_issue, needs_sandbox

from issuetriage.scrub.expected import parse_failure
from issuetriage.scrub.flow import Options, scrub
from issuetriage.scrub.model import Expected, Interpreter, Limits, Outcome
from issuetriage.scrub.outcome import classify
from issuetriage.scrub.report import to_json
from issuetriage.scrub.sandbox import SCRIPT, run_script
from issuetriage.scrub.warm import WarmRunner, imported_modules

PY = Interpreter("py", Path(sys.executable))
EXPECTED = Expected("ValueError", "length mismatch between operands")

CASES = {
    "passes": ("print('fine')\n", Outcome.PASSES),
    "library error": ("from fakelib import combine\ncombine([1, 2], [3])\n", Outcome.SAME_ERROR),
    "other error": ("import fakelib\nfakelib.missing()\n", Outcome.DIFFERENT_ERROR),
    "exit code": ("import sys\nprint('bye')\nsys.exit(3)\n", Outcome.DIFFERENT_ERROR),
    "exit message": ("raise SystemExit('stopped here')\n", Outcome.DIFFERENT_ERROR),
    "segfault": ("import ctypes\nctypes.string_at(0)\n", Outcome.CRASH),
    "timeout": ("import time\ntime.sleep(30)\n", Outcome.TIMEOUT),
}


@pytest.mark.parametrize("name", CASES)
def test_warm_run_matches_cold_run(name, fakelib):
    code, outcome = CASES[name]
    limits = Limits(timeout_s=0.5 if outcome is Outcome.TIMEOUT else 2)  # the sleeper never ends
    cold = run_script(code, fakelib, limits, isolation=None)
    with WarmRunner(fakelib, limits, isolation=None, preload=imported_modules(code)) as runner:
        warm = runner(code)
        assert runner.cold_runs == 0
    assert classify(cold, EXPECTED) is classify(warm, EXPECTED) is outcome
    assert (warm.exit_code, warm.signal, warm.timed_out) == (cold.exit_code, cold.signal, cold.timed_out)
    assert warm.stdout == cold.stdout
    assert parse_failure(warm.stderr, SCRIPT) == parse_failure(cold.stderr, SCRIPT)
    assert warm.isolation == "none (warm)"


def test_every_run_starts_from_the_preloaded_state_not_the_last_run(fakelib):
    with WarmRunner(fakelib, isolation=None, preload=("fakelib",)) as runner:
        first = runner("import sys, fakelib\nprint('fakelib' in sys.modules)\nfakelib.VERSION = 'changed'\n"
                       "open('left.txt', 'w').write('x')\n")
        second = runner("import os, fakelib\nprint(fakelib.VERSION, os.path.exists('left.txt'))\n")
    assert first.stdout == "True\n"  # imported by the server before the script ran
    assert second.stdout == "1.4 False\n"


def test_library_modules_a_run_imported_lazily_are_imported_by_the_server(fakelib):
    (fakelib.pythonpath[0] / "lazymod.py").write_text("LOADED = True\n")
    check = "import sys\nprint(sorted(m for m in ('lazymod', 'planted', 'forged') if m in sys.modules))\n"
    with WarmRunner(fakelib, isolation=None) as runner:
        runner("def use():\n    import lazymod\nuse()\n")
        assert runner(check).stdout == "['lazymod']\n"


def test_a_script_cannot_plant_modules_in_the_server(fakelib):
    # a module written into the scratch dir, imported by the run, and a forged list of learned names
    plant = ("import os, sys, json\nfor where in ('planted.py', '../forged.py'):\n"
             "    open(where, 'w').write('PLANTED = 1\\n')\n"
             "sys.path.insert(0, '..')\nimport planted\n"
             "json.dump(['planted', 'forged'], open('modules.json', 'w'))\nos._exit(1)\n")
    check = "import sys\nprint(sorted(m for m in ('planted', 'forged') if m in sys.modules))\n"
    with WarmRunner(fakelib, isolation=None) as runner:
        runner(plant)
        result = runner(check)
    assert result.stdout == "[]\n" and result.isolation == "none (warm)" and runner.cold_runs == 0


def test_imported_modules_are_top_level_absolute_imports():
    code = ("from __future__ import annotations\nimport torch.nn as nn, numpy\nfrom . import local\n"
            "from torch.utils.data import DataLoader\ndef f():\n    import json\n")
    assert imported_modules(code) == ("torch", "numpy", "json")
    assert imported_modules("def broken(:\n") == ()


def test_a_script_that_kills_its_server_gets_a_cold_run_and_a_new_server():
    # warm children run in <scratch>/runN; the cold fallback runs in the scratch itself, where
    # (without isolation) its parent would be this test process
    killer = ("import os, signal\nif os.path.basename(os.getcwd()).startswith('run'):\n"
              "    os.kill(os.getppid(), signal.SIGKILL)\nprint('cold')\n")
    with WarmRunner(PY, isolation=None) as runner:
        result = runner(killer)
        assert result.stdout == "cold\n" and result.isolation == "none" and runner.cold_runs == 1
        after = runner("print('again')\n")
    assert after.stdout == "again\n" and after.isolation == "none (warm)"


def test_a_server_that_cannot_start_means_cold_runs(tmp_path):
    python = tmp_path / "python"  # fails when started as a server (5 arguments), works otherwise
    python.write_text(f"#!/bin/sh\n[ $# -eq 5 ] && exit 5\nexec {sys.executable} \"$@\"\n")
    python.chmod(0o755)
    with WarmRunner(Interpreter("odd", python), isolation=None) as runner:
        first = runner("print('cold anyway')\n")
        second = runner("print('still cold')\n")
    assert (first.stdout, second.stdout) == ("cold anyway\n", "still cold\n")
    assert runner.cold_runs == 2 and first.isolation == "none"


@needs_sandbox
def test_warm_runs_are_isolated_like_cold_ones(tmp_path, monkeypatch):
    monkeypatch.setenv("SCRUB_TEST_SECRET", "hunter2")
    target = tmp_path / "escaped.txt"
    code = (f"import os\ntry:\n    open({str(target)!r}, 'w').write('x')\n    print('wrote')\n"
            "except OSError:\n    print('blocked')\n"
            "print('SCRUB_TEST_SECRET' in os.environ, os.path.exists('/root/.bash_history'))\n"
            "import socket\ns = socket.socket()\ns.settimeout(2)\n"
            "try:\n    s.connect(('1.1.1.1', 53))\n    print('online')\nexcept OSError:\n    print('offline')\n"
            "open('inside.txt', 'w').write('ok')\nprint(os.getcwd().startswith('/scratch/'))\n")
    with WarmRunner(PY, Limits(timeout_s=20)) as runner:
        result = runner(code)
    assert result.stdout == "blocked\nFalse False\noffline\nTrue\n", result.stderr
    assert not target.exists() and result.isolation.startswith("bwrap") and result.isolation.endswith("(warm)")


@needs_sandbox
def test_warm_runs_keep_the_file_size_limit():
    code = "with open('big.bin', 'wb') as f:\n    f.write(b'0' * (8 * 1024 * 1024))\n"
    with WarmRunner(PY, Limits(file_bytes=1024 * 1024)) as runner:
        assert runner(code).exit_code != 0 and runner.cold_runs == 0


TRACE = ('Traceback (most recent call last):\n  File "bug.py", line 5, in <module>\n'
         '  File "fakelib.py", line 6, in combine\n'
         'ValueError: combine: length mismatch between operands (2 vs 1)\n')


def test_scrub_minimizes_warm_and_verifies_cold(fakelib):
    code = ("import json\nimport fakelib\nleft = [1, 2]\nright = [3]\nprint(json.dumps({'a': 1}))\n"
            "print(fakelib.combine(left, right))\n")
    issue = make_issue(block(code) + "\nfails:\n" + block(TRACE, ""))
    data = to_json(scrub(issue, Options(interpreters=(fakelib,), isolation=None, workers=2)))
    assert data["outcome"] == "same_error" and data["minimized_lines"] < data["original_lines"]
    assert data["minimize_runs"].startswith("warm (fork server, json, fakelib pre-imported; 0 fell back")
    assert data["minimize_runs"].endswith("result verified cold")


def test_scrub_falls_back_cold_when_a_warm_run_disagrees(tmp_path):
    """A library that reads the environment when imported behaves differently once pre-imported."""
    folder = tmp_path / "envlib"
    folder.mkdir()
    (folder / "envlib.py").write_text(
        "import os\nSTRICT = os.environ.get('ENVLIB_STRICT') == '1'\n\n"
        "def check(xs):\n    if STRICT and len(xs) > 1:\n"
        "        raise ValueError(f'strict mode rejects {len(xs)} items')\n    return xs\n")
    interp = Interpreter("envlib", Path(sys.executable), (folder,))
    code = ("import os\nos.environ['ENVLIB_STRICT'] = '1'\nimport envlib\nitems = [1, 2, 3]\n"
            "extra = len(items)\nprint(envlib.check(items))\n")
    trace = ('Traceback (most recent call last):\n  File "bug.py", line 6, in <module>\n'
             '  File "envlib.py", line 6, in check\nValueError: strict mode rejects 3 items\n')
    issue = make_issue(block(code) + "\nfails:\n" + block(trace, ""))
    data = to_json(scrub(issue, Options(interpreters=(interp,), isolation=None, workers=2,
                                        allow=frozenset({"environment"}))))
    assert data["outcome"] == "same_error" and data["minimize_runs"] == "cold"
    assert data["minimized"] is not None and "ENVLIB_STRICT" in data["minimized"]
    assert os.environ.get("ENVLIB_STRICT") is None
