"""Text features for the learned judge: our own small TF-IDF, so training and serving share code.

Tokens come from the issue as filed (the `Signals` text: title, body, the author's first
comments): title words, body words (word bigrams optional: they did not rank better on the dev
corpus and cost a third of the time), title character n-grams, dotted code
identifiers (`torch.nn.functional.pad` and its prefixes), exception names and signal flags. The
vocabulary and idf are plain arrays, so a model is saved as JSON + `.npz` and never pickled; one
issue is vectorized with dict lookups, fast enough for thousands of issues a second.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, field

import numpy as np
from scipy import sparse

from issuetriage.evidence.signals import Signals

_WORD = re.compile(r"[a-z_][a-z0-9_]{1,30}")
_IDENT = re.compile(r"\b[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+")
_CAMEL = re.compile(r"\b[A-Z][a-z0-9]+(?:[A-Z][a-z0-9]*)+\b")
_STOP = frozenset(
    "the a an and or of to in on for is it this that with as be are was were by at from i we you "
    "my our your have has had not but if when which can will would should do does did so there "
    "what how its into than then also just any all some".split()
)


@dataclass(frozen=True)
class FeatureConfig:
    """Which token families to use and how large a vocabulary to keep."""

    max_chars: int = 6000
    word_bigrams: bool = False
    title_char_ngrams: tuple[int, int] = (3, 5)
    min_df: int = 2
    max_features: int = 80_000

    def to_json(self) -> dict[str, object]:
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict[str, object]) -> FeatureConfig:
        data = dict(data)
        data["title_char_ngrams"] = tuple(data["title_char_ngrams"])  # type: ignore[arg-type]
        return cls(**data)  # type: ignore[arg-type]


def _title_chars(title: str, low: int, high: int) -> list[str]:
    padded = f" {' '.join(_WORD.findall(title))} "
    return [f"c:{padded[i:i + n]}" for n in range(low, high + 1) for i in range(len(padded) - n + 1)]


def issue_tokens(signals: Signals, config: FeatureConfig) -> list[str]:
    """Every feature token of one issue (with repeats: term frequency matters)."""
    text = signals.text[: config.max_chars]
    title, _, body = text.partition("\n")
    lower_title = title.lower()
    tokens = [f"t:{w}" for w in _WORD.findall(lower_title) if w not in _STOP]
    words = [w for w in _WORD.findall(text.lower()) if w not in _STOP]
    tokens += words
    if config.word_bigrams:
        tokens += [f"{a} {b}" for a, b in zip(words, words[1:])]
    low, high = config.title_char_ngrams
    if high >= low > 0:
        tokens += _title_chars(lower_title, low, high)
    for ident in _IDENT.findall(text):
        parts = ident.lower().split(".")
        tokens += [f"id:{'.'.join(parts[:k])}" for k in range(2, min(len(parts), 5) + 1)]
        tokens.append(f"id:.{parts[-1]}")
    tokens += [f"cc:{w.lower()}" for w in _CAMEL.findall(body)]
    tokens += [f"exc:{name}" for name in signals.exceptions]
    tokens += [f"plat:{p}" for p in signals.platforms] + [f"be:{b}" for b in signals.backends]
    if signals.has_traceback:
        tokens.append("sig:traceback")
    if signals.code_blocks:
        tokens.append("sig:code")
    return tokens


@dataclass(frozen=True)
class Vocabulary:
    """Token → column and the idf of each column: everything TF-IDF needs, as plain data."""

    tokens: tuple[str, ...]
    idf: np.ndarray
    _index: dict[str, int] = field(init=False, repr=False, compare=False)

    @property
    def index(self) -> dict[str, int]:
        return self._index

    def __post_init__(self) -> None:
        object.__setattr__(self, "_index", {tok: i for i, tok in enumerate(self.tokens)})

    def __len__(self) -> int:
        return len(self.tokens)

    def vector(self, tokens: Iterable[str]) -> tuple[np.ndarray, np.ndarray]:
        """One issue as sparse (columns, values): sublinear tf × idf, L2-normalised."""
        ids = [i for i in map(self._index.get, tokens) if i is not None]
        if not ids:
            return np.empty(0, dtype=np.int64), np.empty(0, dtype=np.float32)
        cols, tf = np.unique(np.array(ids, dtype=np.int64), return_counts=True)
        values = (1.0 + np.log(tf.astype(np.float32))) * self.idf[cols]
        values /= np.sqrt(float(values @ values)) or 1.0
        return cols, values.astype(np.float32)

    def matrix(self, docs: Sequence[list[str]]) -> sparse.csr_matrix:
        """Many issues as one CSR matrix, row i = `vector(docs[i])`."""
        indptr = [0]
        cols_all: list[np.ndarray] = []
        vals_all: list[np.ndarray] = []
        for doc in docs:
            cols, vals = self.vector(doc)
            cols_all.append(cols)
            vals_all.append(vals)
            indptr.append(indptr[-1] + len(cols))
        cols_cat = np.concatenate(cols_all) if cols_all else np.empty(0, dtype=np.int64)
        vals_cat = np.concatenate(vals_all) if vals_all else np.empty(0, dtype=np.float32)
        return sparse.csr_matrix((vals_cat, cols_cat, np.asarray(indptr)),
                                 shape=(len(docs), len(self.tokens)), dtype=np.float32)


def fit_vocabulary(docs: Sequence[list[str]], config: FeatureConfig) -> Vocabulary:
    """Keep tokens seen in at least `min_df` issues (the most frequent `max_features`)."""
    df: Counter[str] = Counter()
    for doc in docs:
        df.update(set(doc))
    min_df = config.min_df if len(docs) >= 2 * config.min_df else 1
    kept = [(tok, n) for tok, n in df.items() if n >= min_df]
    kept.sort(key=lambda item: (-item[1], item[0]))
    kept = kept[: config.max_features]
    n_docs = len(docs)
    idf = np.array([math.log((1 + n_docs) / (1 + n)) + 1.0 for _, n in kept], dtype=np.float32)
    return Vocabulary(tuple(tok for tok, _ in kept), idf)
