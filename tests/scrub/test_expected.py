import sys
from pathlib import Path

from issuetriage.scrub.expected import add_wrong_result_assertion, distinctive, expected_from_text, parse_failure
from issuetriage.scrub.model import Interpreter, Outcome
from issuetriage.scrub.outcome import classify
from issuetriage.scrub.sandbox import run_script

LOG = '''Traceback (most recent call last):
  File "/home/u/repro.py", line 9, in <module>
    y = model(x)
  File "/site-packages/torch/nn/modules/linear.py", line 125, in forward
    return F.linear(input, self.weight, self.bias)
RuntimeError: mat1 and mat2 shapes cannot be multiplied (64x10 and 20x5)
'''


def test_traceback_gives_class_and_a_substring_without_sizes():
    expected = expected_from_text("It fails:\n" + LOG)
    assert expected.exception == "RuntimeError"
    assert expected.substring == "mat1 and mat2 shapes cannot be multiplied"


def test_parse_failure_finds_innermost_frame_and_script_line():
    failure = parse_failure(LOG, "repro.py")
    assert failure.innermost_file.endswith("linear.py") and failure.script_line == 9


def test_distinctive_skips_addresses_paths_and_quotes():
    assert distinctive("object at 0x7f00 has no attribute 'foo' in /a/b/c.py") == "has no attribute"


def test_crash_without_traceback_is_a_crash_expectation():
    assert expected_from_text("Segmentation fault (core dumped)").crash


def test_wrong_result_assertion_fails_while_the_bug_exists(tmp_path):
    script = "a = 0.1 + 0.2\nprint(a == 0.3)\n"
    new, expected = add_wrong_result_assertion(script)
    assert "assert a == 0.3" in new and expected.exception == "AssertionError"
    interp = Interpreter("py", Path(sys.executable))
    assert classify(run_script(new, interp, isolation=None), expected) is Outcome.SAME_ERROR
    fixed = new.replace("0.1 + 0.2", "0.3")
    assert classify(run_script(fixed, interp, isolation=None), expected) is Outcome.PASSES


def test_no_printed_check_means_no_assertion():
    assert add_wrong_result_assertion("print('hello')\n") is None
