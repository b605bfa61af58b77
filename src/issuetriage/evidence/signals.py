"""Signals: facts read from an issue's text, computed once and shared by every step and judge.

Pure and fast (no Markdown parser on the hot path): fenced code blocks, tracebacks, exception
names, versions, links, platforms and backends, plus the word n-grams keyword matching needs.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache

from issuetriage.models import Issue
from issuetriage.text import BODY_LIMIT, TITLE_LIMIT, capped, fences, normalize_keyword, tokens_of, without_fences

__all__ = ["Signals", "affirmed", "extract_signals", "links_in", "ngrams_of", "normalize_keyword", "pieces_of",
           "tokens_of"]

# Issue text is hostile, so each pattern here is one-way (issuetriage.text): a failed attempt gives
# up within the run it started, and the scan stays linear. Exception lines: a line's own leading
# blanks only (`\s*` would start at every blank line before it and rescan them all).
_EXCEPTION = re.compile(
    r"^[^\S\n]*(?:[\w.]+\.)?(_?[A-Z]\w*(?:Error|Exception|Warning|Failed|Unsupported|Interrupt))\b(?::|$)",
    re.M,
)
_INLINE_EXC = re.compile(r"\b([A-Z]\w*(?:Error|Exception))\b")  # starts only where a word does
# An environment report (collect_env output) runs from its first line to the next heading or the end;
# its package list names half the ecosystem, so keyword matching does not read it.
_ENV_DUMP = re.compile(
    r"^[ \t]*(?:Collecting environment information|PyTorch version:|Is debug build:)[\s\S]*?(?=^#{1,6} |\Z)",
    re.M,
)
_URL = re.compile(r"https?://[^\s<>()\[\]\"'`]+")
# "PyTorch version: 2.5.1", "torch==2.5.1", "torch 2.5", "pytorch v2.5": searched in lower case,
# starting from the literal "torch" so the regex engine skips straight to candidates; the blanks
# and colon after it read one way (`\s*:?\s*` could split a run of blanks in n ways).
_TORCH_VERSION = re.compile(r"torch(?: version)?(?:==| |: ?)\s*(?::\s*)?v?(\d+\.\d+)(?:\.\d+)?")
# Platform and backend mentions, as token sets (a set lookup is far cheaper than a regex).
_PLATFORMS = {
    "windows": {"windows", "win10", "win11", "win32", "win64", "msvc"},
    "macos": {"macos", "osx", "darwin", "m1", "m2", "m3", "m4"},
    "linux": {"linux", "ubuntu", "centos", "debian", "fedora", "rhel"},
}
_BACKENDS = {
    "cuda": {"cuda", "nvidia", "gpu", "gpus", "cudnn", "nccl"},
    "rocm": {"rocm", "hip", "mi250", "mi300", "mi300x", "amd"},
    "mps": {"mps", "metal"},
    "xpu": {"xpu"},
    "cpu": {"cpu"},
}


@lru_cache(maxsize=65536)
def _dotted_pieces(token: str) -> tuple[str, ...]:
    """Each contiguous 1-4 part piece of a dotted name; names recur, so the answer is cached."""
    parts = token.split(".")
    n = len(parts)
    return tuple(".".join(parts[i:j]) for i in range(n) for j in range(i + 1, min(n, i + 4) + 1))


def pieces_of(tokens: list[str]) -> frozenset[str]:
    """Every token, plus each contiguous 1-4 part piece of a dotted name (torch.nn → torch, nn)."""
    pieces = set(tokens)
    for tok in [t for t in pieces if "." in t]:
        pieces.update(_dotted_pieces(tok))
    return frozenset(pieces)


def ngrams_of(tokens: list[str], max_n: int = 4) -> frozenset[str]:
    """Every run of up to `max_n` tokens joined by spaces, plus the pieces of dotted names."""
    grams = set(pieces_of(tokens))
    for n in range(2, max_n + 1):
        grams.update(map(" ".join, zip(*(tokens[k:] for k in range(n)))))
    return frozenset(grams)


@dataclass(frozen=True)
class Signals:
    """What the steps and judges know about an issue before any judgment."""

    text: str
    lower: str
    code_blocks: tuple[str, ...]
    prose: str
    has_traceback: bool
    exceptions: tuple[str, ...]
    links: tuple[str, ...]
    versions: tuple[str, ...]
    platforms: frozenset[str]
    backends: frozenset[str]
    tokens: tuple[str, ...] = field(default=(), repr=False)
    pieces: frozenset[str] = field(default=frozenset(), repr=False)
    joined: str = field(default="", repr=False)
    title_grams: frozenset[str] = field(default=frozenset(), repr=False)
    # per-issue results of matching, filled by issuetriage.evidence.matcher (keyed by vocabulary)
    memo: dict[int, frozenset[str]] = field(default_factory=dict, repr=False, compare=False)


# "no helion involved", "without torch.compile", "not using cuda": a mention that says the
# thing is absent is no evidence for it
_NEGATED_BY = (" no", " not", " without", " non", " never", " not using", " not use", " without using",
               " no use of", " not related to", " unrelated to")


def affirmed(signals: Signals, norm: str) -> bool:
    """False only when every prose mention of the keyword `norm` is negated; a name seen only
    inside a dotted token (code) counts as affirmed."""
    joined, needle = signals.joined, f" {norm} "
    at = joined.find(needle)
    if at < 0:
        return True
    while at >= 0:
        before = joined[max(0, at - 16):at]
        if not before.endswith(_NEGATED_BY):
            return True
        at = joined.find(needle, at + 1)
    return False


def links_in(text: str) -> tuple[str, ...]:
    """The http(s) links in `text`, in order, without trailing punctuation."""
    if "http" not in text:
        return ()
    return tuple(dict.fromkeys(u.rstrip(".,;:!?") for u in _URL.findall(text)))


def extract_signals(issue: Issue, max_comments: int = 2) -> Signals:
    """Read the issue as filed: title, body and the first comments by its author, each cut to
    GitHub's limit for it (a stand-in or a store could hand over more)."""
    extra = [capped(c.body) for c in issue.comments[:max_comments] if c.author == issue.author]
    text = "\n\n".join([capped(issue.title, TITLE_LIMIT), capped(issue.body, BODY_LIMIT), *extra])
    blocks = list(fences(text))
    code_blocks = tuple(block.content for block in blocks)
    prose = without_fences(text, blocks) if blocks else text
    exceptions = list(dict.fromkeys(_EXCEPTION.findall(text)))
    if not exceptions:
        exceptions = list(dict.fromkeys(_INLINE_EXC.findall(text)))[:5]
    env = "\n".join(_ENV_DUMP.findall(text)) if "PyTorch version" in text or "Collecting environment" in text else ""
    tokens = tokens_of(_ENV_DUMP.sub(" ", text) if env else text)
    pieces = pieces_of(tokens)
    token_set = pieces.union(tokens_of(env)) if env else pieces  # platforms and backends read the report
    lower = text.lower()
    return Signals(
        text=text,
        lower=lower,
        code_blocks=code_blocks,
        prose=prose,
        has_traceback="Traceback (most recent call last)" in text,
        exceptions=tuple(exceptions),
        links=links_in(text),
        versions=tuple(dict.fromkeys(_TORCH_VERSION.findall(lower))),
        platforms=frozenset(k for k, words in _PLATFORMS.items() if words & token_set),
        backends=frozenset(k for k, words in _BACKENDS.items() if words & token_set),
        tokens=tuple(tokens),
        pieces=pieces,
        joined=f" {' '.join(tokens)} ",
        title_grams=ngrams_of(tokens_of(capped(issue.title, TITLE_LIMIT))),
    )
