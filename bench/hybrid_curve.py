"""The hybrid judge's cost knob: share of issues sent to the model against label F1 (issue #29).

On the 60-issue sample (seed 0; history and training: the other issues), the offline judge
(heuristic + history stack, optionally taught recorded answers of other issues) and the LLM path
(recorded answers, replayed) are each replayed once; for every threshold the hybrid's own rule
(`HybridJudge.decides_offline`: kind confidence and the offline answer's expected label F1 from
the stack's calibrated probabilities) picks, per issue, whose plan counts. One threshold is also
replayed through the real hybrid judge as a check that the simulation is the product.

Run: PYTHONHASHSEED=0 PYTHONPATH=src python bench/hybrid_curve.py ANSWERS.jsonl [--learn LEARN.jsonl]
     [--adj DIR --adj-thresholds 0.6,0.7,0.8]
`--adj DIR` writes DIR/hybrid-T.jsonl ({"number", "labels"} per issue), DIR/llm.jsonl and
DIR/offline.jsonl for the blind adjudication, and prints each threshold's share sent.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _corpus import DEV, write_label_sets  # noqa: E402
from issuetriage.evaluate.replay import replay  # noqa: E402
from issuetriage.evaluate.requests import sample_split  # noqa: E402
from issuetriage.evaluate.run import EvalOptions, judge_factory  # noqa: E402
from issuetriage.evaluate.scoring import IssueResult, set_prf  # noqa: E402
from issuetriage.evidence.signals import extract_signals  # noqa: E402
from issuetriage.judges.learned.corpus import load_corpus  # noqa: E402
from issuetriage.judges.learned.train import TrainConfig  # noqa: E402
from issuetriage.policy import load_profile  # noqa: E402

THRESHOLDS = tuple(round(0.05 * i, 2) for i in range(21))


def f1(results: list[IssueResult]) -> dict:
    return set_prf((r.gold, r.predicted) for r in results if r.labelled).to_json()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("answers", type=Path)
    parser.add_argument("--learn", type=Path)
    parser.add_argument("--adj", type=Path)
    parser.add_argument("--adj-thresholds", default="0.6,0.7,0.8")
    parser.add_argument("--check", type=float, default=0.75)
    args = parser.parse_args()
    if not DEV.exists():
        print(f"skip: {DEV} not found")
        return
    policy = load_profile("pytorch")
    corpus = load_corpus(DEV, policy)
    held, rest = sample_split(corpus, 60, 0)
    options = EvalOptions(neighbours=5, answers=args.answers, prompt="catalog", sample=60)
    hybrid = judge_factory("hybrid", policy, None, "pytorch", TrainConfig(), options, learns=False)(
        corpus.subset(rest))
    if args.learn:  # the offline half taught the answers of other issues; the model is asked the
        # requests its answers were recorded for (built over the untaught stack)
        hybrid.offline = judge_factory("heuristic", policy, None, "pytorch", TrainConfig(),  # type: ignore[attr-defined]
                                       EvalOptions(neighbours=5, learn_answers=args.learn), learns=False)(
            corpus.subset(rest))
    examples = [corpus.examples[i] for i in held]
    offline = {r.number: r for r in replay(examples, policy, hybrid.offline)}  # type: ignore[attr-defined]
    llm = {r.number: r for r in replay(examples, policy, hybrid.llm)}  # type: ignore[attr-defined]
    replayed = sum(r.judge.startswith("llm:replay") for r in llm.values())
    judged = {e.issue.number: hybrid.offline.judge(e.issue, extract_signals(e.issue), policy)  # type: ignore[attr-defined]
              for e in examples}
    print(f"60-issue sample: offline {f1(list(offline.values()))}")
    print(f"                 llm     {f1(list(llm.values()))} ({replayed} of 60 replayed)")
    print("threshold  sent  share    P      R      F1")
    picked: dict[float, list[IssueResult]] = {}
    for t in sorted({*THRESHOLDS, args.check}):  # the checked threshold has its row too
        hybrid.threshold = t  # type: ignore[attr-defined]
        keep = {n for n, j in judged.items() if hybrid.decides_offline(j, policy)}  # type: ignore[attr-defined]
        picked[t] = [offline[n] if n in keep else llm[n] for n in offline]
        m = f1(picked[t])
        print(f"{t:9.2f} {60 - len(keep):5d} {(60 - len(keep)) / 60:6.3f} {m['precision']:.3f}  "
              f"{m['recall']:.3f}  {m['f1']:.3f}", flush=True)
    if not args.learn:  # with taught evidence the real hybrid would ask requests never recorded
        hybrid.threshold = args.check  # type: ignore[attr-defined]
        real = f1(replay(examples, policy, hybrid))
        print(f"check: the real hybrid judge at {args.check}: {real} (simulated {f1(picked[args.check])})")
    if args.adj:
        args.adj.mkdir(parents=True, exist_ok=True)
        tag = "-taught" if args.learn else ""
        write_label_sets(args.adj / "llm.jsonl", list(llm.values()))
        for t in (float(x) for x in args.adj_thresholds.split(",")):
            write_label_sets(args.adj / f"hybrid{tag}-{t:.2f}.jsonl", picked[t])
            sent = sum(1 for r in picked[t] if r is llm[r.number] and r is not offline[r.number])
            print(f"adj: hybrid{tag}-{t:.2f}.jsonl sends {sent} of 60 to the model")


if __name__ == "__main__":
    main()
