"""What failure proves the bug: parsed from the issue's traceback, or an assertion we add."""

from __future__ import annotations

import ast
import re

from issuetriage.scrub.model import Expected, Failure

_FRAME = re.compile(r'^\s*File "([^"]+)", line (\d+)')
_EXC_LINE = re.compile(r"^([A-Za-z_][\w.]*(?:Error|Exception|Exit|Interrupt|Warning|Failed|"
                       r"Failure|Unsupported|Iteration|[A-Z]\w*))(?::\s?(.*))?$")
_CRASH = re.compile(r"Segmentation fault|Fatal Python error|core dumped|SIGSEGV|SIGABRT|Aborted",
                    re.I)
_VOLATILE = re.compile(
    r"0x[0-9a-fA-F]+|\b\d+(\.\d+)?\b|'[^']*'|\"[^\"]*\"|`[^`]*`|\([^()]*\)|\[[^\[\]]*\]|"
    r"(/[\w.\-]+){2,}|\b[\w.\-]+\.py\b|<[^<>]*>|[:;,=]")
_GENERIC = {"error", "failed", "exception", "unknown error", "an error occurred"}


def parse_failure(text: str, script_name: str = "repro.py") -> Failure | None:
    """The exception at the end of the last traceback in `text` (a log or stderr), if any.

    A traceback without its `Traceback (most recent call last):` header counts too: users paste
    the tail, and a deep recursion's header falls out of a run's stderr tail.
    """
    lines = text.splitlines()
    starts = [i for i, line in enumerate(lines) if "Traceback (most recent call last)" in line]
    first_frame = next((i for i, line in enumerate(lines) if _FRAME.match(line)), None)
    start = starts[-1] + 1 if starts else first_frame
    if start is None:
        return _bare_exception(lines)
    frames: list[tuple[str, int]] = []
    exc_at = None
    for i in range(start, len(lines)):
        match = _FRAME.match(lines[i])
        if match:
            frames.append((match.group(1), int(match.group(2))))
            continue
        stripped = lines[i].strip()
        if lines[i][:1] not in (" ", "\t", "") and _EXC_LINE.match(stripped):
            exc_at = i
            if lines[i].startswith(("During handling", "The above exception")):
                exc_at = None
                continue
            break
    if exc_at is None:
        return None if starts else _bare_exception(lines)
    match = _EXC_LINE.match(lines[exc_at].strip())
    assert match is not None
    message = "\n".join([match.group(2) or ""] + _continuation(lines[exc_at + 1:])).strip()
    script_lines = [n for f, n in frames if f.endswith(script_name)]
    return Failure(match.group(1), message, frames[-1][0] if frames else None,
                   script_lines[-1] if script_lines else None, tuple(script_lines))


_STRICT_EXC = re.compile(r"^([A-Za-z_][\w.]*(?:Error|Exception|Warning))(?::\s?(.*))?$")


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
        if not line.strip() or line.startswith(("Traceback", "During handling", "The above")):
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
        words = [w for w in re.split(r"\s+", first) if len(w) > 3 and not re.search(r"\d", w)]
        return max(words, key=len) if words else ""
    return max(fragments, key=len)


_WARNING_LINE = re.compile(r"^\s*\S+:\d+: ([A-Z]\w*Warning): (.+)$", re.M)
_SIGNALS = ((re.compile(r"Segmentation fault|SIGSEGV|signal 11\b", re.I), 11),
            (re.compile(r"\bAborted\b|SIGABRT|signal 6\b", re.I), 6),
            (re.compile(r"Bus error|SIGBUS", re.I), 7),
            (re.compile(r"Illegal instruction|SIGILL", re.I), 4),
            (re.compile(r"Floating point exception|SIGFPE", re.I), 8))
_HANG = re.compile(r"\b(hangs?|hanging|hung|never (returns|finishes|terminates|completes)|infinite loop|"
                   r"runs forever|takes forever|stuck|does not terminate|doesn't terminate|"
                   r"catastrophic backtracking)\b", re.I)
_STEMS = {"RecursionError": "maximum recursion depth exceeded"}  # its tail varies with the call


def expected_from_text(text: str) -> Expected | None:
    """The expected failure from an issue's text, in order: its last (possibly partial or
    chained) traceback, a warning line, a crash by signal, a hang, or wrong output."""
    failure = parse_failure(text, script_name=".py")
    if failure is not None and failure.exception:
        name = failure.exception.rsplit(".", 1)[-1]
        return Expected(failure.exception, _STEMS.get(name) or distinctive(failure.message),
                        source="traceback")
    warning = _WARNING_LINE.search(text)
    if warning:
        return Expected(warning.group(1), distinctive(warning.group(2)), source="warning")
    if _CRASH.search(text) or any(p.search(text) for p, _ in _SIGNALS):
        signal = next((n for p, n in _SIGNALS if p.search(text)), None)
        return Expected(None, "", crash=True, source="crash", signal=signal)
    if _HANG.search(text):
        return Expected(None, "", source="hang", hang=True)
    return None


def expected_output(blocks: list[tuple[str, str]]) -> Expected | None:
    """Wrong output shown as an "expected" block and an "actual"/"got" block.

    `blocks` pairs each non-code block's text with the prose just before it.
    """
    wanted = actual = None
    for before, body in blocks:
        lead = before.strip().splitlines()[-1].lower() if before.strip() else ""
        if not body.strip():
            continue
        if re.search(r"\bexpected\b|\bshould\b", lead) and wanted is None:
            wanted = body.strip()
        elif re.search(r"\b(actual|got|instead|but|output|prints?)\b", lead) and actual is None:
            actual = body.strip()
    if wanted is None or actual is None or wanted == actual:
        return None
    return Expected(None, "", source="output", output=actual, wanted=wanted)


def warning_filter(expected: Expected) -> str:
    """Lines that turn the reported warning into an error, so the run fails while it is emitted."""
    pattern = ".*" + re.escape(expected.substring)
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
