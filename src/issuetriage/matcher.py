"""Keyword and pattern matching for profile signals: one set lookup per keyword, regexes only
where a profile asks for them."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from issuetriage.signals import Signals, normalize_keyword


@dataclass(frozen=True)
class Hit:
    """Why a key matched: the keyword or pattern that fired."""

    key: str
    evidence: str


class Matcher:
    """Matches many keyed signal lists (label → keywords/patterns) against one issue at once."""

    def __init__(self, routes: Mapping[str, tuple[Iterable[str], Iterable[str]]]) -> None:
        self._keywords: dict[str, list[tuple[str, str]]] = {}
        self._patterns: list[tuple[str, re.Pattern[str], str]] = []
        for key, (keywords, patterns) in routes.items():
            for kw in keywords:
                norm = normalize_keyword(kw)
                if norm:
                    self._keywords.setdefault(norm, []).append((key, kw))
            for pattern in patterns:
                self._patterns.append((key, re.compile(pattern, re.I | re.M), pattern))

    def hits(self, signals: Signals, text: str | None = None) -> dict[str, list[Hit]]:
        """Every key that matched, with the evidence; `text` overrides where patterns look."""
        found: dict[str, list[Hit]] = {}
        grams = signals.grams
        for norm in grams & self._keywords.keys():
            for key, kw in self._keywords[norm]:
                found.setdefault(key, []).append(Hit(key, kw))
        haystack = signals.text if text is None else text
        for key, rx, pattern in self._patterns:
            m = rx.search(haystack)
            if m:
                found.setdefault(key, []).append(Hit(key, m.group(0)[:60]))
        return found

    def first(self, signals: Signals) -> Hit | None:
        """One matching hit, or None."""
        for hits in self.hits(signals).values():
            return hits[0]
        return None
