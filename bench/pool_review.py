"""Blind review of pooled labels: every label any system gave an issue, judged once, sources hidden.

    PYTHONPATH=src python bench/pool_review.py sample --out DIR --system NAME=FILE.jsonl ... [--corpus DEV]
    PYTHONPATH=src python bench/pool_review.py score --dir DIR

Each FILE holds one line per issue, `{"number": N, "labels": [...]}`; the maintainers' final labels
(the corpus's gold, as the profile's catalog reads it) join as the system `maintainers`, the
control. `sample` pools every (issue, label) pair any system gave, shuffles them and writes
DIR/review-K.jsonl (for reviewers: per issue, its text without the label bot's `cc @...` line,
and the pooled labels with their catalog descriptions; no source), DIR/key.json (private: which systems gave each pair). Reviewers write
DIR/verdicts-K.jsonl, `{"id": N, "verdict": "clearly_right" | "defensible" | "wrong"}` per label.
`score` prints, per system: labels, share judged clearly right, share at least defensible, and
the share of all pooled clearly-right labels it found (its recall against the pool).
"""

from __future__ import annotations

import argparse
import json
import random
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _corpus import DEV  # noqa: E402
from issuetriage.evaluate.adjudicate import describe  # noqa: E402
from issuetriage.judges.learned.corpus import load_corpus  # noqa: E402
from issuetriage.policy import load_profile  # noqa: E402

VERDICTS = ("clearly_right", "defensible", "wrong")
ISSUE_CHARS = 4000
CONTROL = "maintainers"
# the cc line a label bot appends once a module label is set: it names who the maintainers routed to
CC_LINE = re.compile(r"(?m)^[ \t]*cc @.*$")


def read_system(path: Path) -> dict[int, set[str]]:
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    return {int(r["number"]): set(r["labels"]) for r in rows}


def sample(out: Path, systems: dict[str, Path], corpus_path: Path, parts: int, seed: int) -> None:
    policy = load_profile("pytorch")
    corpus = load_corpus(corpus_path, policy)
    by_number = {e.issue.number: e for e in corpus.examples}
    labels = {name: read_system(path) for name, path in systems.items()}
    numbers = sorted(set.intersection(*(set(v) for v in labels.values())))
    missing = {name: len(set(v) - set(numbers)) for name, v in labels.items() if set(v) - set(numbers)}
    if missing:
        print(f"issues not in every system, left out: {missing}")
    labels[CONTROL] = {n: set(by_number[n].gold) for n in numbers}
    pool: dict[tuple[int, str], list[str]] = {}
    for name, sets in sorted(labels.items()):
        for n in numbers:
            for label in sorted(sets.get(n, ())):
                pool.setdefault((n, label), []).append(name)
    rng = random.Random(seed)
    order = list(numbers)
    rng.shuffle(order)
    ids = list(range(1, len(pool) + 1))
    rng.shuffle(ids)
    key, given = [], iter(ids)
    reviews: list[list[dict]] = [[] for _ in range(parts)]
    for k, n in enumerate(order):
        issue = by_number[n].issue
        pairs = sorted(label for (m, label) in pool if m == n)
        rng.shuffle(pairs)
        items = []
        for label in pairs:
            i = next(given)
            items.append({"id": i, "label": label, "description": describe(policy, label)})
            key.append({"id": i, "number": n, "label": label, "systems": pool[(n, label)]})
        body = CC_LINE.sub("", issue.body)[:ISSUE_CHARS]
        reviews[k % parts].append({"issue": f"Title: {issue.title.strip()}\n\n{body}",
                                   "labels": items})
    out.mkdir(parents=True, exist_ok=True)
    for k, rows in enumerate(reviews):
        (out / f"review-{k}.jsonl").write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows),
                                               encoding="utf-8")
    meta = {"systems": sorted(labels), "issues": numbers, "key": key,
            "labels": {name: sum(len(sets.get(n, ())) for n in numbers) for name, sets in labels.items()}}
    (out / "key.json").write_text(json.dumps(meta) + "\n", encoding="utf-8")
    print(f"{len(numbers)} issues, {len(key)} pooled labels in {parts} parts; labels per system: {meta['labels']}")


def read_verdicts(folder: Path) -> dict[int, str]:
    verdicts: dict[int, str] = {}
    for path in sorted(folder.glob("verdicts-*.jsonl")):
        for lineno, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if not line.strip():
                continue
            row = json.loads(line)
            if row.get("verdict") not in VERDICTS:
                raise SystemExit(f"{path}:{lineno}: verdict {row.get('verdict')!r} is not one of {VERDICTS}")
            verdicts[int(row["id"])] = row["verdict"]
    return verdicts


def score(folder: Path) -> list[dict]:
    meta = json.loads((folder / "key.json").read_text(encoding="utf-8"))
    verdicts = read_verdicts(folder)
    key = [k for k in meta["key"] if k["id"] in verdicts]
    print(f"verdicts for {len(key)} of {len(meta['key'])} pooled labels")
    pooled_clear = sum(verdicts[k["id"]] == "clearly_right" for k in key)
    rows = []
    for name in meta["systems"]:
        mine = [verdicts[k["id"]] for k in key if name in k["systems"]]
        clear = mine.count("clearly_right")
        fair = clear + mine.count("defensible")
        rows.append({"system": name, "labels": len(mine),
                     "clearly_right": round(clear / len(mine), 3) if mine else None,
                     "defensible_or_better": round(fair / len(mine), 3) if mine else None,
                     "share_of_pooled_clearly_right": round(clear / pooled_clear, 3) if pooled_clear else None})
    for row in rows:
        print(json.dumps(row))
    return rows


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("sample")
    s.add_argument("--out", type=Path, required=True)
    s.add_argument("--system", action="append", required=True, help="NAME=FILE.jsonl")
    s.add_argument("--corpus", type=Path, default=DEV)
    s.add_argument("--parts", type=int, default=3, help="how many reviewers")
    s.add_argument("--seed", type=int, default=0)
    c = sub.add_parser("score")
    c.add_argument("--dir", type=Path, required=True)
    args = ap.parse_args()
    if args.cmd == "score":
        score(args.dir)
        return 0
    if not args.corpus.is_file():
        print(f"skipped: {args.corpus} not found")
        return 0
    systems = dict(s.split("=", 1) for s in args.system)
    if CONTROL in systems:
        raise SystemExit(f"{CONTROL!r} is the control (the corpus's gold); name the systems otherwise")
    sample(args.out, {k: Path(v) for k, v in systems.items()}, args.corpus, args.parts, args.seed)
    return 0


if __name__ == "__main__":
    sys.exit(main())
