"""Untrusted text (issues, comments, history, profile patterns): bounded, tokenized, and matched
in linear time. Below both `policy` and `evidence`; imports nothing else of the package.

Regular expressions that are data (every profile pattern, shipped or repo-local) run on RE2
(`google-re2`), whose automata never backtrack: time grows with the text, never with its shape.
RE2 has no look-arounds or back-references, so a pattern that needs them does not compile and is
refused with a one-line reason, as is one whose program is too large to run cheaply.

Our own few patterns over issue text stay on `re` only where they are one-way (at each point of
the text at most one way to go on, so a failed attempt gives up within the run it started):
`_TOKEN` here and those of `evidence.signals`, `judges.llm.excerpt`, `judges.learned.features`,
`github.reads` and `policy.init`; tests/security/test_hostile_text.py runs every one of them on
hostile text. Fenced code blocks are found by a
line scan (`fences`), not a pattern: the pattern needs a back-reference and rescans unclosed fences.
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Iterator, Sequence

# GitHub's limits: https://github.com/orgs/community/discussions/27190 (title 256, body 65,536)
TITLE_LIMIT = 256
BODY_LIMIT = 65_536  # an issue body or a comment

# RE2 bounds. One pattern: its compiled program (instructions; `.{0,800}` under (?s) is about
# 6,400) and the memory its program and automata may use. A profile: how many patterns and how many
# instructions in all. Matching is linear in the text with a factor that grows with the program (at
# worst, when RE2's automaton cache cannot keep up and it simulates the program instead), so the
# total bounds the time a profile's patterns take on one issue, and the count bounds their memory
# (MAX_PROFILE_PATTERNS x MAX_MEM). The shipped pytorch profile: 83 patterns, 5,706 instructions.
MAX_PROGRAM = 8_000
MAX_MEM = 2 << 20
MAX_PROFILE_PATTERNS = 256
MAX_PROFILE_PROGRAM = 10_000
# `(?P<unless>...)`: a match in which this group took part is no hit (see `first_hit`).
UNLESS = "unless"

# One-way: the dotted tail needs a `.` the run before it cannot take, so each run is read once.
_TOKEN = re.compile(r"[a-z0-9_]+(?:\.[a-z0-9_]+)*")


def capped(text: str, limit: int = BODY_LIMIT) -> str:
    """`text` cut to `limit` characters (GitHub's own limit for the field it came from)."""
    return text if len(text) <= limit else text[:limit]


def tokens_of(text: str) -> list[str]:
    """Lower-case word tokens; dotted names (torch.nn.Linear) stay whole."""
    return _TOKEN.findall(text.lower())


def normalize_keyword(keyword: str) -> str:
    """A keyword as space-joined tokens: the form phrase matching compares."""
    return " ".join(tokens_of(keyword))


class PatternError(ValueError):
    """A pattern the linear engine will not run; the message is one line."""


_FLAGS = {re.IGNORECASE: "i", re.MULTILINE: "m", re.DOTALL: "s"}


def _prepared(pattern: str, flags: int) -> tuple[str, Any]:
    """The pattern with `re`'s flags written inline, and the RE2 options every pattern runs with."""
    import re2  # imported on first use: a hook with nothing to check never needs it

    unknown = flags & ~sum(_FLAGS)
    if unknown:
        raise PatternError(f"flags {re.RegexFlag(unknown)!r} have no RE2 equivalent")
    inline = "".join(c for flag, c in _FLAGS.items() if flags & flag)
    options = re2.Options()
    options.max_mem = MAX_MEM
    options.log_errors = False  # RE2 would write to the process's stderr, a hook's reason line
    return (f"(?{inline}){pattern}" if inline else pattern), options


def compile_linear(pattern: str, flags: int = 0) -> Any:
    """`pattern` compiled by RE2, with `re`'s IGNORECASE, MULTILINE and DOTALL flags; PatternError
    when RE2 cannot compile it (look-arounds, back-references) or its program exceeds MAX_PROGRAM.
    \\w, \\d, \\s and \\b are ASCII on RE2 (write \\pL for any letter)."""
    import re2

    text, options = _prepared(pattern, flags)
    try:
        compiled = re2.compile(text, options)
    except re2.error as exc:
        reason = exc.args[0].decode("utf-8", "replace") if exc.args and isinstance(exc.args[0], bytes) else str(exc)
        raise PatternError(f"does not compile on RE2 (no look-arounds or back-references): "
                           f"{' '.join(reason.split())}") from None
    if compiled.programsize > MAX_PROGRAM:
        raise PatternError(f"too large for RE2: program of {compiled.programsize} instructions "
                           f"(at most {MAX_PROGRAM})")
    return compiled


class PatternSet:
    """Many patterns matched against one text at once: RE2's FilteredRE2 looks for the literals
    each pattern needs in one pass (RE2's own parse, so none is missed) and runs only the
    patterns whose literals are there."""

    def __init__(self, patterns: Sequence[str], flags: int = 0) -> None:
        import re2

        self._filter = re2.Filter()
        for pattern in patterns:
            compile_linear(pattern, flags)  # PatternError with the reason when RE2 will not run it
            self._filter.Add(*_prepared(pattern, flags))
        if patterns:
            self._filter.Compile()
        self.compiled = tuple(self._filter.re(i) for i in range(len(patterns)))

    def matching(self, text: str) -> list[int]:
        """The indexes of the patterns that match somewhere in `text`, in order."""
        return (self._filter.Match(text) or []) if self.compiled else []


def first_hit(compiled: Any, text: str) -> Any:
    """The first match of `compiled` in `text` that counts: one in which its `unless` group, if it
    has one, took no part (`aot_eager[^.]{0,40}?(?:(?P<unless>works)|fails)` hits on "aot_eager
    fails", not on "aot_eager works but inductor fails"); None when there is none."""
    if UNLESS not in compiled.groupindex:
        return compiled.search(text)
    return next((m for m in compiled.finditer(text) if m.group(UNLESS) is None), None)


@dataclass(frozen=True)
class Fence:
    """One fenced code block: its span in the text, the fence, the rest of the opening line, and
    the lines between the fences (with the newline before the closing fence)."""

    start: int
    end: int
    marker: str
    info: str
    content: str


def _fence_of(line: str) -> tuple[str, str] | None:
    """(fence, rest) when the line opens a code block: optional spaces and tabs, then ``` or ~~~."""
    body = line.lstrip(" \t")
    marker = body[:3]
    return (marker, body[3:]) if marker in ("```", "~~~") else None


def fences(text: str) -> Iterator[Fence]:
    """Fenced code blocks, as `^[ \\t]*(```|~~~)[^\\n]*\\n(.*?)^[ \\t]*\\1[ \\t]*$` (DOTALL, MULTILINE)
    finds them with `re.finditer`, in one pass over the lines instead of a rescan per open fence."""
    if "```" not in text and "~~~" not in text:
        return
    lines = text.split("\n")
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line) + 1)
    closers: dict[str, list[int]] = {"```": [], "~~~": []}
    for i, line in enumerate(lines):
        stripped = line.strip(" \t")
        if stripped in closers:
            closers[stripped].append(i)
    i, last = 0, len(lines) - 1
    while i < last:  # an opening line needs a newline after it
        opened = _fence_of(lines[i])
        if opened is not None:
            marker, info = opened
            candidates = closers[marker]
            k = bisect.bisect_right(candidates, i)
            if k < len(candidates):
                close = candidates[k]
                yield Fence(starts[i], starts[close] + len(lines[close]), marker, info,
                            text[starts[i + 1]:starts[close]])
                i = close + 1
                continue
        i += 1


def without_fences(text: str, blocks: list[Fence], filler: str = " ") -> str:
    """`text` with each block replaced by `filler`."""
    out, pos = [], 0
    for block in blocks:
        out += [text[pos:block.start], filler]
        pos = block.end
    out.append(text[pos:])
    return "".join(out)
