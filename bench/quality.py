"""How good are the plans? The issue's quality figures, heuristic (baseline) vs learned, one run.

Replays a labelled corpus through the full engine with `issuetriage.evaluate.evaluate`: the
heuristic judge (the baseline; its keywords were tuned on the dev corpus, so it is in-sample
there) and the learned judge with K-fold cross-validation (each fold trains on the others). Prints
label precision/recall/micro-F1, oncall routing accuracy, abstain rate and question-close
precision for both, the learned judge's ratios to the baseline, and the issue's targets.
Run: PYTHONHASHSEED=0 PYTHONPATH=src nice -n 10 python bench/quality.py [CORPUS] [FOLDS]

`quality.py halves tune|held|whole` scores the offline judges, 5-fold, on one half of the dev
corpus (docs/evaluation.md: tune on `tune` only; measure `held` once, at the end).
`quality.py raw CORPUS ANSWERS.jsonl [GATE]` scores recorded LLM answers as they are;
`quality.py gap CORPUS ANSWERS.jsonl` compares them with the product path on the same issues.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _corpus import DEV, halves  # noqa: E402
from issuetriage.evaluate.run import EvalOptions, evaluate  # noqa: E402

# The issue's targets; its oncall accuracy is over routed issues (docs/evaluation.md).
TARGETS = {"precision": 0.85, "f1": 0.70, "oncall (routed)": 0.92, "question_close": 0.97}


def figures(report: dict) -> dict[str, float | None]:
    """The figures the issue asks for, from one evaluation report."""
    micro = report["labels"]["micro"]
    return {"precision": micro["precision"], "recall": micro["recall"], "f1": micro["f1"],
            "oncall (routed)": report["routing"]["accuracy"],
            "oncall (all)": report["routing"]["accuracy_all_labelled"],
            "abstain": report["abstain"]["rate"],
            "question_close": report["question_close"]["precision"]}


def main() -> None:
    path = Path(sys.argv[1]) if len(sys.argv) > 1 else DEV
    folds = int(sys.argv[2]) if len(sys.argv) > 2 else 5
    if not path.exists():
        print(f"skip: {path} not found")
        return
    base = figures(evaluate(path, judge="heuristic"))
    learned = figures(evaluate(path, judge="learned", folds=folds))
    print(f"corpus {path.name}, learned judge with {folds}-fold cross-validation")
    print(f"{'figure':16s} {'heuristic':>10s} {'learned':>10s} {'ratio':>7s} {'target':>8s}")
    for key in ("precision", "recall", "f1", "oncall (routed)", "oncall (all)", "abstain",
                "question_close"):
        b, v = base[key], learned[key]
        ratio = f"{v / b:.2f}x" if b and v is not None else "n/a"
        target = f">= {TARGETS[key]:.2f}" if key in TARGETS else ""
        show = [f"{x:.3f}" if x is not None else "n/a" for x in (b, v)]
        print(f"{key:16s} {show[0]:>10s} {show[1]:>10s} {ratio:>7s} {target:>8s}")


if __name__ == "__main__" and (len(sys.argv) < 2 or sys.argv[1] not in ("raw", "halves", "gap")):
    main()


def named_by_answers(corpus_path: Path, answers: Path, gate: float = 0.5
                     ) -> dict[int, tuple[frozenset[str], frozenset[str]]]:
    """Issue → (gold, labels the recorded answer named with confidence >= `gate`), content
    labels only; the redirect rule of docs/evaluation.md applies (only oncall labels on
    redirect issues)."""
    import json

    from issuetriage.judges.learned.corpus import content_labels, load_corpus
    from issuetriage.policy import load_profile

    policy = load_profile("pytorch")
    allowed = content_labels(policy)
    gold = {e.issue.number: e.gold for e in load_corpus(corpus_path, policy).examples}
    out = {}
    for line in answers.read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        named = frozenset(c["name"] for c in row["answer"]["labels"]
                          if c["confidence"] >= gate and c["name"] in allowed)
        truth = gold[row["number"]]
        if truth & policy.redirect_labels:
            truth = frozenset(x for x in truth if x.startswith("oncall:"))
            named = frozenset(x for x in named if x.startswith("oncall:"))
        out[row["number"]] = (truth, named)
    return out


def raw_answers(corpus_path: Path, answers: Path, gate: float = 0.5) -> dict[str, float]:
    """Recorded answers scored as they are, without tree or guard, on the issues answered."""
    from issuetriage.evaluate.scoring import set_prf

    return set_prf(named_by_answers(corpus_path, answers, gate).values()).to_json()


# Decisions where the skill says stop: no labels beyond the queue (redirect) or none at all
# (request_info). A reproduction request is routed on (docs/engine.md), so it is not one.
STOPS = ("redirect_oncall", "request_info")


def product_gap(corpus_path: Path, answers: Path, prompt: str = "catalog", neighbours: int = 0) -> None:
    """The LLM path against the same answers raw (60-issue sample, seed 0): the right labels the
    answers name that the product drops, by decision, and the F1 the product would have if its
    stop steps kept the model's labels."""
    from issuetriage.evaluate.run import replay_corpus
    from issuetriage.evaluate.scoring import set_prf

    named = named_by_answers(corpus_path, answers)
    _, results, _ = replay_corpus(corpus_path, judge="llm", seed=0,
                                  options=EvalOptions(answers=answers, prompt=prompt, sample=60,
                                                      neighbours=neighbours))
    scored = [r for r in results if r.labelled]
    print("product", set_prf((r.gold, r.predicted) for r in scored).to_json())
    print("raw    ", set_prf(named[r.number] for r in scored).to_json())
    for r in scored:
        for label in sorted((named[r.number][1] & r.gold) - r.predicted):
            print(f"  dropped #{r.number} {label!r} ({r.decision.value})")
    for r in scored:
        for label in sorted(r.predicted - named[r.number][1]):
            source = "judge" if label in r.judge_proposed else "tree"
            print(f"  added #{r.number} {label!r} ({r.decision.value}, {source}, "
                  f"{'right' if label in r.gold else 'wrong'})")
    kept = [(r.gold, r.predicted | named[r.number][1] if r.decision.value in STOPS else r.predicted)
            for r in scored]
    print("stop steps keeping the model's labels", set_prf(kept).to_json())


if __name__ == "__main__" and len(sys.argv) > 3 and sys.argv[1] == "raw":
    # PYTHONPATH=src python bench/quality.py raw CORPUS ANSWERS.jsonl [GATE]
    print(raw_answers(Path(sys.argv[2]), Path(sys.argv[3]),
                      float(sys.argv[4]) if len(sys.argv) > 4 else 0.5))


# The offline judges as docs/evaluation.md measures them (judge, eval keyword arguments).
OFFLINE = {"heuristic": ("heuristic", {}),
           "heuristic+history": ("heuristic", {"folds": 5, "neighbours": 5}),
           "learned": ("learned", {"folds": 5}),
           "learned+history": ("learned", {"folds": 5, "neighbours": 5})}


def score_half(which: str, only: str | None = None) -> None:
    """Label P/R/F1 and routing of each offline judge (or `only` one) on one half of the dev corpus."""
    parts = halves()
    if parts is None:
        print(f"skip: {DEV} not found")
        return
    path = {"tune": parts[0], "held": parts[1], "whole": DEV}[which]
    for name, (judge, kwargs) in OFFLINE.items():
        if only and name != only:
            continue
        options = EvalOptions(neighbours=kwargs.get("neighbours", 0))
        got = figures(evaluate(path, judge=judge, folds=kwargs.get("folds", 1), options=options))
        print(f"{which:5s} {name:18s} " + " ".join(
            f"{key} {got[key]:.3f}" for key in ("precision", "recall", "f1", "oncall (routed)")), flush=True)


if __name__ == "__main__" and len(sys.argv) > 2 and sys.argv[1] == "halves":
    # PYTHONHASHSEED=0 PYTHONPATH=src python bench/quality.py halves tune|held|whole [JUDGE]
    score_half(sys.argv[2], sys.argv[3] if len(sys.argv) > 3 else None)


if __name__ == "__main__" and len(sys.argv) > 3 and sys.argv[1] == "gap":
    # PYTHONHASHSEED=0 PYTHONPATH=src python bench/quality.py gap CORPUS ANSWERS.jsonl [NEIGHBOURS]
    product_gap(Path(sys.argv[2]), Path(sys.argv[3]), neighbours=int(sys.argv[4]) if len(sys.argv) > 4 else 0)
