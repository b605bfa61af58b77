"""Keyword and pattern matching for profile signals: one set lookup per keyword, regexes only
where a profile asks for them."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from issuetriage.policy import Policy
from issuetriage.signals import MAX_NGRAM, Signals, normalize_keyword


@dataclass(frozen=True)
class Hit:
    """Why a key matched: the keyword or pattern that fired, and its normalized token form."""

    key: str
    evidence: str
    norm: str


def required_literal(pattern: str) -> str:
    """The longest literal every match must contain (lower-case), or "" when none is certain.

    Checking it with `in` first skips most regex searches: patterns are the engine's hot path.
    """
    try:
        from re import _parser  # type: ignore[attr-defined]
        parsed = _parser.parse(pattern, re.I)
    except Exception:  # an internal API: without it we simply don't prefilter
        return ""
    best, run = "", []
    for op, arg in list(parsed) + [(None, None)]:
        if str(op) == "LITERAL":
            run.append(chr(arg))
            continue
        literal = "".join(run).lower()
        best = literal if len(literal) > len(best) else best
        run = []
    return best if len(best) >= 3 else ""


class Matcher:
    """Matches many keyed signal lists (label → keywords/patterns) against one issue at once."""

    def __init__(self, routes: Mapping[str, tuple[Iterable[str], Iterable[str]]]) -> None:
        self._keywords: dict[str, list[tuple[str, str]]] = {}
        self._long: list[tuple[str, str, str]] = []  # more tokens than n-grams hold: substring check
        self._patterns: list[tuple[str, re.Pattern[str], str]] = []
        for key, (keywords, patterns) in routes.items():
            for kw in keywords:
                norm = normalize_keyword(kw)
                if norm.count(" ") >= MAX_NGRAM:
                    self._long.append((key, kw, f" {norm} "))
                elif norm:
                    self._keywords.setdefault(norm, []).append((key, kw))
            for pattern in patterns:
                self._patterns.append((key, re.compile(pattern, re.I | re.M), required_literal(pattern)))
        self._keyset = frozenset(self._keywords)

    def hits(self, signals: Signals, text: str | None = None) -> dict[str, list[Hit]]:
        """Every key that matched, with the evidence; `text` overrides where patterns look."""
        found: dict[str, list[Hit]] = {}
        grams = signals.grams
        for norm in grams & self._keyset:
            for key, kw in self._keywords[norm]:
                found.setdefault(key, []).append(Hit(key, kw, norm))
        for key, kw, padded in self._long:
            if padded in signals.joined:
                found.setdefault(key, []).append(Hit(key, kw, padded.strip()))
        haystack = signals.text if text is None else text
        lower = signals.lower if text is None else text.lower()
        for key, rx, literal in self._patterns:
            if literal and literal not in lower:
                continue
            m = rx.search(haystack)
            if m:
                text = m.group(0)[:60]
                found.setdefault(key, []).append(Hit(key, text, normalize_keyword(text)))
        return found

    def first(self, signals: Signals) -> Hit | None:
        """One matching hit, or None."""
        for hits in self.hits(signals).values():
            return hits[0]
        return None


def _routes(items: Mapping[str, object]) -> dict[str, tuple[Iterable[str], Iterable[str]]]:
    return {key: (route.keywords, route.patterns) for key, route in items.items()}  # type: ignore[attr-defined]


class PolicyMatchers:
    """Every matcher a profile defines, compiled once per loaded policy."""

    def __init__(self, policy: Policy) -> None:
        rules, queues = policy.rules, policy.queues
        self.catalog = Matcher({s.name: (s.keywords, s.patterns) for s in policy.catalog.label})
        routes: dict[str, object] = {q.label: q for q in queues.redirect}
        if queues.pt2:
            routes[queues.pt2.label] = queues.pt2
        self.queues = Matcher(_routes(routes))
        self.transfer = Matcher(_routes({t.repo: t for t in queues.transfer}))
        self.kind = Matcher(_routes({"question": rules.question, "bug": rules.bug,
                                     "feature": rules.feature,
                                     "expected_behavior": rules.expected_behavior}))
        self.question_marker = Matcher(_routes({"question": rules.question_marker}))
        self.missing_repro = Matcher(_routes(rules.missing_repro))
        self.edge = Matcher(_routes({"edge_case": rules.edge_case, "fuzzer": rules.fuzzer}))
        self.escalate = Matcher(_routes(rules.escalate))
        self.commonly_missed = Matcher(_routes(rules.commonly_missed))
        self.pt2_modules = Matcher(_routes(rules.pt2_modules))
        self.pt2_cpu_only = Matcher(_routes({"cpu": rules.pt2_cpu_only}))


_MATCHERS: dict[int, tuple[Policy, PolicyMatchers]] = {}


def matchers(policy: Policy) -> PolicyMatchers:
    """The compiled matchers for `policy` (built on first use, then reused)."""
    entry = _MATCHERS.get(id(policy))
    if entry is None or entry[0] is not policy:
        entry = (policy, PolicyMatchers(policy))
        _MATCHERS[id(policy)] = entry
    return entry[1]
