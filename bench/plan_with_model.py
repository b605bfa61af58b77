"""Planning throughput with a learned model (budget: >= 1,000 issues/s, one process, one core).

Trains a model on the dev corpus, then plans the dev corpus repeated to N issues through the
full engine (signals → judge → tree → guard) with the learned judge, and with the heuristic
judge alone as the in-process baseline. Prints issues/s and the ratio.
Run: PYTHONPATH=src nice -n 10 python bench/plan_with_model.py [N]
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _corpus import DEV, repeated_corpus  # noqa: E402
from issuetriage.engine.pipeline import triage  # noqa: E402
from issuetriage.evidence.signals import extract_signals  # noqa: E402
from issuetriage.judges.base import Judge  # noqa: E402
from issuetriage.judges.heuristic import HeuristicJudge  # noqa: E402
from issuetriage.judges.learned.corpus import load_corpus  # noqa: E402
from issuetriage.judges.learned.judge import LearnedJudge  # noqa: E402
from issuetriage.judges.learned.train import train  # noqa: E402
from issuetriage.models import Issue  # noqa: E402
from issuetriage.policy import Policy, load_profile  # noqa: E402


def throughput(issues: list[Issue], policy: Policy, judge: Judge) -> float:
    started = time.perf_counter()
    for issue in issues:
        triage(issue, policy, judge)
    return len(issues) / (time.perf_counter() - started)


def model_cost_ms(issues: list[Issue], model: object) -> float:
    """Milliseconds per issue for the model's own work (features, scores, calibration)."""
    signals = [extract_signals(issue) for issue in issues]
    started = time.perf_counter()
    for sig in signals:
        model.probabilities(sig, {})  # type: ignore[attr-defined]
    return (time.perf_counter() - started) / len(signals) * 1000


def main() -> None:
    size = int(sys.argv[1]) if len(sys.argv) > 1 else 5_000
    big = repeated_corpus(size)
    if big is None:
        print(f"skip: {DEV} not found")
        return
    policy = load_profile("pytorch")
    try:
        issues = [e.issue for e in load_corpus(big, policy).examples]
    finally:
        big.unlink()
    model = train(load_corpus(DEV, policy), policy, prior=HeuristicJudge())
    learned = LearnedJudge(model, HeuristicJudge())
    throughput(issues[:200], policy, learned)  # warm caches (matchers, numpy)
    base = throughput(issues, policy, HeuristicJudge())
    rate = throughput(issues, policy, learned)
    print(f"baseline (heuristic judge): {base:,.0f} issues/s")
    print(f"learned judge: {rate:,.0f} issues/s on {len(issues)} issues "
          f"({rate / base:.2f}x baseline; budget 1,000/s: {'ok' if rate >= 1000 else 'UNDER'})")
    print(f"model alone: {model_cost_ms(issues, model):.3f} ms/issue "
          f"(engine with heuristic: {1000 / base:.3f} ms/issue)")


if __name__ == "__main__":
    main()
