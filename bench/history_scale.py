"""Benchmark: the repository's history at PyTorch scale (issue #24), beside no history, one run.

For each history size (1,422 = the dev corpus itself; larger sizes derived from it by this bench:
every copy gets unique issue numbers and its own perturbed text) it measures, as separate
processes the way a user runs them:

- build: `issuetriage history build --corpus FILE --out DIR` (wall time, peak RSS) and the
  folder's size on disk;
- load + first plan: `issuetriage plan --issue ONE` with `ISSUETRIAGE_HISTORY=DIR`, beside the
  same command without history, interleaved A B A B, median of `--runs`;
- per further issue: (`plan` of `--issues` issues - `plan` of one) / (issues - 1), same pairing;
- peak memory (RSS) of the many-issue `plan`, with and without history;
- the share of each planned issue's exact 20 nearest earlier issues (a cosine over every stored
  vector) the budgeted engine query finds.

The planned issues are dev issues renumbered past every history issue (new issues), labels
removed. `--jsonl` measures today's path instead (`ISSUETRIAGE_HISTORY=FILE.jsonl`, fitted at
start; no build step).

    PYTHONPATH=src python bench/history_scale.py [--sizes 1422,10000,100000] [--runs 3]
        [--issues 301] [--jsonl] [--keep DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _corpus import DEV  # noqa: E402

NEW_ISSUES_FROM = 10**9  # planned issues are numbered past every history issue
WORD_DROP = 0.1  # share of body words a derived copy drops


def perturbed(record: dict, copy: int, rng: random.Random) -> dict:
    """A derived copy of one dev issue: a unique number, a tenth of the body's words dropped, two
    made-up identifiers added, the title's words lightly reordered; labels and repo kept."""
    out = dict(record)
    out["number"] = int(record["number"]) + 1_000_000 * copy
    words = record["body"].split(" ")
    kept = [w for w in words if rng.random() >= WORD_DROP]
    kept += [f"ref_{copy}_{rng.randrange(10**6):06d}", f"0x{rng.getrandbits(32):08x}"]
    out["body"] = " ".join(kept)
    title = record["title"].split()
    if len(title) > 3:
        i = rng.randrange(len(title) - 1)
        title[i], title[i + 1] = title[i + 1], title[i]
    out["title"] = " ".join(title)
    out["url"] = f"https://github.com/{record['repo']}/issues/{out['number']}"
    return out


def derive(size: int, out: Path) -> Path:
    """`size` issues: the dev corpus, then perturbed copies of it (seeded), as JSONL."""
    records = [json.loads(line) for line in DEV.read_text(encoding="utf-8").splitlines() if line.strip()]
    rng = random.Random(size)
    with out.open("w", encoding="utf-8") as fh:
        for i in range(size):
            copy, base = divmod(i, len(records))
            row = records[base] if copy == 0 else perturbed(records[base], copy, rng)
            fh.write(json.dumps(row) + "\n")
    return out


def new_issues(count: int, out: Path) -> Path:
    """`count` dev issues as new, unlabelled issues numbered past the history."""
    records = [json.loads(line) for line in DEV.read_text(encoding="utf-8").splitlines() if line.strip()]
    picked = random.Random(7).sample(records, count)
    with out.open("w", encoding="utf-8") as fh:
        for i, row in enumerate(picked):
            fh.write(json.dumps({**row, "number": NEW_ISSUES_FROM + i, "labels": [], "state": "open"}) + "\n")
    return out


def run(argv: list[str], env: dict[str, str]) -> tuple[float, float]:
    """Wall seconds and peak RSS (MiB) of one process; its failure ends the bench."""
    start = time.perf_counter()
    proc = subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    took = time.perf_counter() - start
    err = proc.stderr.read().decode() if proc.stderr else ""
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(argv)}: exit {proc.returncode}: {err.strip()[:400]}")
    return took, usage.ru_maxrss / 1024


def folder_mib(path: Path) -> float:
    files = [path] if path.is_file() else [p for p in path.rglob("*") if p.is_file()]
    return sum(p.stat().st_size for p in files) / 2**20


def plan_pair(history: str, one: Path, many: Path, n_many: int, runs: int) -> dict[str, dict[str, float]]:
    """Load + first plan, per further issue and peak RSS, with and without history, interleaved."""
    cli = [sys.executable, "-m", "issuetriage.cli"]
    base = {k: v for k, v in os.environ.items() if k != "ISSUETRIAGE_HISTORY"}
    envs = {"none": base, "history": {**base, "ISSUETRIAGE_HISTORY": history}}
    first: dict[str, list[float]] = {k: [] for k in envs}
    further: dict[str, list[float]] = {k: [] for k in envs}
    peak: dict[str, float] = {k: 0.0 for k in envs}
    for _ in range(runs):
        for key, env in envs.items():
            one_s, _ = run([*cli, "plan", "--issue", str(one), "--judge", "heuristic"], env)
            many_s, rss = run([*cli, "plan", "--issue", str(many), "--judge", "heuristic"], env)
            first[key].append(one_s)
            further[key].append((many_s - one_s) / (n_many - 1))
            peak[key] = max(peak[key], rss)
    return {key: {"first_s": statistics.median(first[key]), "first_min_s": min(first[key]),
                  "further_ms": 1000 * statistics.median(further[key]), "peak_mib": peak[key]}
            for key in envs}


def recall_of_neighbours(folder: Path, issues: Path, k: int = 20) -> float:
    """Share of the exact `k` nearest earlier issues (a cosine over every stored vector) that the
    engine's budgeted candidates find: what the postings budget costs at this size."""
    from collections import Counter

    import numpy as np

    from issuetriage.evidence.history import document, weights, words
    from issuetriage.judges.history_folder import load_folder
    from issuetriage.policy import load_profile
    from issuetriage.records import read_issues

    history = load_folder(folder, load_profile("pytorch")).history
    vocab = history.vocabulary
    vocab.cosines([], {})
    found = total = 0
    for issue in read_issues(str(issues)):
        counts = Counter(words(document(issue.title, issue.body), vocab.stop))
        query = weights(counts, vocab.lookup(counts), vocab.issues)
        numbers, sims, _ = vocab.cosines(vocab.arrays["numbers"].tolist(), query)  # type: ignore[attr-defined]
        exact = {int(numbers[j]) for j in np.lexsort((-numbers, -sims))[:k] if sims[j] > 0}
        found += len(exact & {p.number for p in history.similar(issue, k)})
        total += len(exact)
    return found / max(total, 1)


def build(corpus: Path, out: Path) -> tuple[float, float]:
    return run([sys.executable, "-m", "issuetriage.cli", "history", "build", "--corpus", str(corpus),
                "--out", str(out)], dict(os.environ))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1422,10000,100000")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--issues", type=int, default=301)
    parser.add_argument("--jsonl", action="store_true", help="today's path: the JSONL fitted at start")
    parser.add_argument("--keep", type=Path, help="keep corpora and folders here")
    args = parser.parse_args()
    if not DEV.exists():
        print(f"skipped: {DEV} not found")
        return
    work = args.keep or Path(tempfile.mkdtemp(prefix="history-scale-"))
    work.mkdir(parents=True, exist_ok=True)
    one, many = new_issues(1, work / "one.jsonl"), new_issues(args.issues, work / "many.jsonl")
    print(f"python {sys.version.split()[0]}, {os.cpu_count()} cores, load average "
          f"{os.getloadavg()[0]:.1f}; {args.runs} runs, medians; plan of 1 and of {args.issues} issues")
    print("| history | build (peak RSS) | folder | load + first plan (none; ratio) | per further issue (none) "
          "| peak RSS of the plan (none) | exact 20 nearest found |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    try:
        for size in (int(s) for s in args.sizes.split(",")):
            corpus = work / f"history-{size}.jsonl"
            if not corpus.exists():
                derive(size, corpus)
            if args.jsonl:
                source, built, built_rss = corpus, "fitted at start", ""
            else:
                source = work / f"history-{size}"
                shutil.rmtree(source, ignore_errors=True)
                seconds, rss = build(corpus, source)
                built, built_rss = f"{seconds:.1f} s", f" (peak {rss:.0f} MiB)"
            got = plan_pair(str(source), one, many, args.issues, args.runs)
            h, n = got["history"], got["none"]
            found = "" if args.jsonl else f"{recall_of_neighbours(source, many):.3f}"
            print(f"| {size:,} | {built}{built_rss} | {folder_mib(source):.1f} MiB "
                  f"| {h['first_s']:.2f} s ({n['first_s']:.2f} s; {h['first_s'] / n['first_s']:.1f}x) "
                  f"| {h['further_ms']:.1f} ms ({n['further_ms']:.1f} ms) "
                  f"| {h['peak_mib']:.0f} MiB ({n['peak_mib']:.0f} MiB) | {found} |", flush=True)
            print(f"  load average now {os.getloadavg()[0]:.1f}", flush=True)
    finally:
        if args.keep is None:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
