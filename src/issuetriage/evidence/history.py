"""The repository's own labelled history as evidence: the k most similar earlier issues.

TF-IDF over title and body (scikit-learn, no download). An issue never sees itself or anything
filed after it: only issues of the same repository with a smaller number (GitHub numbers grow
with time) are candidates, so replaying history through `eval` cannot leak an issue's labels.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from issuetriage.errors import UserError
from issuetriage.models import Issue
from issuetriage.policy import Policy

EXCERPT_CHARS = 240
_BODY_CHARS = 3000


@dataclass(frozen=True)
class Precedent:
    """One earlier labelled issue, as compact as a prompt example needs."""

    number: int
    title: str
    excerpt: str
    labels: tuple[str, ...]
    similarity: float


def _document(issue: Issue) -> str:
    return f"{issue.title}\n{issue.title}\n{issue.body[:_BODY_CHARS]}"


def _excerpt(body: str) -> str:
    text = " ".join(body.replace("`", " ").split())
    return text if len(text) <= EXCERPT_CHARS else text[:EXCERPT_CHARS - 3].rstrip() + "..."


class History:
    """Labelled issues of one repository, indexed for similarity search."""

    def __init__(self, repo: str, labelled: Iterable[tuple[Issue, Iterable[str]]]) -> None:
        from sklearn.feature_extraction.text import TfidfVectorizer

        rows = sorted(((i, tuple(sorted(labels))) for i, labels in labelled if i.repo == repo),
                      key=lambda row: row[0].number)
        self.repo = repo
        self.issues = tuple(i for i, labels in rows if labels)
        self.labels = tuple(labels for _, labels in rows if labels)
        self.numbers = np.array([i.number for i in self.issues], dtype=np.int64)
        # words in half the issues say nothing, but only once there are enough issues to tell
        self._vectorizer = TfidfVectorizer(sublinear_tf=True, min_df=1,
                                           max_df=0.5 if len(self.issues) >= 20 else 1.0,
                                           stop_words="english", token_pattern=r"(?u)\b[\w.]{2,}\b")
        try:
            self._matrix = (self._vectorizer.fit_transform([_document(i) for i in self.issues])
                            if self.issues else None)
        except ValueError:  # no usable words at all (stop words only)
            self._matrix = None

    def __len__(self) -> int:
        return len(self.issues)

    def similar(self, issue: Issue, k: int) -> tuple[Precedent, ...]:
        """The `k` most similar labelled issues filed before `issue` in the same repository."""
        if self._matrix is None or issue.repo != self.repo or k <= 0:
            return ()
        earlier = self.numbers < issue.number
        if not earlier.any():
            return ()
        sims = (self._matrix @ self._vectorizer.transform([_document(issue)]).T).toarray().ravel()
        sims = np.where(earlier, sims, -1.0)
        order = sorted(np.flatnonzero(sims > 0).tolist(), key=lambda j: (-sims[j], -self.numbers[j]))
        return tuple(Precedent(number=int(self.numbers[j]), title=self.issues[j].title.strip(),
                               excerpt=_excerpt(self.issues[j].body), labels=self.labels[j],
                               similarity=round(float(sims[j]), 4)) for j in order[:k])

    def vote(self, issue: Issue, k: int) -> dict[str, float]:
        """Similarity-weighted share of the `k` nearest earlier issues that carry each label."""
        near = self.similar(issue, k)
        total = sum(p.similarity for p in near)
        scores: dict[str, float] = {}
        for p in near:
            for label in p.labels:
                scores[label] = scores.get(label, 0.0) + p.similarity / total
        return {label: round(score, 4) for label, score in sorted(scores.items())}


def history_from_examples(examples: Iterable[object], policy: Policy) -> History:
    """History from corpus examples (their gold labels, never their raw process labels)."""
    return History(policy.meta.repo, ((e.issue, e.gold) for e in examples))  # type: ignore[attr-defined]


def load_history(path: str | Path, policy: Policy) -> History:
    """History from a labelled corpus file; every issue must belong to the profile's repository."""
    from issuetriage.judges.learned.corpus import load_corpus

    corpus = load_corpus(path, policy, strict=True)
    foreign = next((e.issue for e in corpus.examples if e.issue.repo != policy.meta.repo), None)
    if foreign is not None:
        raise UserError(f"{path}: history issue {foreign.ref} is not from the profile's repository "
                        f"{policy.meta.repo} (profile {policy.name})")
    return history_from_examples(corpus.examples, policy)
