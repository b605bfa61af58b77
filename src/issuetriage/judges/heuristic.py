"""The offline heuristic judge: profile signals scored against the issue, no model, no network.

Confidence grows with independent evidence: each distinct keyword or pattern that fires counts
once, and a hit in the title counts more than one in the body. Low confidence means abstaining.
"""

from __future__ import annotations

from issuetriage.evidence.matcher import Hit, matchers
from issuetriage.evidence.signals import Signals
from issuetriage.judges.base import Judgment, Kind, LabelScore, MissingRepro
from issuetriage.models import Issue
from issuetriage.policy import Policy

_DECAY = 0.55
_TITLE_WEIGHT = 1.5
_QUESTION_CONFIDENCE = 0.85
_MIN_CLEAR_PROSE = 60


def evidence_confidence(hits: list[Hit], title_grams: frozenset[str]) -> float:
    """1 - decay^(weight): one body hit ~0.45, two ~0.70, one in the title ~0.75."""
    distinct = {h.norm for h in hits}
    weight = float(len(distinct))
    if not distinct.isdisjoint(title_grams):
        weight += _TITLE_WEIGHT
    return round(1.0 - _DECAY ** weight, 4)


def _reason(hits: list[Hit]) -> str:
    seen = list(dict.fromkeys(h.evidence for h in hits))
    return "matched " + ", ".join(repr(e) for e in seen[:3])


class HeuristicJudge:
    """Rules from the profile, scored on the issue's signals."""

    name = "heuristic"

    def judge(self, issue: Issue, signals: Signals, policy: Policy) -> Judgment:
        """Answer the tree's questions from keyword and pattern evidence."""
        m = matchers(policy)
        title_grams = signals.title_grams
        best: dict[str, tuple[float, list[Hit]]] = {}
        found = [m.catalog.hits(signals), m.commonly_missed.hits(signals), m.queues.hits(signals),
                 m.pt2_modules.hits(signals)]
        for label, hits in m.title.hits(signals).items():
            # title-only words: one title mention at most, and none when the label's own
            # keywords already name it in the title (the same words must not count twice)
            said = [h for h in hits if h.norm in title_grams]
            known = found[0].setdefault(label, [])
            if said and not any(h.norm in title_grams for h in known):
                known.append(max(said, key=lambda h: (len(h.norm), h.norm)))
        for hits_by_label in found:
            for label, hits in hits_by_label.items():
                conf = evidence_confidence(hits, title_grams)
                if label not in best or best[label][0] < conf:
                    best[label] = (conf, hits)
        scores = {label: LabelScore(name=label, confidence=conf, reason=_reason(hits))
                  for label, (conf, hits) in best.items()}
        self._edge_cases(signals, policy, title_grams, scores)
        kind, kind_conf, why = self._kind(issue, signals, policy, scores)
        transfer, transfer_conf = self._transfer(signals, policy, title_grams)
        return Judgment(
            judge=self.name,
            kind=kind,
            kind_confidence=kind_conf,
            labels=tuple(sorted(scores.values(), key=lambda s: (-s.confidence, s.name))),
            transfer_repo=transfer,
            transfer_confidence=transfer_conf,
            missing_repro=self._missing_repro(signals, policy),
            escalate_reasons=tuple(sorted(m.escalate.hits(signals))),
            reasoning=why,
        )

    @staticmethod
    def _edge_cases(signals: Signals, policy: Policy, title_grams: frozenset[str],
                    scores: dict[str, LabelScore]) -> None:
        """Edge-case evidence, unless a root-cause label (tests, binaries, ...) explains it."""
        hits = matchers(policy).edge.hits(signals)
        if not hits:
            return
        threshold = policy.meta.thresholds.label
        if any(label in scores and scores[label].confidence >= threshold
               for label in policy.rules.edge_case_root_causes):
            return
        for key, label in (("edge_case", policy.bot.edge_cases), ("fuzzer", policy.bot.fuzzer)):
            if label and key in hits:
                conf = evidence_confidence(hits[key], title_grams)
                if label not in scores or conf > scores[label].confidence:
                    scores[label] = LabelScore(name=label, confidence=conf, reason=_reason(hits[key]))

    @staticmethod
    def _kind(issue: Issue, signals: Signals, policy: Policy,
              scores: dict[str, LabelScore]) -> tuple[Kind, float, str]:
        """Question, bug, feature or unclear, from the kind rules and the shape of the report."""
        hits = matchers(policy).kind.hits(signals)
        n = {key: len({h.norm for h in hits.get(key, [])}) for key in
             ("question", "bug", "feature", "expected_behavior")}
        errors = signals.has_traceback or bool(signals.exceptions)
        any_label = bool(scores)
        if n["feature"] >= 2 and n["feature"] > n["bug"] and not errors:
            return Kind.FEATURE, 0.8, f"asks for something new ({n['feature']} feature signals)"
        # a confident specific type label (redundancy.toml: `enhancement`, an improvement to
        # something that works such as a clearer error message, or `function request`) on a
        # request: quoting the error it improves is not a defect, a traceback is
        types = policy.meta.type_labels
        specific = {p.specific for p in policy.redundancy.pair if p.specific in types and p.generic in types}
        requested = sorted(t for t in specific
                           if t in scores and scores[t].confidence >= policy.meta.thresholds.label)
        if requested and n["feature"] >= 2 and not signals.has_traceback:
            return Kind.FEATURE, 0.8, f"asks for a change ({requested[0]}, {n['feature']} feature signals)"
        marked = bool(matchers(policy).question_marker.hits(signals, text=issue.title))
        if n["question"] and not errors and not n["bug"] and not n["feature"] and not signals.code_blocks:
            if marked:
                return Kind.QUESTION, _QUESTION_CONFIDENCE, f"asks how to use {policy.project} and reports no defect"
            return Kind.QUESTION, 0.6, "reads like a usage question, but its title does not ask one"
        if n["expected_behavior"] >= 2 and not errors and not signals.code_blocks and not n["feature"]:
            return Kind.EXPECTED_BEHAVIOR, _QUESTION_CONFIDENCE, "the reporter shows the behaviour is documented and intended"
        prose = len(signals.prose.strip()) - len(issue.title)
        if prose < _MIN_CLEAR_PROSE and not signals.code_blocks and not errors and not any_label:
            return Kind.UNCLEAR, 0.7, "too little to go on: no code, no error, hardly any text"
        if n["feature"] > n["bug"] and not errors:
            return Kind.FEATURE, 0.6, "more feature than bug signals"
        if n["question"] and not errors and not n["bug"]:
            return Kind.BUG, 0.5, "reads like a question but asks about a possible defect"
        return Kind.BUG, 0.8 if errors else 0.6, "reports a defect" + (" with an error" if errors else "")

    @staticmethod
    def _transfer(signals: Signals, policy: Policy, title_grams: frozenset[str]) -> tuple[str | None, float]:
        """A sibling repo only when its package is the subject (named in the title, repeatedly in the body)."""
        best: tuple[str | None, float] = (None, 0.0)
        for repo, hits in matchers(policy).transfer.hits(signals).items():
            in_title = any(h.norm in title_grams for h in hits)
            distinct = len({h.norm for h in hits})
            conf = min(0.45, 0.15 * distinct) + (0.4 if in_title else 0.0)
            if conf > best[1]:
                best = (repo, round(conf, 4))
        return best

    @staticmethod
    def _missing_repro(signals: Signals, policy: Policy) -> MissingRepro | None:
        """Why a report without a script can't be reproduced (None when it has code or no such hint)."""
        if signals.code_blocks:
            return None
        hits = matchers(policy).missing_repro.hits(signals)
        for kind in MissingRepro:
            if kind.value in hits:
                return kind
        return None
