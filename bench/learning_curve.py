"""The offline judge learning from a model's recorded answers: a learning curve (issue #29).

The offline judge (heuristic + history stack, `--neighbours 5`) with the first 0 / 100 / 300 / all
recorded answers of ORDER as extra evidence (`judges/taught.py`), scored three ways:
- `tune`: 5-fold on the tuning half (answers of the training folds only);
- `untouched`: fitted on the tuning half, scored on the untouched held-out half (the answers are
  all of tuning-half issues, so nothing about a scored issue is ever taught);
- `whole`: 5-fold on the whole dev file (answers of the training folds only).
Halves: `bench/_corpus.py` `halves()` (random.Random(0) shuffle; first half tunes).

Run: PYTHONHASHSEED=0 PYTHONPATH=src python bench/learning_curve.py ANSWERS.jsonl ORDER.txt
     [--counts 0,100,300] [--parts tune,untouched,whole] [--adj OUT.jsonl]
`--adj OUT.jsonl` writes the label sets of the 60-issue sample (seed 0) for the largest count.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _corpus import DEV, halves, write_label_sets  # noqa: E402
from issuetriage.evaluate.replay import replay  # noqa: E402
from issuetriage.evaluate.report import build_report  # noqa: E402
from issuetriage.evaluate.run import EvalOptions, evaluate, judge_factory, replay_corpus  # noqa: E402
from issuetriage.judges.learned.corpus import load_corpus  # noqa: E402
from issuetriage.judges.learned.train import TrainConfig  # noqa: E402
from issuetriage.policy import load_profile  # noqa: E402

K = 5


def first_answers(answers: Path, order: list[int], count: int | None, out_dir: Path) -> Path | None:
    """A copy of the recordings holding only the first `count` issues of `order` (None: 0)."""
    if count == 0:
        return None
    wanted = set(order if count is None else order[:count])
    lines = [line for line in answers.read_text(encoding="utf-8").splitlines()
             if line.strip() and json.loads(line)["number"] in wanted]
    path = out_dir / f"answers-{len(lines)}.jsonl"
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return path


def row(report: dict) -> str:
    m = report["labels"]["micro"]
    return (f"P {m['precision']:.3f} R {m['recall']:.3f} F1 {m['f1']:.3f} "
            f"(tp {m['tp']} fp {m['fp']} fn {m['fn']}) oncall {report['routing']['accuracy']:.3f}")


def untouched(tune: Path, held: Path, learn: Path | None) -> dict:
    """Fitted on the tuning half, scored on the held-out half."""
    policy = load_profile("pytorch")
    with tempfile.TemporaryDirectory() as tmp:
        both = Path(tmp) / "both.jsonl"
        both.write_text(tune.read_text(encoding="utf-8") + held.read_text(encoding="utf-8"), encoding="utf-8")
        corpus = load_corpus(both, policy)
    tune_numbers = {json.loads(line)["number"] for line in tune.read_text(encoding="utf-8").splitlines() if line}
    train = [i for i, e in enumerate(corpus.examples) if e.issue.number in tune_numbers]
    scored = [e for e in corpus.examples if e.issue.number not in tune_numbers]
    make = judge_factory("heuristic", policy, None, "pytorch", TrainConfig(),
                         EvalOptions(neighbours=K, learn_answers=learn), learns=False)
    return build_report(replay(scored, policy, make(corpus.subset(train))), "heuristic", str(held), 1)


def sample_labels(learn: Path | None, out: Path) -> None:
    """The plans' labels on the 60-issue sample (seed 0), one JSON line per issue."""
    _, results, _ = replay_corpus(DEV, judge="heuristic", seed=0,
                                  options=EvalOptions(neighbours=K, sample=60, learn_answers=learn))
    write_label_sets(out, results)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("answers", type=Path)
    parser.add_argument("order", type=Path)
    parser.add_argument("--counts", default="0,100,300")
    parser.add_argument("--parts", default="tune,untouched,whole")
    parser.add_argument("--adj", type=Path)
    args = parser.parse_args()
    parts = halves()
    if parts is None:
        print(f"skip: {DEV} not found")
        return
    order = [int(x) for x in args.order.read_text(encoding="utf-8").split()]
    counts = [None if c == "all" else int(c) for c in args.counts.split(",")]
    with tempfile.TemporaryDirectory() as tmp:
        for count in counts:
            learn = first_answers(args.answers, order, count, Path(tmp))
            taught = 0 if learn is None else sum(1 for _ in learn.open())
            for part in [p for p in args.parts.split(",") if p]:
                if part == "untouched":
                    report = untouched(parts[0], parts[1], learn)
                else:
                    path = parts[0] if part == "tune" else DEV
                    report = evaluate(path, folds=5, options=EvalOptions(neighbours=K, learn_answers=learn))
                print(f"answers {taught:4d} {part:9s} {row(report)}", flush=True)
            if args.adj and count == counts[-1]:
                sample_labels(learn, args.adj)


if __name__ == "__main__":
    main()
