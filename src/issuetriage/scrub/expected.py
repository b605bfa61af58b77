"""What failure proves the bug: parsed from the issue's traceback, or an assertion we add.

Issue text is hostile: every pattern here runs on RE2 (linear time), never with backtracking.
"""

from __future__ import annotations

import ast

import re2

from issuetriage.scrub.model import Expected, Failure

_FRAME = re2.compile(r'^\s*File "([^"]+)", line (\d+)')
_EXC_LINE = re2.compile(r"^([A-Za-z_][\w.]*(?:Error|Exception|Exit|Interrupt|Warning|Failed|"
                        r"Failure|Unsupported|Iteration|[A-Z]\w*))(?::\s?(.*))?$")
_CRASH = re2.compile(r"(?i)Segmentation fault|Fatal Python error|core dumped|SIGSEGV|SIGABRT|Aborted")
_VOLATILE = re2.compile(
    r"0x[0-9a-fA-F]+|\b\d+(\.\d+)?\b|'[^']*'|\"[^\"]*\"|`[^`]*`|\([^()]*\)|\[[^\[\]]*\]|"
    r"(/[\w.\-]+){2,}|\b[\w.\-]+\.py\b|<[^<>]*>|[:;,=]")
_GENERIC = {"error", "failed", "exception", "unknown error", "an error occurred"}
_CHAINED = ("During handling of the above exception", "The above exception was the direct cause")
_HEADER = "Traceback (most recent call last)"


def parse_failure(text: str, script_name: str = "repro.py") -> Failure | None:
    """The exception at the end of the last traceback in `text` (a log or stderr), if any, with
    the classes of the exceptions it was chained to.

    A traceback without its `Traceback (most recent call last):` header counts too: users paste
    the tail, and a deep recursion's header falls out of a run's stderr tail.
    """
    lines = text.splitlines()
    starts = [i for i, line in enumerate(lines) if _HEADER in line]
    first_frame = next((i for i, line in enumerate(lines) if _FRAME.match(line)), None)
    start = starts[-1] + 1 if starts else first_frame
    if start is None:
        return _bare_exception(lines)
    frames: list[tuple[str, int]] = []
    exc_at = _exception_line(lines, start, frames)
    if exc_at is None:
        return None if starts else _bare_exception(lines)
    match = _EXC_LINE.match(lines[exc_at].strip())
    assert match is not None
    message = "\n".join([match.group(2) or ""] + _continuation(lines[exc_at + 1:])).strip()
    script_lines = [n for f, n in frames if f.endswith(script_name)]
    return Failure(match.group(1), message, frames[-1][0] if frames else None,
                   script_lines[-1] if script_lines else None, tuple(script_lines),
                   _chain(lines, (starts[-1] if starts else start) - 1))


def _exception_line(lines: list[str], start: int, frames: list[tuple[str, int]] | None = None) -> int | None:
    """Index of the exception line that ends the traceback whose frames begin at `start`."""
    for i in range(start, len(lines)):
        match = _FRAME.match(lines[i])
        if match:
            if frames is not None:
                frames.append((match.group(1), int(match.group(2))))
            continue
        if lines[i][:1] not in (" ", "\t", "") and not lines[i].startswith(_CHAINED) \
                and _EXC_LINE.match(lines[i].strip()):
            return i
    return None


def _chain(lines: list[str], before: int) -> tuple[str, ...]:
    """Classes of the exceptions a traceback ending just after `before` is chained to, walking
    back over "During handling of..." / "The above exception was the direct cause..." lines."""
    found: list[str] = []
    i = before
    while len(found) < 20:
        while i >= 0 and not lines[i].strip():
            i -= 1
        if i < 0 or not lines[i].startswith(_CHAINED):
            break
        header = next((j for j in range(i - 1, -1, -1) if _HEADER in lines[j]), None)
        if header is None:
            break
        at = _exception_line(lines[:i], header + 1)
        match = _EXC_LINE.match(lines[at].strip()) if at is not None else None
        if match is None:
            break
        found.insert(0, match.group(1))
        i = header - 1
    return tuple(found)


_STRICT_EXC = re2.compile(r"^([A-Za-z_][\w.]*(?:Error|Exception|Warning))(?::\s?(.*))?$")


def _bare_exception(lines: list[str]) -> Failure | None:
    """Only the last line was pasted (`ValueError: bad thing`): a strict class name, no frames."""
    for line in reversed(lines):
        match = _STRICT_EXC.match(line.strip()) if line[:1] not in (" ", "\t") else None
        if match:
            return Failure(match.group(1), (match.group(2) or "").strip(), None, None)
    return None


def _continuation(lines: list[str]) -> list[str]:
    """Message lines after the exception line, up to a blank line or another traceback."""
    kept = []
    for line in lines[:20]:
        if not line.strip() or line.startswith(("Traceback", *_CHAINED)):
            break
        kept.append(line)
    return kept


def distinctive(message: str) -> str:
    """The longest stable fragment of an error message: no numbers, addresses, paths or quotes.

    Tensor sizes and object addresses change when a repro is minimized; the words do not.
    """
    first = message.strip().splitlines()[0] if message.strip() else ""
    if len(first) > 2 and first[0] == first[-1] and first[0] in "'\"":
        first = first[1:-1]  # KeyError quotes its whole message
    fragments = [f.strip(" .-") for f in _VOLATILE.split(first) if f]
    fragments = [f for f in fragments if len(f.split()) >= 2 and f.lower() not in _GENERIC]
    if not fragments:
        words = [w for w in first.split() if len(w) > 3 and not any(c.isdigit() for c in w)]
        return max(words, key=len) if words else ""
    return max(fragments, key=len)


_WARNING_LINE = re2.compile(r"(?m)^\s*\S+:\d+: ([A-Z]\w*Warning): (.+)$")
_SIGNALS = ((re2.compile(r"(?i)Segmentation fault|SIGSEGV|signal 11\b"), 11),
            (re2.compile(r"(?i)\bAborted\b|SIGABRT|signal 6\b"), 6),
            (re2.compile(r"(?i)Bus error|SIGBUS"), 7),
            (re2.compile(r"(?i)Illegal instruction|SIGILL"), 4),
            (re2.compile(r"(?i)Floating point exception|SIGFPE"), 8))
_HANG = re2.compile(r"(?i)\b(hangs?|hanging|hung|never (returns|finishes|terminates|completes)|infinite loop|"
                    r"runs forever|takes forever|stuck|does not terminate|doesn't terminate|"
                    r"catastrophic backtracking)\b")
# Output that shows the run was stopped from outside: ^C, faulthandler's dump_traceback_later
# banner, pytest-timeout, timeout-decorator.
_STOPPED = re2.compile(r"(?m)^\s*\^C\s*$|^Timeout \(\d+:\d\d:\d\d\)!|Failed: Timeout >|^\++ Timeout \++\s*$|"
                       r"TimeoutError: 'Timed Out'")
_INTERRUPTS = {"KeyboardInterrupt", "FunctionTimedOut"}  # raised into a script that was stopped
_STEMS = {"RecursionError": "maximum recursion depth exceeded"}  # its tail varies with the call


def expected_from_text(text: str) -> Expected | None:
    """The expected failure from an issue's text, in order: a hang shown by an interrupt or
    timeout, its last (possibly partial or chained) traceback, a warning line, a crash by signal,
    a hang in prose, or wrong output."""
    failure = parse_failure(text, script_name=".py")
    name = (failure.exception or "").rsplit(".", 1)[-1] if failure else ""
    if name in _INTERRUPTS or _STOPPED.search(text):
        return Expected(None, "", source="hang", hang=True)
    if failure is not None and failure.exception:
        return Expected(failure.exception, _STEMS.get(name) or distinctive(failure.message),
                        source="traceback", chain=failure.chain)
    warning = _WARNING_LINE.search(text)
    if warning:
        return Expected(warning.group(1), distinctive(warning.group(2)), source="warning")
    if _CRASH.search(text) or any(p.search(text) for p, _ in _SIGNALS):
        signal = next((n for p, n in _SIGNALS if p.search(text)), None)
        return Expected(None, "", crash=True, source="crash", signal=signal)
    if _HANG.search(text):
        return Expected(None, "", source="hang", hang=True)
    return None


_WANTED = re2.compile(r"\bexpected\b|\bshould\b")
_ACTUAL = re2.compile(r"\b(actual|got|instead|but|output|prints?)\b")


def expected_output(blocks: list[tuple[str, str]]) -> Expected | None:
    """Wrong output shown as an "expected" block and an "actual"/"got" block.

    `blocks` pairs each non-code block's text with the prose just before it.
    """
    wanted = actual = None
    for before, body in blocks:
        lead = before.strip().splitlines()[-1].lower() if before.strip() else ""
        if not body.strip():
            continue
        if _WANTED.search(lead) and wanted is None:
            wanted = body.strip()
        elif _ACTUAL.search(lead) and actual is None:
            actual = body.strip()
    if wanted is None or actual is None or wanted == actual:
        return None
    return Expected(None, "", source="output", output=actual, wanted=wanted)


def warning_filter(expected: Expected) -> str:
    """Lines that turn the reported warning into an error, so the run fails while it is emitted."""
    pattern = ".*" + re2.escape(expected.substring)
    return f"import warnings\nwarnings.filterwarnings('error', {pattern!r})\n"


_BOOLISH = {"allclose", "equal", "array_equal", "isclose", "all", "any", "assert_close", "isnan",
            "isinf", "isfinite"}
_ASSERT_MESSAGE = "scrub: wrong result still present"


def add_wrong_result_assertion(code: str) -> tuple[str, Expected] | None:
    """For a wrong-result report, turn the last printed check into an assertion that fails.

    `print(torch.allclose(a, b))` becomes `assert torch.allclose(a, b), '...'`, so the
    script fails exactly while the wrong result persists.
    """
    tree = ast.parse(code)
    target = None
    for stmt in tree.body:
        if (isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call)
                and isinstance(stmt.value.func, ast.Name) and stmt.value.func.id == "print"
                and len(stmt.value.args) == 1 and _is_check(stmt.value.args[0])):
            target = stmt
    if target is None:
        return None
    check = target.value.args[0]  # type: ignore[attr-defined]
    if isinstance(check, ast.Call) and not _returns_bool(check):
        check = ast.Call(func=ast.Attribute(value=check, attr="all", ctx=ast.Load()),
                         args=[], keywords=[])
    index = tree.body.index(target)
    tree.body[index] = ast.copy_location(
        ast.Assert(test=check, msg=ast.Constant(_ASSERT_MESSAGE)), target)
    new = ast.unparse(ast.fix_missing_locations(tree)) + "\n"
    return new, Expected("AssertionError", _ASSERT_MESSAGE, source="assertion")


def _is_check(node: ast.expr) -> bool:
    if isinstance(node, ast.Compare):
        return True
    func = node.func if isinstance(node, ast.Call) else None
    name = getattr(func, "attr", None) or getattr(func, "id", None)
    return name in _BOOLISH


def _returns_bool(call: ast.Call) -> bool:
    return getattr(call.func, "attr", getattr(call.func, "id", "")) in {
        "allclose", "equal", "array_equal", "all", "any"}
