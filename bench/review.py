"""Blind review for adjudicated precision (docs/evaluation.md), in two steps.

    PYTHONPATH=src python bench/review.py sample --out DIR [--round offline|llm] [--answers DIR]
    PYTHONPATH=src python bench/review.py score --dir DIR

`sample` replays the judges (offline: heuristic, heuristic+history and learned+history, 5-fold;
llm: the LLM and hybrid judges on the 60-issue sample with recorded answers for the shortlist
and catalog prompts, from DIR/{old,new}/answers.jsonl, and DIR/stack/answers.jsonl for the
catalog prompt over the stacked offline judge when present) and writes DIR/sample.jsonl (issue text,
label, the label's description: what the reviewer sees), DIR/key.jsonl and DIR/judges.json
(private: which judge proposed what, and each judge's totals). The reviewer writes
DIR/verdicts.jsonl; `score` prints adjudicated precision per judge.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _corpus import DEV  # noqa: E402
from issuetriage.evaluate.adjudicate import adjudicated, controls, read_verdicts, review_sample, write_review  # noqa: E402
from issuetriage.evaluate.run import EvalOptions, replay_corpus  # noqa: E402
from issuetriage.evaluate.scoring import IssueResult  # noqa: E402
from issuetriage.policy import load_profile  # noqa: E402

SAMPLE, SEED = 60, 0


def runs(round_: str, answers: Path | None) -> dict[str, tuple[str, dict]]:
    """Judge name → (judge, evaluate keyword arguments)."""
    if round_ == "offline":
        return {"heuristic": ("heuristic", {"folds": 5}),
                "heuristic+history": ("heuristic", {"folds": 5, "options": EvalOptions(neighbours=5)}),
                "learned+history": ("learned", {"folds": 5, "options": EvalOptions(neighbours=5)})}
    assert answers is not None
    out = {}
    # stack/: the catalog prompt over the offline judge stacked with history (`--neighbours 5`)
    for style, folder, k in (("shortlist", "old", 0), ("catalog", "new", 0), ("catalog", "stack", 5)):
        if not (answers / folder / "answers.jsonl").is_file():
            continue
        for judge in ("llm", "hybrid"):
            options = EvalOptions(answers=answers / folder / "answers.jsonl", prompt=style,
                                  sample=SAMPLE, neighbours=k)
            out[f"{judge}/{style}{'+history' if k else ''}"] = (judge, {"seed": SEED, "options": options})
    return out


def totals(rows: list[IssueResult]) -> dict[str, int]:
    labelled = [r for r in rows if r.labelled]
    return {"gold_tp": sum(len(r.predicted & r.gold) for r in labelled),
            "extras": sum(len(r.predicted - r.gold) for r in labelled)}


def sample(out: Path, round_: str, answers: Path | None, corpus_path: Path) -> None:
    policy = load_profile("pytorch")
    results, corpus = {}, None
    for name, (judge, kwargs) in runs(round_, answers).items():
        corpus, rows, _ = replay_corpus(corpus_path, judge=judge, **kwargs)
        results[name] = rows
        print(f"{name}: {totals(rows)}", flush=True)
    items, key = review_sample(results, corpus, policy)
    write_review(out, items, key)
    summary = {name: {"results": [[r.number, sorted(r.gold), sorted(r.predicted)] for r in rows
                                  if r.labelled], **totals(rows)} for name, rows in results.items()}
    (out / "judges.json").write_text(json.dumps(summary) + "\n", encoding="utf-8")
    print(f"{len(items)} items ({sum(k['gold'] for k in key)} gold controls) in {out}")


def score(folder: Path) -> None:
    key = [json.loads(x) for x in (folder / "key.jsonl").read_text().splitlines() if x.strip()]
    verdicts = read_verdicts(folder / "verdicts.jsonl")
    judges = json.loads((folder / "judges.json").read_text())
    print(f"verdicts {len(verdicts)} of {len(key)} items; gold controls: {controls(key, verdicts)}")
    for name, data in judges.items():
        rows = [IssueResult(number=n, line=0, gold=frozenset(g), predicted=frozenset(p),
                            confidences=(), decision="label", abstained=False, routed=True,  # type: ignore[arg-type]
                            redirect_gold=False, gold_oncall=frozenset(), predicted_oncall=frozenset(),
                            gold_type=frozenset(), predicted_type=frozenset(), closed_question=False,
                            gold_question=False) for n, g, p in data["results"]]
        print(json.dumps(adjudicated(rows, name, key, verdicts)))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("sample")
    s.add_argument("--out", type=Path, required=True)
    s.add_argument("--round", choices=("offline", "llm"), default="offline")
    s.add_argument("--answers", type=Path, help="folder holding old/ and new/ answers.jsonl")
    s.add_argument("--corpus", type=Path, default=DEV)
    c = sub.add_parser("score")
    c.add_argument("--dir", type=Path, required=True)
    args = ap.parse_args()
    if args.cmd == "sample":
        if not args.corpus.is_file():
            print(f"skipped: {args.corpus} not found")
            return 0
        sample(args.out, args.round, args.answers, args.corpus)
    else:
        score(args.dir)
    return 0


if __name__ == "__main__":
    sys.exit(main())
