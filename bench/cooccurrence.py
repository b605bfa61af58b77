"""Generic labels maintainers skip beside specific ones, from history co-occurrence (issue #29).

A pair (specific S, generic G) is suggested when, in a labelled corpus, S is on at least MIN_S
issues, G on at least MIN_G, G is on at most MAX_SHARE of the issues that carry S, and the offline
judge (heuristic + history, 5-fold on the same corpus) adds G beside S at least MIN_ADDED times.
`redundancy.toml` pairs make the guard drop G when S is present. Choose pairs on the tuning half;
measure the held-out half with them once.

Run: PYTHONHASHSEED=0 PYTHONPATH=src python bench/cooccurrence.py tune|whole
"""

from __future__ import annotations

import sys
from collections import Counter
from itertools import permutations
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _corpus import DEV, halves  # noqa: E402
from issuetriage.evaluate.run import EvalOptions, replay_corpus  # noqa: E402
from issuetriage.judges.learned.corpus import load_corpus  # noqa: E402
from issuetriage.policy import load_profile  # noqa: E402

MIN_S, MIN_G, MAX_SHARE, MIN_ADDED = 5, 15, 0.1, 2


def suggest(path: Path) -> list[tuple[str, str, int, int, int, int]]:
    policy = load_profile("pytorch")
    golds = [e.gold for e in load_corpus(path, policy).examples if e.gold]
    count = Counter(label for gold in golds for label in gold)
    together = Counter(pair for gold in golds for pair in permutations(sorted(gold), 2))
    _, results, _ = replay_corpus(path, folds=5, options=EvalOptions(neighbours=5))
    added = Counter((s, g) for r in results if r.labelled
                    for s, g in permutations(sorted(r.plan_labels), 2) if s in r.gold and g not in r.gold)
    known = {(p.specific, p.generic) for p in policy.redundancy.pair}
    out = []
    for (s, g), wrong in added.items():
        if (s, g) in known or not (policy.is_area(s) and policy.is_area(g)):
            continue
        if count[s] >= MIN_S and count[g] >= MIN_G and together[(s, g)] <= MAX_SHARE * count[s] and wrong >= MIN_ADDED:
            out.append((s, g, count[s], count[g], together[(s, g)], wrong))
    return sorted(out)


if __name__ == "__main__":
    parts = halves()
    if parts is None:
        print(f"skip: {DEV} not found")
    else:
        for s, g, ns, ng, both, wrong in suggest(parts[0] if sys.argv[1:] == ["tune"] else DEV):
            print(f"specific {s!r} ({ns}) generic {g!r} ({ng}): together {both}, added beside it wrongly {wrong}")
