"""Signals: facts read from an issue's text, computed once and shared by every step and judge.

Pure and fast (no Markdown parser on the hot path): fenced code blocks, tracebacks, exception
names, versions, links, platforms and backends, plus the word n-grams keyword matching needs.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import cached_property

from issuetriage.models import Issue

_FENCE = re.compile(r"^[ \t]*(```|~~~)[^\n]*\n(.*?)^[ \t]*\1[ \t]*$", re.S | re.M)
_TRACEBACK = re.compile(r"Traceback \(most recent call last\):")
_EXCEPTION = re.compile(
    r"^\s*(?:[\w.]+\.)?([A-Z]\w*(?:Error|Exception|Warning|Failed|Unsupported|Interrupt))\b(?::|$)",
    re.M,
)
_INLINE_EXC = re.compile(r"\b([A-Z]\w*(?:Error|Exception))\b")
_URL = re.compile(r"https?://[^\s<>()\[\]\"'`]+")
_TORCH_VERSION = re.compile(
    r"(?:PyTorch version|torch version|torch==|torch |pytorch |torch: |pytorch==)\s*:?\s*v?(\d+\.\d+)(?:\.\d+)?",
    re.I,
)
_TOKEN = re.compile(r"[a-z0-9_]+(?:\.[a-z0-9_]+)*")
_PLATFORMS = {
    "windows": re.compile(r"\bwindows\b|\bwin(?:10|11|32|64)\b|OS: Microsoft Windows", re.I),
    "macos": re.compile(r"\bmac ?os\b|\bosx\b|\bapple (?:m1|m2|m3|m4|silicon)\b|\bdarwin\b", re.I),
    "linux": re.compile(r"\blinux\b|\bubuntu\b|\bcentos\b|\bdebian\b|\bfedora\b", re.I),
}
_BACKENDS = {
    "cuda": re.compile(r"\bcuda\b|\.cuda\(|device=['\"]cuda|\bnvidia\b|\bgpu\b", re.I),
    "rocm": re.compile(r"\brocm\b|\bhip\b|\bmi[23]\d0x?\b|\bamd gpu\b", re.I),
    "mps": re.compile(r"\bmps\b|device=['\"]mps", re.I),
    "xpu": re.compile(r"\bxpu\b|intel gpu", re.I),
    "cpu": re.compile(r"\bcpu\b", re.I),
}
MAX_NGRAM = 6


def tokens_of(text: str) -> list[str]:
    """Lower-case word tokens; dotted names (torch.nn.Linear) stay whole."""
    return _TOKEN.findall(text.lower())


def ngrams_of(tokens: list[str], max_n: int = MAX_NGRAM) -> frozenset[str]:
    """Every run of up to `max_n` tokens joined by spaces, plus each part of a dotted name."""
    grams: set[str] = set()
    for tok in tokens:
        if "." in tok:
            parts = tok.split(".")
            for i in range(len(parts)):
                for j in range(i + 1, min(len(parts), i + 4) + 1):
                    grams.add(".".join(parts[i:j]))
    n_tok = len(tokens)
    for i in range(n_tok):
        gram = tokens[i]
        grams.add(gram)
        for j in range(i + 1, min(n_tok, i + max_n)):
            gram = f"{gram} {tokens[j]}"
            grams.add(gram)
    return frozenset(grams)


def normalize_keyword(keyword: str) -> str:
    """A keyword in the form `ngrams_of` produces, so matching is one set lookup."""
    return " ".join(tokens_of(keyword))


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
    grams: frozenset[str] = field(repr=False)

    @property
    def has_code(self) -> bool:
        return bool(self.code_blocks)

    @cached_property
    def title_lower(self) -> str:
        return self.text.split("\n", 1)[0].lower()


def extract_signals(issue: Issue, max_comments: int = 2) -> Signals:
    """Read the issue as filed: title, body and the first comments by its author."""
    extra = [c.body for c in issue.comments[:max_comments] if c.author == issue.author]
    text = "\n\n".join([issue.title, issue.body, *extra])
    code_blocks = tuple(m.group(2) for m in _FENCE.finditer(text))
    prose = _FENCE.sub(" ", text)
    exceptions = list(dict.fromkeys(_EXCEPTION.findall(text)))
    if not exceptions:
        exceptions = list(dict.fromkeys(_INLINE_EXC.findall(text)))[:5]
    return Signals(
        text=text,
        lower=text.lower(),
        code_blocks=code_blocks,
        prose=prose,
        has_traceback=bool(_TRACEBACK.search(text)),
        exceptions=tuple(exceptions),
        links=tuple(dict.fromkeys(u.rstrip(".,;:!?") for u in _URL.findall(text))),
        versions=tuple(dict.fromkeys(_TORCH_VERSION.findall(text))),
        platforms=frozenset(k for k, rx in _PLATFORMS.items() if rx.search(text)),
        backends=frozenset(k for k, rx in _BACKENDS.items() if rx.search(text)),
        grams=ngrams_of(tokens_of(text)),
    )
