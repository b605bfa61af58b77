"""Keyword and pattern matching for profile signals: one set lookup per keyword, regexes only
where a profile asks for them, on RE2 (`issuetriage.text.compile_linear`): profile patterns are
data, and a repository's own profile is as hostile as its issues."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from issuetriage.evidence.signals import Signals, affirmed
from issuetriage.policy import Policy
from issuetriage.text import PatternSet, compile_linear, first_hit, normalize_keyword


@dataclass(frozen=True)
class Hit:
    """Why a key matched: the keyword or pattern that fired, and its normalized token form."""

    key: str
    evidence: str
    norm: str


class Vocabulary:
    """Every keyword of a set of matchers; finds once per issue which of them occur.

    Matchers that share a vocabulary (all of a profile's) then each look only at the few
    keywords present instead of intersecting the whole issue with their own lists.
    """

    def __init__(self) -> None:
        self.single: set[str] = set()
        self.phrases: dict[str, set[str]] = {}  # first token -> padded phrases

    def add(self, norm: str) -> None:
        parts = norm.split()
        if len(parts) == 1:
            self.single.add(norm)
        elif parts:
            self.phrases.setdefault(parts[0], set()).add(f" {norm} ")

    def present(self, signals: Signals) -> frozenset[str]:
        """The keywords (normalized) that occur in the issue, computed once per issue."""
        found = signals.memo.get(id(self))
        if found is None:
            hits = set(signals.pieces.intersection(self.single))
            joined = signals.joined
            for first in signals.pieces.intersection(self.phrases):
                hits.update(p[1:-1] for p in self.phrases[first] if p in joined)
            found = signals.memo[id(self)] = frozenset(hits)
        return found


class Matcher:
    """Matches many keyed signal lists (label → keywords/patterns) against one issue at once."""

    def __init__(self, routes: Mapping[str, tuple[Iterable[str], Iterable[str]]],
                 vocabulary: Vocabulary | None = None) -> None:
        self.vocabulary = vocabulary or Vocabulary()
        self._keywords: dict[str, list[tuple[str, str]]] = {}  # normalized keyword -> (key, keyword)
        keyed: list[tuple[str, str]] = []  # (key, pattern)
        for key, (keywords, patterns) in routes.items():
            for kw in keywords:
                norm = normalize_keyword(kw)
                if norm:
                    self._keywords.setdefault(norm, []).append((key, kw))
                    self.vocabulary.add(norm)
            keyed += [(key, pattern) for pattern in patterns]
        self._pattern_keys = [key for key, _ in keyed]
        self._patterns = PatternSet([pattern for _, pattern in keyed], re.I | re.M)
        self._keyset = frozenset(self._keywords)
        # hits come back in the profile's keyword order, never set order: plans are byte-stable
        self._rank = {norm: i for i, norm in enumerate(self._keywords)}

    def hits(self, signals: Signals, text: str | None = None) -> dict[str, list[Hit]]:
        """Every key that matched, with the evidence; `text` overrides where patterns look."""
        found: dict[str, list[Hit]] = {}
        present = self.vocabulary.present(signals) & self._keyset
        for norm in sorted(present, key=self._rank.__getitem__):
            if not affirmed(signals, norm):
                continue
            for key, kw in self._keywords[norm]:
                found.setdefault(key, []).append(Hit(key, kw, norm))
        haystack = signals.text if text is None else text
        for i in self._patterns.matching(haystack):
            key = self._pattern_keys[i]
            m = first_hit(self._patterns.compiled[i], haystack)
            if m:
                evidence = m.group(0)[:60]
                found.setdefault(key, []).append(Hit(key, evidence, normalize_keyword(evidence)))
        return found


def _routes(items: Mapping[str, object]) -> dict[str, tuple[Iterable[str], Iterable[str]]]:
    return {key: (route.keywords, route.patterns) for key, route in items.items()}  # type: ignore[attr-defined]


class PolicyMatchers:
    """Every matcher a profile defines, compiled once per loaded policy."""

    def __init__(self, policy: Policy) -> None:
        rules, queues = policy.rules, policy.queues
        vocab = Vocabulary()

        def matcher(routes: Mapping[str, tuple[Iterable[str], Iterable[str]]]) -> Matcher:
            return Matcher(routes, vocab)

        self.catalog = matcher({s.name: (s.keywords, s.patterns) for s in policy.catalog.label})
        self.title = matcher({s.name: (s.title_keywords, ()) for s in policy.catalog.label
                              if s.title_keywords})
        routes: dict[str, object] = {q.label: q for q in queues.redirect}
        if queues.pt2:
            routes[queues.pt2.label] = queues.pt2
        self.queues = matcher(_routes(routes))
        self.transfer = matcher(_routes({t.repo: t for t in queues.transfer}))
        self.kind = matcher(_routes({"question": rules.question, "bug": rules.bug,
                                     "feature": rules.feature,
                                     "expected_behavior": rules.expected_behavior}))
        self.question_marker = matcher(_routes({"question": rules.question_marker}))
        self.missing_repro = matcher(_routes(rules.missing_repro))
        self.edge = matcher(_routes({"edge_case": rules.edge_case, "fuzzer": rules.fuzzer}))
        self.escalate = matcher(_routes(rules.escalate))
        self.commonly_missed = matcher(_routes(rules.commonly_missed))
        self.pt2_modules = matcher(_routes(rules.pt2_modules))
        self.pt2_cpu_only = matcher(_routes({"cpu": rules.pt2_cpu_only}))
        self.hub = tuple(compile_linear(p, re.I) for p in rules.hub_patterns)


_MATCHERS: dict[int, tuple[Policy, PolicyMatchers]] = {}


def matchers(policy: Policy) -> PolicyMatchers:
    """The compiled matchers for `policy` (built on first use, then reused)."""
    entry = _MATCHERS.get(id(policy))
    if entry is None or entry[0] is not policy:
        entry = (policy, PolicyMatchers(policy))
        _MATCHERS[id(policy)] = entry
    return entry[1]
