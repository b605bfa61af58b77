"""Compare a run with the expected failure: the outcome class and the strict oracle."""

from __future__ import annotations

import ast
import threading
import warnings
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

import re2

from issuetriage.scrub.expected import parse_failure
from issuetriage.scrub.model import Expected, Failure, Outcome, RunResult
from issuetriage.scrub.sandbox import SCRIPT
from issuetriage.scrub.standin import asserts_package_value, forcing_identity, independent_of

_FATAL = re2.compile(r"Fatal Python error|Segmentation fault|core dumped")


def _same_class(seen: str | None, wanted: str | None) -> bool:
    if not seen or not wanted:
        return False
    return seen == wanted or seen.rsplit(".", 1)[-1] == wanted.rsplit(".", 1)[-1]


_ENVIRONMENTAL = {"ModuleNotFoundError", "ImportError", "FileNotFoundError"}


def classify(result: RunResult, expected: Expected | None) -> Outcome:
    """same_error / passes / different_error / crash / timeout / environment for one run."""
    if result.timed_out:
        return Outcome.SAME_ERROR if expected and expected.hang else Outcome.TIMEOUT
    if result.signal is not None or _FATAL.search(result.stderr):
        if expected and expected.crash and expected.signal in (None, result.signal or expected.signal):
            return Outcome.SAME_ERROR
        return Outcome.CRASH
    if result.exit_code == 0:
        shown = expected is not None and expected.output and _words(expected.output) in _words(result.stdout)
        return Outcome.SAME_ERROR if shown else Outcome.PASSES
    failure = parse_failure(result.stderr, SCRIPT)
    if expected and failure and _matches(failure, expected):
        return Outcome.SAME_ERROR
    if environmental(failure):
        return Outcome.ENVIRONMENT
    return Outcome.DIFFERENT_ERROR


def environmental(failure: Failure | None) -> bool:
    """A missing module or file: the environment is wrong, the repro neither passes nor fails."""
    return bool(failure and failure.exception
                and failure.exception.rsplit(".", 1)[-1] in _ENVIRONMENTAL)


def _words(text: str) -> str:
    return " ".join(text.split())


def _matches(failure: Failure, expected: Expected) -> bool:
    return (_same_class(failure.exception, expected.exception) and expected.substring in failure.message
            and _same_chain(failure.chain, expected.chain))


def _same_chain(seen: tuple[str, ...], wanted: tuple[str, ...]) -> bool:
    """The exceptions the report shows the final one chained to end the run's chain too (a report
    may leave out the start of a long chain; one that shows no chain accepts any)."""
    if len(seen) < len(wanted):
        return False
    return all(_same_class(s, w) for s, w in zip(seen[len(seen) - len(wanted):], wanted))


def in_library(failure: Failure | None) -> bool:
    """True when the innermost frame is outside the repro script (raised inside the library)."""
    return bool(failure and failure.innermost_file and not failure.innermost_file.endswith(SCRIPT)
                and not failure.innermost_file.startswith("<"))


def literal_in(code: str, text: str) -> bool:
    """True when `text` appears inside a string literal of `code` (a forged failure)."""
    if not text:
        return False
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return False
    return any(isinstance(n, ast.Constant) and isinstance(n.value, str) and text in n.value
               for n in ast.walk(tree))


def checks_something(code: str, message: str) -> bool:
    """The assertion scrub added still tests a value, not a constant (`assert 0, msg` and
    `assert [], msg` fail without any bug); the control run catches subtler forgeries."""
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return False
    return any(isinstance(n, ast.Assert) and isinstance(n.msg, ast.Constant) and n.msg.value == message
               and any(isinstance(m, (ast.Call, ast.Attribute, ast.Subscript, ast.Name)) for m in ast.walk(n.test))
               for n in ast.walk(tree))


_PINNED = "_scrub_value"


def pin_assertion(code: str, message: str) -> str:
    """`assert A == B, msg` as `assert (_scrub_value := A) == B, f'{msg}: {_scrub_value!r}'`: the
    run's failure then says what the script computed, so a candidate can be held to the same value."""
    tree = ast.parse(code)
    for node in ast.walk(tree):
        if isinstance(node, ast.Assert) and isinstance(node.msg, ast.Constant) and node.msg.value == message \
                and isinstance(node.test, ast.Compare):
            node.test.left = ast.NamedExpr(ast.Name(_PINNED, ast.Store()), node.test.left)
            node.msg = ast.JoinedStr([ast.Constant(f"{message}: "),
                                      ast.FormattedValue(ast.Name(_PINNED, ast.Load()), ord("r"), None)])
    return ast.unparse(ast.fix_missing_locations(tree))


def _compiles(code: str) -> bool:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            compile(code, SCRIPT, "exec", dont_inherit=True)
    except (SyntaxError, ValueError):
        return False
    return True


@dataclass
class Oracle:
    """Strict "is this still the same bug?" test, counting every real run.

    Same exception class, substring and chain; when the original failure came from inside the
    library, the candidate's innermost frame must too. The message (or wrong output) may not be a
    string literal of the candidate unless it was one of the original script (a dict key the
    reporter looked up is the reporter's own). Timeouts and crashes are never interesting unless a
    hang or crash is the bug. Then, when a fixing release is known (`control`), the candidate must
    pass there (the differential oracle); otherwise, with a `stand_in` interpreter (the package
    replaced by an empty stand-in, see standin.py), it must not fail the same way there, and an
    assertion must still test a value computed by a call into the package. With `pin`, the
    assertion scrub added is run with the value it tested in its message (`pin_assertion`), and
    every candidate must compute the value the first script judged (the original) computed:
    `changed_keys(...) == ['beta']` failing with `[]` is the bug, failing with every key is not.
    """

    run: Callable[[str], RunResult]
    expected: Expected
    from_library: bool
    control: Callable[[str], RunResult] | None = None  # the fixing release: a kept script passes there
    stand_in: Callable[[str], RunResult] | None = None  # the package replaced: it must fail differently
    stand_in_names: tuple[str, ...] = ()
    original: str = ""
    pin: bool = False
    pinned: str | None = None  # the value the original's assertion tested ("" when it cannot be pinned)
    calls: int = 0
    _cache: dict[str, bool] = field(default_factory=dict)
    _failures: dict[str, Failure | None] = field(default_factory=dict)
    _screened: dict[str, bool] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def __call__(self, code: str) -> bool:
        return self._once(self._cache, code, self._judge)

    def screen(self, code: str) -> bool:
        """The first half of the verdict: `code` fails as reported on the affected release. The
        minimizer screens candidates in parallel with it and calls the oracle only on the one it
        keeps, so the control (or stand-in) run is paid once per kept script, not per candidate."""
        return self._once(self._screened, code, self._screen)

    def _once(self, cache: dict[str, bool], code: str, judge: Callable[[str], bool]) -> bool:
        """`judge(code)`, remembered in `cache` (a script is judged once per oracle)."""
        with self._lock:
            if code in cache:
                return cache[code]
        verdict = judge(code)
        with self._lock:
            cache[code] = verdict
        return verdict

    def _screen(self, code: str) -> bool:
        return self._runnable(code) and self._fails(code)

    def _fails(self, code: str) -> bool:
        fails, failure = self._fails_as_reported(code)
        if fails:
            self._failures[code] = failure
        return fails

    def _judge(self, code: str) -> bool:
        """Both halves; when neither is known yet they run at the same time (the second run is
        wasted when the first half fails, but the verdict takes one run's time, not two)."""
        if code in self._screened or (self.control is None and self.stand_in is None):
            return self.screen(code) and self._checked(code)
        if not self._runnable(code):
            return False
        with ThreadPoolExecutor(max_workers=1) as beside:
            second = beside.submit(self._checked, code)
            return self._once(self._screened, code, self._fails) and second.result()

    def _runnable(self, code: str) -> bool:
        """Worth a run at all: it compiles and, without a fix, may still test the package."""
        return _compiles(code) and not (self.control is None and self.stand_in is not None
                                        and not self._may_test_package(code))

    def _may_test_package(self, code: str) -> bool:
        """Without a fixing release, before any run: the script imports the package, and for a
        wrong result its assertion still tests a value computed by a call into the package."""
        if independent_of(code, self.stand_in_names):
            return False  # imports no package at all: it would fail the same way with a stand-in
        if (self.expected.exception or "").rsplit(".", 1)[-1] != "AssertionError":
            return True
        message = self.expected.substring if self.expected.source == "assertion" else None
        return asserts_package_value(code, self.stand_in_names, message)

    def _fails_as_reported(self, code: str) -> tuple[bool, Failure | None]:
        """Whether `code` fails as reported on the affected release, and its parsed failure."""
        self._count()
        result = self.run(pin_assertion(code, self.expected.substring) if self.pin else code)
        if classify(result, self.expected) is not Outcome.SAME_ERROR:
            return False, None
        failure = parse_failure(result.stderr, SCRIPT)
        return self._holds(code, failure) and self._same_value(failure), failure

    def _same_value(self, failure: Failure | None) -> bool:
        if not self.pin:
            return True
        value = failure.message.partition(f"{self.expected.substring}: ")[2] if failure else ""
        with self._lock:
            if self.pinned is None:  # the first script judged is the original
                stable = value and "0x" not in value and len(value) < 500
                self.pinned = value if stable else ""
            return not self.pinned or value == self.pinned

    def _checked(self, code: str) -> bool:
        """Differential when the fix is known, else the stand-in check (each one more run)."""
        if self.control is not None:
            self._count()
            return classify(self.control(code), self.expected) is Outcome.PASSES
        if self.stand_in is not None:
            self._count()
            return not self.same_with_stand_in(code)
        return True

    def same_with_stand_in(self, code: str) -> bool:
        """Whether `code` still fails as reported with the package replaced by the stand-in."""
        assert self.stand_in is not None
        return classify(self.stand_in(forcing_identity(code)), self.expected) is Outcome.SAME_ERROR

    def _count(self) -> None:
        with self._lock:
            self.calls += 1

    def _holds(self, code: str, failure: Failure | None) -> bool:
        if self.expected.output:
            return not self._forged(code, self.expected.output.strip())
        if self.expected.source == "assertion":
            return checks_something(code, self.expected.substring)
        if self.from_library and self.expected.exception:
            return in_library(failure) and not self._forged(code, self.expected.substring)
        return True

    def _forged(self, code: str, text: str) -> bool:
        return literal_in(code, text) and not literal_in(self.original, text)

    def checks(self) -> str:
        """What every kept candidate was checked against, for the report."""
        if self.control is not None:
            return "differential"
        return "stand-in" if self.stand_in is not None else "none"

    def failure_of(self, code: str) -> Failure | None:
        """The parsed failure of a script this oracle found interesting (None if unknown)."""
        return self._failures.get(code)
