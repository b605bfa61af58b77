"""How long does `train` take on 10,000 issues? (budget: < 60 s on one machine)

The dev corpus is repeated with fresh numbers to 10,000 issues; the baseline is training on the
dev corpus itself in the same process. Prints seconds and the ratio.
Run: PYTHONPATH=src nice -n 10 python bench/train_speed.py [SIZE]
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _corpus import DEV, repeated_corpus  # noqa: E402
from issuetriage.judges.heuristic import HeuristicJudge  # noqa: E402
from issuetriage.judges.learned.corpus import load_corpus  # noqa: E402
from issuetriage.judges.learned.train import train  # noqa: E402
from issuetriage.policy import load_profile  # noqa: E402


def timed_train(path: Path) -> tuple[float, int, int]:
    """Seconds to load and train (with the heuristic prior, as `issuetriage train` does)."""
    policy = load_profile("pytorch")
    started = time.perf_counter()
    corpus = load_corpus(path, policy)
    model = train(corpus, policy, prior=HeuristicJudge())
    return time.perf_counter() - started, len(corpus.examples), len(model.labels)


def main() -> None:
    size = int(sys.argv[1]) if len(sys.argv) > 1 else 10_000
    big = repeated_corpus(size)
    if big is None:
        print(f"skip: {DEV} not found")
        return
    try:
        base_s, base_n, _ = timed_train(DEV)
        big_s, big_n, labels = timed_train(big)
    finally:
        big.unlink()
    print(f"baseline: {base_n} issues trained in {base_s:.1f} s")
    print(f"train: {big_n} issues, {labels} labels in {big_s:.1f} s "
          f"({big_s / base_s:.1f}x baseline; budget 60 s: {'ok' if big_s < 60 else 'OVER'})")


if __name__ == "__main__":
    main()
