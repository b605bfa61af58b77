"""Every form a reporter pastes a failure in becomes an expectation, and runs are judged by it."""

import sys
from pathlib import Path

import pytest
from scrub_helpers import block, make_issue

from issuetriage.evidence.repro import blocks_after_prose
from issuetriage.scrub.expected import expected_from_text, expected_output, parse_failure, warning_filter
from issuetriage.scrub.flow import Options, scrub
from issuetriage.scrub.model import Expected, Interpreter, Limits, Outcome, RunResult
from issuetriage.scrub.outcome import classify
from issuetriage.scrub.sandbox import run_script

PY = Interpreter("py", Path(sys.executable))
TAIL = '''  File "/srv/app/tool.py", line 40, in load
    return parse(text)
  File "/venv/lib/site-packages/tomlish/parser.py", line 812, in parse
    raise InvalidNumberError(self._pos)
tomlish.exceptions.InvalidNumberError: Invalid number at line 8 col 16'''
CHAINED = '''Traceback (most recent call last):
  File "app.py", line 3, in <module>
    d["k"]
KeyError: 'k'

During handling of the above exception, another exception occurred:

Traceback (most recent call last):
  File "app.py", line 5, in <module>
    raise ValueError("lookup of the widget table failed")
ValueError: lookup of the widget table failed'''


@pytest.mark.parametrize(("text", "exception", "substring"), [
    (TAIL, "tomlish.exceptions.InvalidNumberError", "Invalid number at line"),
    ("It dies with\n\nZeroDivisionError: division by zero\n", "ZeroDivisionError", "division by zero"),
    (CHAINED, "ValueError", "lookup of the widget table failed"),
    ("Traceback (most recent call last):\n  File \"a.py\", line 1, in <module>\n"
     "RecursionError: maximum recursion depth exceeded while calling a Python object",
     "RecursionError", "maximum recursion depth exceeded"),
    ('Traceback (most recent call last):\n  File "t.py", line 4, in test\n    assert total == 3\nAssertionError',
     "AssertionError", ""),
])
def test_tracebacks_full_partial_chained_and_bare(text, exception, substring):
    expected = expected_from_text(text)
    assert (expected.exception, expected.substring, expected.source) == (exception, substring, "traceback")


def test_a_recursion_traceback_whose_header_fell_out_of_the_tail_still_parses():
    frames = '  File "/lib/deep.py", line 9, in walk\n    return walk(node.child)\n' * 50
    failure = parse_failure(frames + "RecursionError: maximum recursion depth exceeded in comparison")
    assert failure.exception == "RecursionError" and failure.innermost_file == "/lib/deep.py"


@pytest.mark.parametrize(("text", "signal"), [
    ("Segmentation fault (core dumped)", 11), ("it prints Aborted and exits", 6),
    ("Bus error", 7), ("Illegal instruction (core dumped)", 4), ("Fatal Python error: bad", None),
])
def test_crashes_name_their_signal(text, signal):
    expected = expected_from_text(text)
    assert expected.crash and expected.signal == signal


def test_a_crash_with_another_signal_is_not_the_reported_one():
    segv = RunResult(-11, 11, 0.1, "", "")
    assert classify(segv, Expected(None, crash=True, signal=11)) is Outcome.SAME_ERROR
    assert classify(segv, Expected(None, crash=True, signal=6)) is Outcome.CRASH


def test_a_warning_line_becomes_an_error_while_it_is_emitted():
    text = "I see\n/srv/app.py:7: DeprecationWarning: frobnicate() is deprecated, use frob()\n"
    expected = expected_from_text(text)
    assert (expected.exception, expected.source) == ("DeprecationWarning", "warning")
    script = "import warnings\nwarnings.warn('frobnicate() is deprecated, use frob()', DeprecationWarning)\n"
    run = run_script(warning_filter(expected) + script, PY, isolation=None)
    assert classify(run, expected) is Outcome.SAME_ERROR
    quiet = run_script(warning_filter(expected) + "print('no warning')\n", PY, isolation=None)
    assert classify(quiet, expected) is Outcome.PASSES


def test_a_hang_is_expected_from_prose_and_a_timeout_is_then_the_same_error():
    expected = expected_from_text("parse() never returns on this input, CPU at 100%")
    assert expected.hang and expected.source == "hang"
    slow = run_script("import time\ntime.sleep(30)\n", PY, Limits(timeout_s=0.5), isolation=None)
    assert classify(slow, expected) is Outcome.SAME_ERROR
    assert classify(slow, Expected("ValueError", "x")) is Outcome.TIMEOUT


OUTPUT_ISSUE = ("Splitting an empty list gives one group.\n\n" + block("from mylib import split\nprint(split([]))\n")
                + "\nExpected output:\n\n" + block("[]", "") + "\nActual output:\n\n" + block("[[]]", ""))


def test_expected_and_actual_blocks_become_an_output_expectation():
    expected = expected_output(blocks_after_prose(OUTPUT_ISSUE))
    assert (expected.output, expected.wanted, expected.source) == ("[[]]", "[]", "output")
    wrong = run_script("print([[]])\n", PY, isolation=None)
    right = run_script("print([])\n", PY, isolation=None)
    assert classify(wrong, expected) is Outcome.SAME_ERROR and classify(right, expected) is Outcome.PASSES


@pytest.mark.parametrize("code", ["import no_such_module_here\n", "open('missing-input.csv')\n"])
def test_an_import_or_missing_file_failure_is_an_environment_problem(code):
    run = run_script(code, PY, isolation=None)
    assert classify(run, Expected("ValueError", "bad widget")) is Outcome.ENVIRONMENT
    assert classify(run, None) is Outcome.ENVIRONMENT


def test_a_missing_module_is_never_reported_as_still_reproducing():
    issue = make_issue(block("import no_such_module_here\nno_such_module_here.go()\n"))
    report = scrub(issue, Options(interpreters=(PY,), isolation=None, runs=1))
    assert report.outcome is Outcome.ENVIRONMENT and report.expected is None and report.minimized is None
    from issuetriage.scrub.report import to_markdown

    comment = to_markdown(report)
    assert "Still reproduces" not in comment and "environment problem" in comment


def test_a_different_failure_than_reported_says_so_and_never_still_reproduces():
    trace = "Traceback (most recent call last):\n  File \"x.py\", line 1\nKeyError: 'widget'\n"
    issue = make_issue(block("raise ValueError('something else entirely')\n") + block(trace, ""))
    report = scrub(issue, Options(interpreters=(PY,), isolation=None, runs=1))
    from issuetriage.scrub.report import to_markdown

    assert report.outcome is Outcome.DIFFERENT_ERROR and "Still reproduces" not in to_markdown(report)
    assert report.minimize_note.startswith("skipped: the outcome is different_error")
