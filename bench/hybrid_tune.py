"""The hybrid's threshold chosen on the tuning half, not on the 60-issue sample (issue #29).

`bench/recorded/learn/answers.jsonl` holds model answers for the 466 labelled tuning-half issues
outside the 60-issue sample, recorded in five sets (the chunks of `learn/order.txt`: 100, 100, 100,
83, 83), each set's requests built with the other issues of the tuning half (minus the sample) as
history and as the offline stack's training side. Replaying each set with exactly that training
side rebuilds those requests (every answer carries its request's digest: a request that differs
is an outage, counted below), so the hybrid's two halves are each replayed once per issue, with
nothing of the issue's own set behind its offline judgment or its request. For every threshold
the hybrid's own rule (`HybridJudge.decides_offline`, with that set's calibrated stack) picks per
issue whose plan counts, as `bench/hybrid_curve.py` does on the sample.

Run: PYTHONHASHSEED=0 PYTHONPATH=src python bench/hybrid_tune.py bench/recorded/learn/answers.jsonl
     bench/recorded/learn/order.txt [--tolerance 0.01]
Prints the curve pooled over the five sets, the LLM path and the offline judge on the same issues,
and the threshold that keeps F1 within `--tolerance` of the LLM path at the smallest share sent.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _corpus import DEV, halves  # noqa: E402
from issuetriage.evaluate.replay import replay  # noqa: E402
from issuetriage.evaluate.requests import chosen_split, sample_split  # noqa: E402
from issuetriage.evaluate.run import EvalOptions, judge_factory  # noqa: E402
from issuetriage.evaluate.scoring import IssueResult, set_prf  # noqa: E402
from issuetriage.evidence.signals import extract_signals  # noqa: E402
from issuetriage.judges.learned.corpus import load_corpus  # noqa: E402
from issuetriage.judges.learned.train import TrainConfig  # noqa: E402
from issuetriage.policy import load_profile  # noqa: E402

THRESHOLDS = tuple(round(0.01 * i, 2) for i in range(101))  # printed every 0.05, chosen from all
SETS = (100, 100, 100, 83, 83)  # how the answers were recorded (bench/recorded/README.md)


def prf(results: list[IssueResult]) -> dict:
    return set_prf((r.gold, r.predicted) for r in results if r.labelled).to_json()


def tuning_without_sample(out: Path) -> Path | None:
    """The tuning half minus the 60-issue sample (seed 0), in the half's order."""
    parts = halves()
    if parts is None:
        return None
    policy = load_profile("pytorch")
    dev = load_corpus(DEV, policy)
    sample = {dev.examples[i].issue.number for i in sample_split(dev, 60, 0)[0]}
    lines = [line for line in parts[0].read_text(encoding="utf-8").splitlines()
             if line.strip() and json.loads(line)["number"] not in sample]
    for part in parts:
        part.unlink()
    out.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("answers", type=Path)
    parser.add_argument("order", type=Path)
    parser.add_argument("--tolerance", type=float, default=0.01)
    args = parser.parse_args()
    policy = load_profile("pytorch")
    order = [int(x) for x in args.order.read_text(encoding="utf-8").split()]
    if sum(SETS) != len(order):
        raise SystemExit(f"{args.order}: {len(order)} issues, expected {sum(SETS)}")
    with tempfile.TemporaryDirectory() as tmp:
        path = tuning_without_sample(Path(tmp) / "tune.jsonl")
        if path is None:
            print(f"skip: {DEV} not found")
            return
        corpus = load_corpus(path, policy)
    offline: dict[int, IssueResult] = {}
    llm: dict[int, IssueResult] = {}
    keep: dict[float, set[int]] = {t: set() for t in THRESHOLDS}
    replayed = start = 0
    options = EvalOptions(neighbours=5, answers=args.answers, prompt="catalog")
    make = judge_factory("hybrid", policy, None, "pytorch", TrainConfig(), options, learns=False)
    for size in SETS:
        numbers, start = order[start:start + size], start + size
        held, rest = chosen_split(corpus, numbers)
        hybrid = make(corpus.subset(rest))
        examples = [corpus.examples[i] for i in held]
        offline.update((r.number, r) for r in replay(examples, policy, hybrid.offline))  # type: ignore[attr-defined]
        got = replay(examples, policy, hybrid.llm)  # type: ignore[attr-defined]
        llm.update((r.number, r) for r in got)
        replayed += sum(r.judge.startswith("llm:replay") for r in got)
        for e in examples:
            judged = hybrid.offline.judge(e.issue, extract_signals(e.issue), policy)  # type: ignore[attr-defined]
            for t in THRESHOLDS:
                hybrid.threshold = t  # type: ignore[attr-defined]
                if hybrid.decides_offline(judged, policy):  # type: ignore[attr-defined]
                    keep[t].add(e.issue.number)
        print(f"set of {size}: {sum(r.judge.startswith('llm:replay') for r in got)} replayed", flush=True)
    n = len(offline)
    base = prf(list(llm.values()))
    print(f"tuning half, {n} issues: offline {prf(list(offline.values()))}")
    print(f"                         llm     {base} ({replayed} of {n} replayed)")
    print("threshold  sent  share    P      R      F1")
    chosen = None
    for t in THRESHOLDS:
        m = prf([offline[k] if k in keep[t] else llm[k] for k in offline])
        sent = n - len(keep[t])
        line = f"{t:9.2f} {sent:5d} {sent / n:6.3f} {m['precision']:.3f}  {m['recall']:.3f}  {m['f1']:.3f}"
        if round(t * 100) % 5 == 0:
            print(line)
        if m["f1"] >= base["f1"] - args.tolerance and (chosen is None or sent / n < chosen[1]):
            chosen = (t, sent / n, line)
    if chosen:
        print(f"chosen (F1 within {args.tolerance} of the LLM path's {base['f1']:.3f} at the smallest share "
              f"sent):\n{chosen[2]}")


if __name__ == "__main__":
    main()
