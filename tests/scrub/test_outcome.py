import sys
from pathlib import Path

import pytest

from issuetriage.scrub.model import Expected, Interpreter, Limits, Outcome
from issuetriage.scrub.outcome import Oracle, classify
from issuetriage.scrub.sandbox import run_script

PY = Interpreter("py", Path(sys.executable))
EXPECTED = Expected("KeyError", "missing widget")


@pytest.mark.parametrize(("code", "outcome"), [
    ("raise KeyError('missing widget 42')", Outcome.SAME_ERROR),
    ("print('fine')", Outcome.PASSES),
    ("raise KeyError('something else')", Outcome.DIFFERENT_ERROR),
    ("raise ValueError('missing widget')", Outcome.DIFFERENT_ERROR),
    ("import ctypes\nctypes.string_at(0)", Outcome.CRASH),
    ("import time\ntime.sleep(20)", Outcome.TIMEOUT),
])
def test_each_outcome_class(code, outcome):
    result = run_script(code, PY, Limits(timeout_s=0.5 if outcome is Outcome.TIMEOUT else 2), isolation=None)
    assert classify(result, EXPECTED) is outcome


def test_crash_is_the_same_error_when_the_bug_is_a_crash():
    result = run_script("import ctypes\nctypes.string_at(0)", PY, isolation=None)
    assert classify(result, Expected(None, crash=True)) is Outcome.SAME_ERROR


def test_strict_oracle_rejects_a_forged_failure(fakelib):
    expected = Expected("ValueError", "length mismatch between operands")
    oracle = Oracle(lambda code: run_script(code, fakelib, isolation=None), expected, from_library=True)
    assert oracle("from fakelib import combine\ncombine([1], [])\n")
    assert not oracle("raise ValueError('combine: length mismatch between operands')\n")
    assert not oracle("import fakelib\nfakelib.combine([1], [2])\n")
    assert oracle.calls == 3
    assert oracle("from fakelib import combine\ncombine([1], [])\n") and oracle.calls == 3


def test_a_failure_that_the_fixed_release_shows_too_is_forged(tmp_path):
    from scrub_helpers import fake_library

    old, fixed = fake_library(tmp_path, "1.4"), fake_library(tmp_path, "2.0")
    message = "scrub: wrong result still present"
    expected = Expected("AssertionError", message, source="assertion")
    judge = Oracle(lambda code: run_script(code, old, isolation=None), expected, from_library=False,
                   control=lambda code: run_script(code, fixed, isolation=None))
    real = f"from fakelib import combine\nassert combine([1], [2, 3]) == [3], {message!r}\n"
    assert judge(real.replace("== [3]", "!= [3]")) is False  # passes on 1.4: no failure at all
    forged = f"import fakelib\nassert fakelib.VERSION is None, {message!r}\n"
    assert judge(forged) is False
    assert judge(f"assert 0, {message!r}\n") is False  # a constant: refused before any control run
    assert judge(f"import fakelib\nassert fakelib.VERSION >= '2.0', {message!r}\n") is True  # only 1.4 fails
