"""The repository's own labelled history as evidence: the k most similar earlier issues.

Two steps, so that no query reads the whole history:
1. **Candidates** from a full-text engine: SQLite FTS5 (a built history folder, or in memory) or
   the store's own search index (`store/fts.py`: FTS5, or PostgreSQL's full-text search). The
   query is an OR of the issue's most informative words, ranked by the engine (BM25, title
   weighted); only labelled issues of the same repository with a smaller number (GitHub numbers
   grow with time) are candidates, so an issue never sees itself or anything filed after it.
2. **Similarity** over those candidates alone: TF-IDF cosine (sublinear tf, smoothed idf, words
   in more than half the issues dropped) with the document frequencies frozen when the history
   was built (`TermStats`), so every engine gives the same number and the stacked model
   (`judges/neighbours.py`) reads the similarity it was fitted on.

Words are runs of letters, digits, `_` and `.` (dots trimmed), lower-cased, English stop words
dropped: the tokens scikit-learn's `TfidfVectorizer(token_pattern=r"(?u)\\b[\\w.]{2,}\\b")` finds,
matched in linear time.
"""

from __future__ import annotations

import json
import math
import re
import sqlite3
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from issuetriage.errors import UserError
from issuetriage.models import Issue
from issuetriage.policy import Policy

EXCERPT_CHARS = 240
BODY_CHARS = 3000  # of each issue's body, indexed and compared
MAX_DF = 0.5  # words in more than half the issues say nothing (once there are MIN_FOR_MAX_DF)
MIN_FOR_MAX_DF = 20
QUERY_TERMS = 48  # the issue's most informative words the engine is asked for
CANDIDATES = 128  # the engine's best matches, compared by cosine
TITLE_WEIGHT = 2.0  # BM25 weight of the title column over the body's
_RUN = re.compile(r"[\w.]+")
_FTS_TOKEN = re.compile(r"\w+")


@dataclass(frozen=True)
class Precedent:
    """One earlier labelled issue, as compact as a prompt example needs."""

    number: int
    title: str
    excerpt: str
    labels: tuple[str, ...]
    similarity: float


@dataclass(frozen=True)
class Candidate:
    """An engine's match: an earlier labelled issue with the text the similarity reads, and, from
    a built index, its word counts and the norm of its TF-IDF vector (computed once, at build)."""

    number: int
    title: str
    body: str
    labels: tuple[str, ...]
    counts: dict[str, int] | None = None
    norm: float | None = None


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


class TermStats(Protocol):
    """Document frequencies frozen at build time: how many issues, and in how many each word is."""

    @property
    def issues(self) -> int: ...

    @property
    def stop(self) -> frozenset[str]: ...

    def df(self, terms: Iterable[str]) -> dict[str, int]: ...


class SearchIndex(Protocol):
    """A full-text engine over one repository's labelled issues."""

    def candidates(self, repo: str, phrases: Sequence[str], before: int, limit: int) -> list[Candidate]: ...

    def count(self, repo: str) -> int: ...


def _raw(counts: Counter[str] | dict[str, int], df: dict[str, int], n: int) -> dict[str, float]:
    """Sublinear tf × smoothed idf of the words the stats know and keep (not yet normalised)."""
    limit = MAX_DF * n if n >= MIN_FOR_MAX_DF else math.inf
    return {t: (1.0 + math.log(c)) * (math.log((1 + n) / (1 + df[t])) + 1.0)
            for t, c in counts.items() if 0 < df.get(t, 0) <= limit}


def norm(counts: Counter[str] | dict[str, int], df: dict[str, int], n: int) -> float:
    """The length of a document's TF-IDF vector (1.0 for an empty one)."""
    return math.sqrt(sum(v * v for v in _raw(counts, df, n).values())) or 1.0


class History:
    """Labelled issues of one repository, searchable for the most similar earlier ones."""

    def __init__(self, repo: str, stats: TermStats, index: SearchIndex,
                 gold: Callable[[Iterable[str]], tuple[str, ...]] = tuple) -> None:
        self.repo, self.stats, self.index, self.gold = repo, stats, index, gold

    def __len__(self) -> int:
        return self.index.count(self.repo)

    def similar(self, issue: Issue, k: int) -> tuple[Precedent, ...]:
        """The `k` most similar labelled issues filed before `issue` in the same repository."""
        if issue.repo != self.repo or k <= 0:
            return ()
        n, stop = self.stats.issues, self.stats.stop
        counts = Counter(words(document(issue.title, issue.body), stop))
        df = self.stats.df(counts)
        raw = _raw(counts, df, n)
        if not raw:
            return ()
        length = math.sqrt(sum(v * v for v in raw.values()))
        query = {t: v / length for t, v in raw.items()}
        best = sorted(query, key=lambda t: (-query[t], t))[:QUERY_TERMS]
        found = self.index.candidates(self.repo, [fts_phrase(t) for t in best], issue.number, CANDIDATES)
        scored = []
        for c in found:
            labels = self.gold(c.labels)
            if c.number >= issue.number or not labels:
                continue
            sim = self._cosine(query, df, c)
            if sim > 0:
                scored.append((sim, c, labels))
        scored.sort(key=lambda row: (-row[0], -row[1].number))
        return tuple(Precedent(number=c.number, title=c.title.strip(), excerpt=excerpt(c.body),
                               labels=labels, similarity=round(sim, 4)) for sim, c, labels in scored[:k])

    def _cosine(self, query: dict[str, float], df: dict[str, int], c: Candidate) -> float:
        """Cosine of the query's vector and a candidate's (from its stored counts and norm when the
        index has them, else from its text)."""
        n = self.stats.issues
        if c.counts is None or c.norm is None:
            counts = Counter(words(document(c.title, c.body), self.stats.stop))
            return sum(query[t] * v for t, v in _raw(counts, self.stats.df(counts), n).items()
                       if t in query) / norm(counts, self.stats.df(counts), n)
        shared = {t: c.counts[t] for t in query if t in c.counts}
        return sum(query[t] * v for t, v in _raw(shared, df, n).items()) / c.norm

    def vote(self, issue: Issue, k: int) -> dict[str, float]:
        """Similarity-weighted share of the `k` nearest earlier issues that carry each label."""
        near = self.similar(issue, k)
        total = sum(p.similarity for p in near)
        scores: dict[str, float] = {}
        for p in near:
            for label in p.labels:
                scores[label] = scores.get(label, 0.0) + p.similarity / total
        return {label: round(score, 4) for label, score in sorted(scores.items())}


# -- the index of a built history folder (or of one in memory) -------------------------------------

SCHEMA = """
CREATE TABLE past (number INTEGER PRIMARY KEY, title TEXT NOT NULL, body TEXT NOT NULL,
                   labels TEXT NOT NULL, counts TEXT NOT NULL, norm REAL NOT NULL);
CREATE VIRTUAL TABLE past_fts USING fts5(title, body, content='past', content_rowid='number',
                                         tokenize="unicode61 tokenchars '_'");
CREATE TABLE terms (term TEXT PRIMARY KEY, df INTEGER NOT NULL) WITHOUT ROWID;
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;
"""


class FolderIndex:
    """Past issues (title, start of the body, gold labels, word counts, vector norm), their FTS5
    index and the frozen word statistics, in one SQLite file (a built folder's `index.sqlite3`)
    or in memory (`eval` folds, a JSONL history)."""

    def __init__(self, db: sqlite3.Connection) -> None:
        self.db = db
        meta = dict(db.execute("SELECT key, value FROM meta").fetchall())
        self.repo = meta["repo"]
        self.issues = int(meta["issues"])
        self.stop = frozenset(json.loads(meta["stop"]))

    @classmethod
    def create(cls, db: sqlite3.Connection, repo: str, rows: Iterable[tuple[Issue, Sequence[str]]],
               stop: frozenset[str]) -> FolderIndex:
        """Index labelled issues (labels already the gold ones) into an empty database."""
        db.executescript(SCHEMA)
        with db:
            db.executemany("INSERT INTO meta VALUES (?,?)", [
                ("repo", repo), ("issues", "0"), ("stop", json.dumps(sorted(stop)))])
        index = cls(db)
        index.update(rows, replace_all=False)
        return index

    def update(self, rows: Iterable[tuple[Issue, Sequence[str]]], replace_all: bool = True) -> int:
        """Bring the index to `rows` (with `replace_all`, issues not among them leave it): only
        new or changed issues are re-indexed; then the statistics are frozen again (each
        vector's norm recomputed from the stored word counts: linear, no text read twice).
        Returns how many issues were added, changed or removed."""
        db, changed = self.db, 0
        old = {n: (t, b, labels) for n, t, b, labels in db.execute("SELECT number, title, body, labels FROM past")}
        with db:
            for issue, labels in rows:
                body, label_json = issue.body[:BODY_CHARS], json.dumps(list(labels))
                before = old.pop(issue.number, None)
                if before == (issue.title, body, label_json):
                    continue
                if before is not None:
                    self._forget(issue.number, before[0], before[1])
                counts = Counter(words(document(issue.title, body), self.stop))
                db.execute("INSERT INTO past VALUES (?,?,?,?,?,1.0)", (
                    issue.number, issue.title, body, label_json, json.dumps(counts, separators=(",", ":"))))
                db.execute("INSERT INTO past_fts (rowid, title, body) VALUES (?,?,?)",
                           (issue.number, issue.title, body))
                changed += 1
            for number, (title, body, _) in old.items() if replace_all else ():
                self._forget(number, title, body)
                changed += 1
            self._freeze()
        return changed

    def _forget(self, number: int, title: str, body: str) -> None:
        self.db.execute("INSERT INTO past_fts (past_fts, rowid, title, body) VALUES ('delete',?,?,?)",
                        (number, title, body))
        self.db.execute("DELETE FROM past WHERE number=?", (number,))

    def _freeze(self) -> None:
        """Document frequencies and vector norms from the stored word counts."""
        df: Counter[str] = Counter()
        for (counts,) in self.db.execute("SELECT counts FROM past"):
            df.update(json.loads(counts).keys())
        self.issues = self.db.execute("SELECT COUNT(*) FROM past").fetchone()[0]
        norms = [(norm(json.loads(counts), df, self.issues), number)
                 for number, counts in self.db.execute("SELECT number, counts FROM past")]
        self.db.executemany("UPDATE past SET norm=? WHERE number=?", norms)
        self.db.execute("DELETE FROM terms")
        self.db.executemany("INSERT INTO terms VALUES (?,?)", df.items())
        self.db.execute("UPDATE meta SET value=? WHERE key='issues'", (str(self.issues),))

    def df(self, terms: Iterable[str]) -> dict[str, int]:
        wanted = list(terms)
        out: dict[str, int] = {}
        for start in range(0, len(wanted), 500):
            part = wanted[start:start + 500]
            out.update(self.db.execute(f"SELECT term, df FROM terms WHERE term IN ({','.join('?' * len(part))})",
                                       part).fetchall())
        return out

    def count(self, repo: str) -> int:
        return self.issues if repo == self.repo else 0

    def candidates(self, repo: str, phrases: Sequence[str], before: int, limit: int) -> list[Candidate]:
        if repo != self.repo or not phrases:
            return []
        rows = self.db.execute(
            "SELECT p.number, p.title, p.body, p.labels, p.counts, p.norm FROM (SELECT rowid, "
            "bm25(past_fts, ?, 1.0) AS r FROM past_fts WHERE past_fts MATCH ? AND rowid < ? ORDER BY r "
            "LIMIT ?) AS m JOIN past AS p ON p.number = m.rowid ORDER BY m.r",
            (TITLE_WEIGHT, " OR ".join(phrases), before, limit)).fetchall()
        return [Candidate(n, t, b, tuple(json.loads(labels)), json.loads(counts), length)
                for n, t, b, labels, counts, length in rows]


def english_stop_words() -> frozenset[str]:
    """scikit-learn's English stop words (read when a history is built; stored with it)."""
    from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS

    return frozenset(ENGLISH_STOP_WORDS)


Past = list[tuple[Issue, tuple[str, ...]]]  # labelled issues, oldest first, with their gold labels


def past_of(examples: Iterable[object], repo: str) -> Past:
    """Corpus examples of `repo` that carry gold labels (never their raw process labels)."""
    rows = [(e.issue, tuple(sorted(e.gold))) for e in examples  # type: ignore[attr-defined]
            if e.gold and e.issue.repo == repo]  # type: ignore[attr-defined]
    return sorted(rows, key=lambda row: row[0].number)


def memory_history(repo: str, past: Iterable[tuple[Issue, Sequence[str]]]) -> History:
    """A history held in memory (an in-memory SQLite FTS5 index): `eval` folds, JSONL files."""
    rows = sorted(((i, tuple(sorted(labels))) for i, labels in past if i.repo == repo and labels),
                  key=lambda row: row[0].number)
    index = FolderIndex.create(sqlite3.connect(":memory:", check_same_thread=False), repo, rows,
                               english_stop_words())
    return History(repo, index, index)


def history_from_examples(examples: Iterable[object], policy: Policy) -> History:
    """History from corpus examples (their gold labels, never their raw process labels)."""
    return memory_history(policy.meta.repo, past_of(examples, policy.meta.repo))


def load_history(path: str | Path, policy: Policy) -> tuple[History, Past]:
    """History from a labelled corpus file (in memory), and its labelled issues; every issue must
    belong to the profile's repository."""
    from issuetriage.judges.learned.corpus import load_corpus

    corpus = load_corpus(path, policy, strict=True)
    foreign = next((e.issue for e in corpus.examples if e.issue.repo != policy.meta.repo), None)
    if foreign is not None:
        raise UserError(f"{path}: history issue {foreign.ref} is not from the profile's repository "
                        f"{policy.meta.repo} (profile {policy.name})")
    past = past_of(corpus.examples, policy.meta.repo)
    return memory_history(policy.meta.repo, past), past
