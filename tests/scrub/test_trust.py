"""Scrub you can trust (#27): a kept script still tests the package's bug, and verdicts match the report.

Each library here is a module written into tmp_path, one folder per version, put on PYTHONPATH
(no network, no sandbox: runs are plain subprocesses of this interpreter).
"""

import json
import sys
import threading
from pathlib import Path

from scrub_helpers import block, make_issue

from issuetriage.scrub.expected import expected_from_text, parse_failure
from issuetriage.scrub.flow import Options, scrub
from issuetriage.scrub.minimize import minimize
from issuetriage.scrub.model import Expected, Interpreter, Outcome, RunResult
from issuetriage.scrub.outcome import Oracle, classify
from issuetriage.scrub.report import to_json, to_markdown
from issuetriage.scrub.sandbox import run_script
from issuetriage.scrub.standin import forcing_identity


def library(root: Path, name: str, version: str, source: str) -> Interpreter:
    folder = root / f"{name}-{version}"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{name}.py").write_text(source)
    return Interpreter(f"{name}-{version}", Path(sys.executable), (folder,))


# A parser library that ignores --verbose (the bug), and a repro with a stub parser the reporter
# keeps for unit tests: taking the stub's branch fails the same assertion without the library.
PARSELIB = "def parse(argv):\n    return {'verbose': False, 'args': [a for a in argv if not a.startswith('-')]}\n"
STUBBED = '''
import json
from parselib import parse

USE_STUB = False


class StubParser:
    """What our unit tests use instead of parselib."""

    def parse(self, argv):
        return {"verbose": False, "args": []}


def options(argv):
    if not USE_STUB:
        return parse(argv)
    return StubParser().parse(argv)


settings = {"argv": ["--verbose", "input.txt"], "color": False}
opts = options(settings["argv"])
print(json.dumps(opts))
print(opts["verbose"] == True)
'''


def test_without_a_known_fix_a_candidate_that_fails_without_the_library_is_not_kept(tmp_path):
    lib = library(tmp_path, "parselib", "1.0", PARSELIB)
    report = scrub(make_issue("`--verbose` is ignored, the last line prints False:\n" + block(STUBBED)),
                   Options(interpreters=(lib,), isolation=None, runs=1, workers=2))
    mini = report.minimized
    assert report.outcome is Outcome.SAME_ERROR and mini is not None, report.minimize_note
    assert "StubParser" not in mini.code and "parse(" in mini.code and "parselib" in mini.code, mini.code
    assert "--verbose" in mini.code, mini.code  # no stand-in can tell `parse([])` from the bug: inputs stay
    assert report.verified is not None and report.verified.how == "stand-in"
    assert report.verified.packages == ("parselib",)
    assert "replaced by an empty stand-in" in to_markdown(report)


def _stand_in_oracle(tmp_path, expected):
    from issuetriage.scrub.standin import stand_in

    lib = library(tmp_path, "parselib", "1.0", PARSELIB)
    standing = stand_in(lib, ["parselib"], tmp_path / "standin")
    return Oracle(lambda code: run_script(code, lib, isolation=None), expected, False,
                  stand_in=lambda code: run_script(code, standing, isolation=None), stand_in_names=("parselib",))


def test_without_a_fix_an_assertion_must_test_a_value_computed_by_the_package(tmp_path):
    message = "scrub: wrong result still present"
    judge = _stand_in_oracle(tmp_path, Expected("AssertionError", message, source="assertion"))
    real = f"from parselib import parse\nassert parse(['--verbose'])['verbose'] == True, {message!r}\n"
    stub = f"import parselib\nclass S:\n    v = False\nassert S.v == True, {message!r}\n"
    unused = f"from parselib import parse\nx = {{'verbose': False}}\nassert x['verbose'], {message!r}\n"
    ignored = (f"import parselib\ndef check(opts):\n    opts['verbose']\n"
               f"assert check(parselib.parse(['--verbose'])) == True, {message!r}\n")  # returns nothing
    assert judge(real) is True and judge.calls == 2  # the run, then the stand-in run
    assert [judge(c) for c in (stub, unused, ignored)] == [False, False, False] and judge.calls == 2  # no run needed
    assert judge(f"x = {{'verbose': False}}\nassert x['verbose'], {message!r}\n") is False


def test_identity_with_a_package_value_forces_the_stand_in(tmp_path):
    message = "scrub: wrong result still present"
    judge = _stand_in_oracle(tmp_path, Expected("AssertionError", message, source="assertion"))
    assert judge(f"from parselib import parse\nassert parse(['-v'])['verbose'] is True, {message!r}\n") is True
    assert judge(f"import parselib\nassert parselib.parse(['-v'])['verbose'] is not False, {message!r}\n") is True
    assert forcing_identity("a = 1\nb = a is None or a is not b\n") == \
        "a = 1\nb = _scrub_same(a, None) or not _scrub_same(a, b)"


def test_the_stand_in_run_rejects_output_printed_without_the_package(tmp_path):
    judge = _stand_in_oracle(tmp_path, Expected(None, "", source="output", output="verbose: False"))
    assert judge("from parselib import parse\nprint('verbose:', parse(['--verbose'])['verbose'])\n") is True
    assert judge("import parselib\nprint('verbose:', 1 == 2)\n") is False  # the same output with a stand-in
    assert judge.calls == 4


# A number parser whose 1.0 rejects an upper-case exponent (the bug); 2.0 accepts it, and both
# refuse a non-string, 2.0 with another error: that refusal is not the reported bug.
NUMLIB = {"1.0": "def parse(text):\n    if not isinstance(text, str) or 'E' in text:\n"
                 "        raise ValueError(f'invalid number {text!r}')\n    return float(text)\n",
          "2.0": "def parse(text):\n    if not isinstance(text, str):\n        raise TypeError('parse() wants text')\n"
                 "    return float(text)\n"}


def test_with_a_known_fix_a_candidate_must_pass_on_the_fixing_release(tmp_path):
    old, new = (library(tmp_path, "numlib", v, src) for v, src in NUMLIB.items())
    judge = Oracle(lambda code: run_script(code, old, isolation=None), Expected("ValueError", "invalid number"),
                   True, control=lambda code: run_script(code, new, isolation=None))
    assert judge("from numlib import parse\nparse('0E2')\n") is True
    assert judge("from numlib import parse\nparse([])\n") is False  # fails on 2.0 too, differently


def test_with_deferred_control_runs_every_kept_script_still_passes_on_the_fix(tmp_path):
    old, new = (library(tmp_path, "numlib", v, src) for v, src in NUMLIB.items())
    expected = Expected("ValueError", "invalid number")
    failing, controls = set(), []

    def affected(code: str) -> RunResult:
        result = run_script(code, old, isolation=None)
        if classify(result, expected) is Outcome.SAME_ERROR:
            failing.add(code)
        return result

    def control(code: str) -> RunResult:
        controls.append(code)
        return run_script(code, new, isolation=None)

    judge = Oracle(affected, expected, True, control=control)
    repro = ("from numlib import parse\n\ndef load(rows, seen):\n"
             + "".join(f"    seen.append(parse('{i}.5'))\n" for i in range(12))
             + "    return [parse(r) for r in rows]\n\nload(['1.5', '0E2'], [])\n")
    result = minimize(repro, judge, workers=2)
    assert result is not None and "'0E2'" in result.code and "seen" not in result.code
    assert classify(run_script(result.code, new, isolation=None), expected) is Outcome.PASSES
    assert result.code in controls and len(controls) == len(set(controls)) <= len(failing)


FAILS = RunResult(1, None, 0.0, "", 'Traceback (most recent call last):\n  File "/work/repro.py", line 1, in <module>\n'
                                  "ValueError: invalid number '0E2'\n")
PASSES = RunResult(0, None, 0.0, "", "")


def test_a_fresh_candidate_runs_on_both_releases_at_once():
    # each run waits for the other: judged one after the other, the barrier breaks
    both = threading.Barrier(2, timeout=30)

    def meet(result: RunResult) -> RunResult:
        both.wait()
        return result

    judge = Oracle(lambda code: meet(FAILS), Expected("ValueError", "invalid number"), False,
                   control=lambda code: meet(PASSES))
    assert judge("parse('0E2')\n") is True and judge.calls == 2


def test_a_screened_candidate_pays_only_its_control_run_and_a_failed_screen_is_never_kept():
    affected, control = [], []
    judge = Oracle(lambda code: affected.append(code) or (FAILS if "0E2" in code else PASSES),
                   Expected("ValueError", "invalid number"), False,
                   control=lambda code: control.append(code) or PASSES)
    assert judge.screen("parse('0E2')\n") is True and judge("parse('0E2')\n") is True
    assert affected == ["parse('0E2')\n"] and control == ["parse('0E2')\n"]
    assert judge("parse('1.5')\n") is False  # passes on the fix, but never failed as reported
    assert judge("parse(\n") is False and "parse(\n" not in affected + control  # no run for what cannot compile


def test_a_bisected_bug_is_minimized_to_a_script_that_passes_on_the_fix(tmp_path):
    interps = tuple(library(tmp_path, "numlib", v, src) for v, src in NUMLIB.items())
    repro = ("from numlib import parse\nrows = ['1.5', '0E2']\nvalues = []\nfor row in rows:\n"
             "    values.append(parse(row))\nprint(sum(values))\n")
    trace = ('Traceback (most recent call last):\n  File "/srv/load.py", line 5, in <module>\n'
             '  File "/venv/numlib.py", line 3, in parse\nValueError: invalid number \'0E2\'\n')
    report = scrub(make_issue(block(repro) + block(trace, "")),
                   Options(interpreters=interps, isolation=None, runs=1, workers=2))
    assert report.bisect.first_changed == "numlib-2.0" and report.minimized is not None
    code = report.minimized.code
    assert classify(run_script(code, interps[1], isolation=None), report.expected) is Outcome.PASSES, code
    assert report.verified.how == "differential" and report.verified.fixed == "numlib-2.0"
    assert "passes on `numlib-2.0`" in to_markdown(report)


def test_an_interrupted_hang_is_expected_as_a_hang_and_a_timeout_is_reproduced(tmp_path, capsys):
    from builders import run_cli

    trace = ('^C\nTraceback (most recent call last):\n  File "/srv/app.py", line 3, in <module>\n'
             '    wait()\n  File "/srv/app.py", line 2, in wait\n    time.sleep(600)\nKeyboardInterrupt\n')
    assert expected_from_text(trace).hang
    path = tmp_path / "issue.json"
    path.write_text(json.dumps({"repo": "acme/widgets", "number": 3, "title": "wait() hangs", "user": {"login": "op"},
                                "body": block("import time\ndef wait():\n    time.sleep(600)\nwait()\n")
                                + "I had to interrupt it:\n" + block(trace, "")}))
    code, out, _ = run_cli(capsys, "scrub", "--issue", str(path), "--no-isolation", "--python",
                           f"py={sys.executable}", "--runs", "1", "--no-minimize", "--timeout", "1", "--format", "json")
    data = json.loads(out)
    assert (code, data["verdict"], data["outcome"]) == (0, "reproduced", "same_error")


CHAINED = '''Traceback (most recent call last):
  File "/venv/lib/site-packages/cfglib.py", line 5, in section
    return self.cache[name]
KeyError: 'database'

During handling of the above exception, another exception occurred:

Traceback (most recent call last):
  File "/srv/app.py", line 9, in <module>
    cfg.section("database")
  File "/venv/lib/site-packages/cfglib.py", line 7, in section
    return self.sections[name]
KeyError: 'database'
'''


def test_a_chained_exception_is_matched_on_the_final_exception_and_the_chain():
    expected = expected_from_text(CHAINED)
    assert (expected.exception, expected.substring, expected.chain) == ("KeyError", "database", ("KeyError",))
    assert parse_failure(CHAINED).chain == ("KeyError",)
    unchained = CHAINED[CHAINED.index("Traceback", 10):]
    assert classify(RunResult(1, None, 0.1, "", CHAINED), expected) is Outcome.SAME_ERROR
    assert classify(RunResult(1, None, 0.1, "", unchained), expected) is Outcome.DIFFERENT_ERROR


CFGLIB = ('class Config:\n    def __init__(self):\n        self.cache, self.sections = {}, {}\n\n'
          '    def section(self, name):\n        try:\n            return self.cache[name]\n'
          '        except KeyError:\n            return self.sections[name]\n')


def test_a_chained_key_error_of_a_key_the_reporter_wrote_is_minimized(tmp_path):
    lib = library(tmp_path, "cfglib", "1.0", CFGLIB)
    repro = ("import os\nfrom cfglib import Config\nNAMES = ['database', 'cache']\ncfg = Config()\n"
             "print(os.getpid() > 0)\nfor name in NAMES:\n    cfg.section(name)\n")
    run = run_script(repro, lib, isolation=None)
    report = scrub(make_issue(block(repro) + block(run.stderr, "")),
                   Options(interpreters=(lib,), isolation=None, runs=1, workers=2))
    assert report.outcome is Outcome.SAME_ERROR
    assert report.minimized is not None, report.minimize_note  # before #27: "did not fail the same way again"
    assert report.expected.chain == ("KeyError",)
    assert report.minimized.lines < report.original_lines and to_json(report)["minimize_verified"]


def test_without_a_fix_a_candidate_must_compute_the_value_the_original_assertion_tested(tmp_path):
    message = "scrub: wrong result still present"
    judge = _stand_in_oracle(tmp_path, Expected("AssertionError", message, source="assertion"))
    judge.pin = True
    original = f"from parselib import parse\nassert parse(['--verbose'])['verbose'] == True, {message!r}\n"
    other = f"from parselib import parse\nassert parse(['--verbose', 'a'])['args'] == [], {message!r}\n"
    assert judge(original) is True and judge.pinned == "False"
    assert judge(other) is False  # fails the same assertion, with ['a'] instead of False: another bug


def test_a_minimized_script_that_was_not_verified_is_never_posted():
    """The comment shows a minimized script (and its trigger conditions) only when it was shown to
    still test the bug; otherwise it gives the original script's verdict alone."""
    from dataclasses import replace

    from issuetriage.scrub.flow import ScrubReport
    from issuetriage.scrub.model import MinimizeResult, Outcome, Verified
    from issuetriage.scrub.report import to_markdown

    report = ScrubReport(issue="o/r#1", ran=True, interpreter="py", outcome=Outcome.SAME_ERROR,
                         original_lines=30, triggers=("an empty list",),
                         minimized=MinimizeResult(code="import lib\nlib.f([])\n", lines=2, oracle_calls=5, rounds=1))
    unverified = to_markdown(report)
    assert "lib.f([])" not in unverified and "Minimized" not in unverified and "Trigger" not in unverified
    posted = to_markdown(replace(report, verified=Verified("differential", "1.0", "1.1")))
    assert "lib.f([])" in posted and "Minimized from 30 to 2 lines" in posted and "`1.1`" in posted
