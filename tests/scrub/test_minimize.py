"""Minimization keeps the exact failure, keeps the reporter's names, and shrinks a bloated repro."""

import ast

from issuetriage.scrub.astedit import count_lines
from issuetriage.scrub.expected import parse_failure
from issuetriage.scrub.holders import holder_edits
from issuetriage.scrub.minimize import minimize
from issuetriage.scrub.model import Expected, Outcome
from issuetriage.scrub.outcome import Oracle, classify, in_library
from issuetriage.scrub.rewrite import copy_edits
from issuetriage.scrub.sandbox import SCRIPT, run_script
from issuetriage.scrub.transforms import apply_edits, flatten_edits, inline_edits

BLOATED = '''
"""Reproduces a failure in fakelib.combine."""
import os
import sys
import json
import random
import logging
from fakelib import combine

logging.basicConfig(level=logging.WARNING)
log = logging.getLogger(__name__)
SETTINGS = {"size": 8, "extra": 3, "verbose": False, "name": "demo"}


class Options:
    def __init__(self, size, extra, name="demo"):
        self.size = size
        self.extra = extra
        self.name = name

    def describe(self):
        return f"Options(size={self.size}, extra={self.extra})"


def make_values(count):
    values = []
    for index in range(count):
        values.append(index * 2)
    return values


def unused_helper(x):
    return x + 1


def prepare(options):
    left = make_values(options.size)
    right = make_values(options.size + options.extra)
    log.info("prepared %d and %d", len(left), len(right))
    return left, right


def run(options):
    left, right = prepare(options)
    if SETTINGS["verbose"]:
        print("running", options.describe())
    result = combine(left, right)
    print("result", result)
    return result


def main():
    random.seed(0)
    options = Options(SETTINGS["size"], SETTINGS["extra"])
    print(json.dumps(SETTINGS))
    total = run(options)
    print(sum(total))
    print("done")


if __name__ == "__main__":
    main()
'''
EXPECTED = Expected("ValueError", "length mismatch between operands")


def _names(code):
    return {n.id for n in ast.walk(ast.parse(code)) if isinstance(n, ast.Name)}


def test_minimized_repro_keeps_the_exact_failure_and_the_names(fakelib):
    run = lambda code: run_script(code, fakelib, isolation=None)
    original = run(BLOATED)
    oracle = Oracle(run, EXPECTED, in_library(parse_failure(original.stderr, SCRIPT)))
    result = minimize(BLOATED, oracle, workers=2)
    assert result is not None and result.lines <= 10 < count_lines(BLOATED)
    final = run(result.code)
    assert classify(final, EXPECTED) is Outcome.SAME_ERROR
    failure = parse_failure(final.stderr, SCRIPT)
    assert failure.exception == "ValueError" and in_library(failure)
    assert _names(result.code) <= _names(BLOATED) | {"next", "iter"}
    assert result.oracle_calls == oracle.calls < 300


def test_nothing_is_returned_when_the_failure_does_not_hold(fakelib):
    oracle = Oracle(lambda code: run_script(code, fakelib, isolation=None), EXPECTED, True)
    assert minimize("print('no bug here')\n", oracle) is None


def test_inline_then_copy_propagation_collapses_a_call_chain():
    code = "def load(path):\n    data = path\n    return data\n\nresult = load('x')\nprint(result)\n"
    inlined = apply_edits(code, inline_edits(code))
    assert "path = 'x'" in inlined and "result = data" in inlined
    for _ in range(5):
        edits = copy_edits(inlined)
        if not edits:
            break
        inlined = apply_edits(inlined, edits[:1])
    assert inlined.endswith("print('x')\n") and "result" not in inlined


def test_flatten_turns_a_loop_into_one_pass():
    code = "for step in range(3, 10):\n    print(step)\n"
    assert apply_edits(code, flatten_edits(code)[:1]) == "step = 3\nprint(step)\n"


def test_config_holders_unfold_into_values():
    code = ("CFG = {'n': 4}\n\nclass Opts:\n\n    def __init__(self, k):\n        self.k = k\n"
            "opts = Opts(CFG['n'])\nprint(opts.k)\n")
    for _ in range(2):
        code = apply_edits(code, holder_edits(code))
    assert code.strip().endswith("print(4)")


NESTED = '''
import json
from fakelib import combine


class Report:
    def __init__(self, rows):
        self.rows = rows
        self.totals = {}

    def build(self):
        for index, row in enumerate(self.rows):
            for name in sorted(row):
                self.totals[f"{index}.{name}"] = combine([1, 2], [3])
        return json.dumps(self.totals)


print(Report([{"a": 1, "b": 2}, {"c": 3}]).build())
'''


def test_a_failing_call_with_self_contained_arguments_is_hoisted_out_of_its_context(fakelib):
    run = lambda code: run_script(code, fakelib, isolation=None)
    oracle = Oracle(run, EXPECTED, True)
    result = minimize(NESTED, oracle, workers=2)
    assert result.code == "from fakelib import combine\ncombine([], [3])\n"  # the literal pass shrank it after
    assert "hoist the failing call" in result.passes


class _CountingOracle:
    """A script 'fails the same way' while it still calls `boom()`; counts its calls."""

    def __init__(self) -> None:
        self.calls = 0

    def __call__(self, code: str) -> bool:
        self.calls += 1
        return "boom()" in code

    def failure_of(self, code: str) -> None:
        return None  # no traceback to cut after


def test_minimization_stops_when_its_budget_runs_out_and_keeps_a_script_that_still_fails():
    from issuetriage.scrub.minimize import minimize
    from issuetriage.scrub.model import Budget

    code = "".join(f"x{i} = {i}\nprint(x{i})\n" for i in range(40)) + "boom()\n"
    oracle = _CountingOracle()
    short = minimize(code, oracle, Budget(oracle_calls=4), workers=1)  # type: ignore[arg-type]
    assert short is not None and short.stopped.startswith("the budget ran out")
    assert oracle.calls <= 5 and "boom()" in short.code  # nothing accepted after the budget was spent
    full = minimize(code, _CountingOracle(), workers=1)  # type: ignore[arg-type]
    assert full is not None and full.stopped.startswith("a fixpoint") and full.code.strip() == "boom()"


WSGI_LIKE = '''
import io
import json
ALLOWED = {"a", "b"}


def handle(environ, respond):
    keys = {k: v for k, v in environ.items() if k in ALLOWED}
    respond(len(keys))
    return [json.dumps(keys).encode()]


def call(header):
    seen = []
    body = b"".join(handle({"a": header, "wsgi.input": io.BytesIO()}, seen.append))
    return seen[0], body.decode()


status, body = call("x")
boom(status)
'''


class _BoomOracle:
    """In-process: the script 'fails the same way' while `boom` gets 1 (the bug's value)."""

    def __init__(self) -> None:
        self.calls = 0

    def __call__(self, code: str) -> bool:
        self.calls += 1

        def boom(value: object) -> None:
            if value == 1:
                raise ValueError("bug")
        try:
            exec(compile(code, "<repro>", "exec"), {"boom": boom})
        except ValueError as error:
            return str(error) == "bug"
        except Exception:
            return False
        return False

    def failure_of(self, code: str) -> None:
        return None


def test_reads_that_keep_an_import_or_a_constant_alive_are_freed_so_the_line_goes():
    """The dict entry `io.BytesIO()`, the `k in ALLOWED` filter and the unread `json` body keep
    three lines alive that the failure never needs; freeing those reads lets pruning drop them,
    and the call whose result nobody reads stays as a statement (then inlining goes on)."""
    oracle = _BoomOracle()
    result = minimize(WSGI_LIKE, oracle, workers=1)  # type: ignore[arg-type]
    assert result is not None and oracle(result.code)
    assert "io" not in _names(result.code) and "json" not in _names(result.code)
    assert "ALLOWED" not in _names(result.code) and count_lines(result.code) <= 5
    assert any(p.startswith("free names") for p in result.passes)


def test_without_a_fixing_release_no_read_is_freed():
    """Freeing replaces values the script passes on, so with inputs kept (no fix known) it does not run."""
    result = minimize(WSGI_LIKE, _BoomOracle(), workers=1, keep_inputs=True)  # type: ignore[arg-type]
    assert result is not None and "free names" not in result.passes


def test_a_read_inside_an_f_string_is_freed_as_a_formatted_value():
    from issuetriage.scrub.freeing import free_edits

    code = "import os\nNAME = 'x'\nprint(f'{NAME}-{os.sep}')\n"
    changed = [apply_edits(code, [edit]) for edit in free_edits(code)]
    assert "print(f'{NAME}-{0}')\n" in "".join(changed) and all(ast.parse(c) for c in changed)


def test_a_pass_that_raises_is_skipped_and_minimization_still_ends_on_a_verified_script(monkeypatch):
    from issuetriage.scrub import minimize as module

    def broken(code: str) -> list:
        raise ValueError("a transform's bug")

    monkeypatch.setattr(module, "_ROUND", (module._edits("free names", broken), *module._ROUND))
    code = "".join(f"x{i} = {i}\n" for i in range(5)) + "boom()\n"
    oracle = _CountingOracle()
    result = module.minimize(code, oracle, workers=1)  # type: ignore[arg-type]
    assert result is not None and result.code.strip() == "boom()"
    assert "skipped after an internal error: free names (ValueError)" in result.stopped


class _TwoStageOracle:
    """`screen` is the cheap first half (fails as reported); calling it is the whole verdict."""

    def __init__(self) -> None:
        self.calls, self.whole = 0, []

    def screen(self, code: str) -> bool:
        self.calls += 1
        return "boom()" in code

    def __call__(self, code: str) -> bool:
        self.whole.append(code)
        return self.screen(code)

    def failure_of(self, code: str) -> None:
        return None


def test_candidates_are_screened_and_only_the_scripts_kept_get_the_whole_verdict():
    code = "".join(f"x{i} = {i}\nprint(x{i})\n" for i in range(12)) + "boom()\n"
    oracle = _TwoStageOracle()
    result = minimize(code, oracle, workers=1)  # type: ignore[arg-type]
    assert result is not None and result.code.strip() == "boom()"
    # the original and each script kept; never a candidate that was not kept
    assert len(oracle.whole) <= len(result.passes) + 1 < oracle.calls
    assert all("boom()" in c for c in oracle.whole)
