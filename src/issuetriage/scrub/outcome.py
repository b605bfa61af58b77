"""Compare a run with the expected failure: the outcome class and the strict oracle."""

from __future__ import annotations

import ast
import re
import threading
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field

from issuetriage.scrub.expected import parse_failure
from issuetriage.scrub.model import Expected, Failure, Outcome, RunResult
from issuetriage.scrub.sandbox import SCRIPT

_FATAL = re.compile(r"Fatal Python error|Segmentation fault|core dumped")


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
    return _same_class(failure.exception, expected.exception) and expected.substring in failure.message


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


@dataclass
class Oracle:
    """Strict "is this still the same bug?" test, counting every real run.

    Same exception class and substring; when the original failure came from inside the library,
    the candidate's innermost frame must too and the message may not be a literal in the candidate.
    Timeouts and crashes are never interesting unless a hang or crash is the bug; wrong output
    must still be printed and may not be a literal of the candidate. With a `control` run (a
    release where the bug is fixed), a candidate that fails the same way there too is forged.
    """

    run: Callable[[str], RunResult]
    expected: Expected
    from_library: bool
    control: Callable[[str], RunResult] | None = None  # a release without the bug
    calls: int = 0
    _cache: dict[str, bool] = field(default_factory=dict)
    _failures: dict[str, Failure | None] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def __call__(self, code: str) -> bool:
        with self._lock:
            if code in self._cache:
                return self._cache[code]
        verdict = self._judge(code)
        with self._lock:
            self._cache[code] = verdict
        return verdict

    def _judge(self, code: str) -> bool:
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                compile(code, SCRIPT, "exec", dont_inherit=True)
        except (SyntaxError, ValueError):
            return False
        with self._lock:
            self.calls += 1
        result = self.run(code)
        if classify(result, self.expected) is not Outcome.SAME_ERROR:
            return False
        failure = parse_failure(result.stderr, SCRIPT)
        if not self._holds(code, failure):
            return False
        if self.control is not None:  # the same failure on the fixed release is not this bug
            with self._lock:
                self.calls += 1
            if classify(self.control(code), self.expected) is Outcome.SAME_ERROR:
                return False
        self._failures[code] = failure
        return True

    def _holds(self, code: str, failure: Failure | None) -> bool:
        if self.expected.output:
            return not literal_in(code, self.expected.output.strip())
        if self.expected.source == "assertion":
            return checks_something(code, self.expected.substring)
        if self.from_library and self.expected.exception:
            return in_library(failure) and not literal_in(code, self.expected.substring)
        return True

    def failure_of(self, code: str) -> Failure | None:
        """The parsed failure of a script this oracle found interesting (None if unknown)."""
        return self._failures.get(code)
