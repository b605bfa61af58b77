"""The dead-code pass removes what the structural passes leave: write-only names, overwritten
assignments, unreachable statements, never-taken branches; each removal is an oracle's call."""

import ast

import pytest

from issuetriage.scrub.deadcode import dead_edits
from issuetriage.scrub.minimize import minimize
from issuetriage.scrub.model import Expected
from issuetriage.scrub.outcome import Oracle
from issuetriage.scrub.sandbox import run_script
from issuetriage.scrub.transforms import apply_edits

JUNK = '''from fakelib import combine
config = {"lr": 0.1}
config["momentum"] = 0.9
config.update(debug=True)
left = [0]
left = [1, 2]
combine(left, [3])
'''


def _applied(code):
    return {e.label: apply_edits(code, [e]) for e in dead_edits(code)}


def test_a_write_only_config_dict_goes_in_one_edit():
    after = _applied(JUNK)["drop write-only config"]
    assert "config" not in after and "combine(left, [3])" in after


def test_an_assignment_overwritten_before_any_read_goes():
    labels = _applied(JUNK)
    after = labels["drop overwritten: left = [0]"]
    assert "left = [0]" not in after and "left = [1, 2]" in after


@pytest.mark.parametrize(("code", "gone"), [
    ("def f():\n    raise ValueError('x')\n    cleanup()\nf()\n", "cleanup"),
    ("if False:\n    expensive()\nelse:\n    cheap()\n", "expensive"),
    ("x = 1\nprint(x)\nx = 2\nprint(x)\n", None),  # x is read between: not dead
])
def test_unreachable_and_never_taken_code(code, gone):
    results = _applied(code)
    if gone is None:
        assert not [label for label in results if label.startswith("drop overwritten")]
    else:
        assert any(gone not in after and ast.parse(after) for after in results.values())


def test_minimization_leaves_no_write_only_junk(fakelib):
    expected = Expected("ValueError", "length mismatch between operands")
    oracle = Oracle(lambda code: run_script(code, fakelib, isolation=None), expected, from_library=True)
    bloated = ("from fakelib import combine\nsettings = {'size': 2}\nsettings['extra'] = 1\n"
               "settings.update(verbose=False)\nleft = [1, 2]\nright = [3]\ncombine(left, right)\n")
    result = minimize(bloated, oracle, workers=2)
    assert "settings" not in result.code and "combine(" in result.code
    assert result.stopped
