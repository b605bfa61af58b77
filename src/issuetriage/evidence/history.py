"""The repository's own labelled history as evidence: the k most similar earlier issues.

Two steps, so that no query reads the whole history:
1. **Candidates** from a full-text engine: SQLite FTS5 (a built history folder, or in memory;
   `evidence/history_index.py`) or the store's own search index (`store/fts.py`: FTS5, or
   PostgreSQL's full-text search): every labelled issue of the same repository with a smaller
   number (GitHub numbers grow with time, so an issue never sees itself or anything filed after
   it) that holds one of the issue's most informative words, taken in order of weight while
   their postings (document frequencies) fit a budget of `POSTINGS`, so a query costs about the
   same at any scale.
2. **Similarity** over those candidates alone: TF-IDF cosine (sublinear tf, smoothed idf, words
   in more than half the issues dropped) with the word statistics and each issue's vector frozen
   when the history was built (`Vocabulary`), so every engine gives the same number and the
   stacked model (`judges/neighbours.py`) reads the similarity it was fitted on. An issue the
   engine knows but the build did not (the store's newer issues) is vectorised from its text.

On the dev corpus (1,422 issues) the budget leaves no word out, and the neighbours are exactly
those of a cosine over every earlier issue; at 100,000 issues the rarest, heaviest words are kept.
Words are runs of letters, digits, `_` and `.` (dots trimmed), lower-cased, English stop words
dropped: the tokens scikit-learn's `TfidfVectorizer(token_pattern=r"(?u)\\b[\\w.]{2,}\\b")` finds,
matched in linear time.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple, Protocol

import numpy as np

from issuetriage.models import Issue

EXCERPT_CHARS = 240
BODY_CHARS = 3000  # of each issue's body, indexed and compared
MAX_DF = 0.5  # words in more than half the issues say nothing (once there are MIN_FOR_MAX_DF)
MIN_FOR_MAX_DF = 20
POSTINGS = 3_000  # the issue's most informative words are looked up while their postings fit this
LIMIT = 4 * POSTINGS  # the most matches an engine returns (the live store's may have grown)
_RUN = re.compile(r"[\w.]+")
_FTS_TOKEN = re.compile(r"\w+")


class Filed(NamedTuple):
    """A labelled past issue as history keeps it: what is indexed, and enough to judge it again
    as it was filed (a tuple: a 100,000-issue history is read into memory before it is indexed)."""

    repo: str
    number: int
    title: str
    body: str

    def issue(self) -> Issue:
        return Issue(repo=self.repo, number=self.number, title=self.title, body=self.body)


Past = list[tuple[Filed, tuple[str, ...]]]  # labelled issues, oldest first, with their gold labels


def filed(issue: Issue) -> Filed:
    return Filed(issue.repo, issue.number, issue.title, issue.body)


@dataclass(frozen=True)
class Precedent:
    """One earlier labelled issue, as compact as a prompt example needs."""

    number: int
    title: str
    excerpt: str
    labels: tuple[str, ...]
    similarity: float


def document(title: str, body: str) -> str:
    """What is compared: the title twice (it says most) and the start of the body."""
    return f"{title}\n{title}\n{body[:BODY_CHARS]}"


def words(text: str, stop: frozenset[str]) -> list[str]:
    """The text's words (with repeats), lower-cased, dots trimmed, stop words dropped."""
    out = []
    for run in _RUN.findall(text.lower()):
        word = run.strip(".")
        if len(word) >= 2 and word not in stop:
            out.append(word)
    return out


def excerpt(body: str) -> str:
    text = " ".join(body.replace("`", " ").split())
    return text if len(text) <= EXCERPT_CHARS else text[:EXCERPT_CHARS - 3].rstrip() + "..."


def fts_phrase(word: str) -> str:
    """One word as an FTS5 phrase (`torch.nn` → "torch nn", as the engine's tokenizer splits it)."""
    return '"' + " ".join(_FTS_TOKEN.findall(word)) + '"'


def idf(df: int, n: int) -> float:
    """Smoothed inverse document frequency, 0 for a word too common (or unknown) to say anything."""
    if df <= 0 or (n >= MIN_FOR_MAX_DF and df > MAX_DF * n):
        return 0.0
    return math.log((1 + n) / (1 + df)) + 1.0


class Vocabulary(Protocol):
    """What the build froze: the word statistics and the vectors of the issues it indexed."""

    @property
    def issues(self) -> int: ...

    @property
    def stop(self) -> frozenset[str]: ...

    def lookup(self, terms: Iterable[str]) -> dict[str, tuple[int, int]]:
        """Each known word's (id, document frequency)."""
        ...

    def cosines(self, numbers: Sequence[int], query: dict[int, float]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The indexed issues among `numbers`, their cosines with the query vector (term id →
        weight), and the issues not indexed."""
        ...


class SearchIndex(Protocol):
    """A full-text engine over one repository's labelled issues."""

    def matches(self, repo: str, phrases: Sequence[str], before: int) -> list[int]:
        """The labelled issues numbered below `before` holding any of `phrases` (at most LIMIT)."""
        ...

    def labels(self, repo: str, numbers: Sequence[int]) -> dict[int, tuple[str, ...]]:
        """The labels some issues carry now."""
        ...

    def texts(self, repo: str, numbers: Sequence[int]) -> dict[int, tuple[str, str]]:
        """Title and body of some issues."""
        ...

    def count(self, repo: str) -> int: ...


def weights(counts: Counter[str], known: dict[str, tuple[int, int]], n: int) -> dict[int, float]:
    """One document's TF-IDF vector (term id → weight), L2-normalised."""
    raw = {known[t][0]: (1.0 + math.log(c)) * idf(known[t][1], n) for t, c in counts.items() if t in known}
    raw = {i: v for i, v in raw.items() if v > 0}
    norm = math.sqrt(sum(v * v for v in raw.values())) or 1.0
    return {i: v / norm for i, v in raw.items()}


class History:
    """Labelled issues of one repository, searchable for the most similar earlier ones."""

    def __init__(self, repo: str, vocabulary: Vocabulary, index: SearchIndex,
                 gold: Callable[[Iterable[str]], tuple[str, ...]] = tuple) -> None:
        self.repo, self.vocabulary, self.index, self.gold = repo, vocabulary, index, gold

    def __len__(self) -> int:
        return self.index.count(self.repo)

    def similar(self, issue: Issue, k: int) -> tuple[Precedent, ...]:
        """The `k` most similar labelled issues filed before `issue` in the same repository."""
        if issue.repo != self.repo or k <= 0:
            return ()
        vocab = self.vocabulary
        counts = Counter(words(document(issue.title, issue.body), vocab.stop))
        known = vocab.lookup(counts)
        query = weights(counts, known, vocab.issues)
        if not query:
            return ()
        found = [n for n in self.index.matches(self.repo, self._phrases(query, known), issue.number)
                 if n < issue.number]
        numbers, sims, unknown = vocab.cosines(found, query)
        extra = []
        for number, (title, body) in self.index.texts(self.repo, unknown.tolist()).items():
            other = Counter(words(document(title, body), vocab.stop))
            vector = weights(other, vocab.lookup(other), vocab.issues)
            extra.append((number, sum(w * vector.get(i, 0.0) for i, w in query.items())))
        if extra:
            numbers = np.concatenate([numbers, np.array([n for n, _ in extra], dtype=np.int64)])
            sims = np.concatenate([sims, np.array([v for _, v in extra])])
        order = np.lexsort((-numbers, -sims))  # most similar first; the newer of two equals first
        order = order[sims[order] > 0]
        chosen: list[tuple[float, int, tuple[str, ...]]] = []
        for start in range(0, len(order), 4 * k):  # the labels of the best, until k carry gold ones
            batch = [(float(sims[j]), int(numbers[j])) for j in order[start:start + 4 * k]]
            labels = self.index.labels(self.repo, [n for _, n in batch])
            chosen += [(s, n, gold) for s, n in batch if (gold := self.gold(labels.get(n, ())))]
            if len(chosen) >= k:
                break
        texts = self.index.texts(self.repo, [n for _, n, _ in chosen[:k]])
        return tuple(Precedent(number=n, title=texts[n][0].strip(), excerpt=excerpt(texts[n][1]),
                               labels=gold, similarity=round(s, 4)) for s, n, gold in chosen[:k])

    @staticmethod
    def _phrases(query: dict[int, float], known: dict[str, tuple[int, int]]) -> list[str]:
        """The query's most informative words, as many as fit the postings budget."""
        by_id = {i: (t, df) for t, (i, df) in known.items()}
        phrases, postings = [], 0
        for i in sorted(query, key=lambda i: (-query[i], by_id[i][0])):
            term, df = by_id[i]
            if postings + df <= POSTINGS:
                phrases.append(fts_phrase(term))
                postings += df
        return phrases

    def vote(self, issue: Issue, k: int) -> dict[str, float]:
        """Similarity-weighted share of the `k` nearest earlier issues that carry each label."""
        near = self.similar(issue, k)
        total = sum(p.similarity for p in near)
        scores: dict[str, float] = {}
        for p in near:
            for label in p.labels:
                scores[label] = scores.get(label, 0.0) + p.similarity / total
        return {label: round(score, 4) for label, score in sorted(scores.items())}


def cosines(matrix: Any, numbers: np.ndarray, wanted: Sequence[int], query: dict[int, float]
            ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The `wanted` issues stored as rows of a CSR `matrix` (one row per issue of the sorted
    `numbers`), their cosines with a query vector, and the wanted issues not stored."""
    asked = np.asarray(wanted, dtype=np.int64)
    if not len(asked) or not len(numbers):
        return np.zeros(0, dtype=np.int64), np.zeros(0), asked
    rows = np.searchsorted(numbers, asked)
    hit = (rows < len(numbers)) & (numbers[np.minimum(rows, len(numbers) - 1)] == asked)
    dense = np.zeros(matrix.shape[1], dtype=np.float64)
    ids = np.fromiter(query, dtype=np.int64, count=len(query))
    inside = ids < len(dense)  # a word newer than the vectors matches none of them
    dense[ids[inside]] = np.fromiter(query.values(), dtype=np.float64, count=len(query))[inside]
    return asked[hit], np.asarray(matrix[rows[hit]] @ dense, dtype=np.float64), asked[~hit]


def english_stop_words() -> frozenset[str]:
    """scikit-learn's English stop words (read when a history is built; stored with it)."""
    from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS  # lazy: a loaded folder stores its own

    return frozenset(ENGLISH_STOP_WORDS)
