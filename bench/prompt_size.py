"""Prompt size and reach per issue for the LLM judge, against what PyTorch's triage agent reads
for every issue before the issue itself (its skill text, labels.json and templates.json).

    PYTHONPATH=src python bench/prompt_size.py [--data FILE] [--profile NAME_OR_DIR] [--limit N]
                                               [--prompt catalog|shortlist]

Reach is the share of the corpus's gold labels (labelled issues) that the request lets the model
name. The catalog prompt carries up to 8 similar earlier issues of the corpus itself as history.

Counts characters of everything sent (system prompt, user message with the issue, and the JSON
schema of the form). No tokenizer for Claude is available offline, so tokens are an estimate
(characters / 4), labelled as such; the ratio to the baseline is what counts.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path

from issuetriage.evidence.signals import extract_signals
from issuetriage.judges.heuristic import HeuristicJudge
from issuetriage.judges.learned.corpus import history_from_examples, load_corpus
from issuetriage.judges.llm.excerpt import issue_excerpt
from issuetriage.judges.llm.judge import offline_confident, request
from issuetriage.judges.llm.prompt import PROMPT_VERSIONS, build_prompt
from issuetriage.models import Issue
from issuetriage.policy import load_profile

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared"
REFERENCE = SHARED / "reference" / "pytorch-triage"
# PyTorch's skill text (SKILL.md) is not in ../shared/reference; its size is the figure stated in
# the issue. labels.json and templates.json are measured when the reference files are present.
SKILL_CHARS = 12_500
STATED = {"claude-skills-triaging-issues-labels.json": 30_915,
          "claude-skills-triaging-issues-templates.json": 2_877}


def baseline() -> tuple[int, str]:
    parts, notes = [SKILL_CHARS], ["skill text 12,500 (stated)"]
    for name, stated in STATED.items():
        path = REFERENCE / name
        size = len(path.read_text(encoding="utf-8")) if path.is_file() else stated
        parts.append(size)
        notes.append(f"{name.split('-')[-1]} {size:,} ({'measured' if path.is_file() else 'stated'})")
    return sum(parts), " + ".join(notes)


def worst_case(policy, style: str) -> int:
    """A synthetic upper bound: a 20k-character body, five long comments, and the 24 candidates
    with the longest descriptions (the dev bodies are cut to ~900 characters, real ones are not)."""
    from issuetriage.judges.base import Judgment, Kind, LabelScore
    from issuetriage.models import Comment

    longest = sorted(policy.labels.values(), key=lambda s: -len(s.description + s.when + s.when_not))
    offline = Judgment(judge="synthetic", kind=Kind.BUG, kind_confidence=0.5,
                       labels=tuple(LabelScore(name=s.name, confidence=0.5) for s in longest[:24]))
    issue = Issue(repo=policy.meta.repo, number=1, title="t" * 200, body="word " * 4000,
                  comments=tuple(Comment(author="a", body="word " * 1000) for _ in range(5)))
    return build_prompt(issue, extract_signals(issue), policy, offline, style=style).size


def pct(values: list[int], q: float) -> int:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", type=Path, default=SHARED / "data" / "pytorch-issues-dev.jsonl")
    ap.add_argument("--profile", default="pytorch")
    ap.add_argument("--limit", type=int, default=0)
    ap.add_argument("--threshold", type=float, default=0.75, help="hybrid threshold")
    ap.add_argument("--prompt", default="catalog", choices=tuple(PROMPT_VERSIONS))
    args = ap.parse_args()
    if not args.data.is_file():
        print(f"skipped: {args.data} not found")
        return 0
    policy = load_profile(args.profile)
    described = sum(1 for s in policy.labels.values() if s.description)
    judge = HeuristicJudge()
    sizes, systems, users, schemas, excerpts, issue_chars, asked = [], [], [], [], [], [], []
    offline_judgments = []
    corpus = load_corpus(args.data, policy)
    history = history_from_examples(corpus.examples, policy)  # earlier issues only, per issue
    reached = gold_total = 0
    for example in corpus.examples[: args.limit or None]:
        issue = example.issue
        signals = extract_signals(issue)
        offline = judge.judge(issue, signals, policy)
        prompt = request(issue, signals, policy, offline, history, args.prompt)
        reached += len(example.gold & set(prompt.labels))
        gold_total += len(example.gold)
        sizes.append(prompt.size)
        systems.append(len(prompt.system))
        users.append(len(prompt.user))
        schemas.append(len(json.dumps(prompt.schema)))
        excerpts.append(len(issue_excerpt(issue)))
        issue_chars.append(len(issue.title) + len(issue.body))
        asked.append(not offline_confident(offline, args.threshold, policy))
        offline_judgments.append(offline)
    base, how = baseline()
    n = len(sizes)
    median, p95 = int(statistics.median(sizes)), pct(sizes, 0.95)
    print(f"issues: {n} from {args.data}")
    print(f"profile: {policy.name} ({len(policy.labels)} labels, {described} with descriptions); "
          f"prompt {args.prompt}, version {PROMPT_VERSIONS[args.prompt]}")
    print(f"reach: {reached / gold_total:.3f} of {gold_total} gold labels on labelled issues "
          f"can be named in their request (target >= 0.98)")
    print(f"baseline, PyTorch agent per issue before the issue: {base:,} chars = {how}")
    print("our prompt per issue (system + user message incl. the issue + schema):")
    for name, value in (("median", median), ("p95", p95), ("max", max(sizes))):
        print(f"  {name:6} {value:7,} chars  ~{value // 4:6,} tokens (estimate, chars/4)  "
              f"{value / base:6.1%} of baseline")
    print(f"  parts (medians): system {int(statistics.median(systems)):,}, user "
          f"{int(statistics.median(users)):,} (issue excerpt {int(statistics.median(excerpts)):,}; "
          f"raw issue text {int(statistics.median(issue_chars)):,}), schema "
          f"{int(statistics.median(schemas)):,}")
    bound = worst_case(policy, args.prompt)
    print(f"  worst case (synthetic long issue, 24 long candidates): {bound:,} chars "
          f"({bound / base:.1%} of baseline)")
    share = sum(asked) / n
    print(f"hybrid (threshold {args.threshold}): model asked for {sum(asked)} of {n} issues "
          f"({share:.0%}); mean chars sent per issue {sum(s for s, a in zip(sizes, asked) if a) / n:,.0f} "
          f"({sum(s for s, a in zip(sizes, asked) if a) / n / base:.1%} of baseline)")
    sweep = ", ".join(f"{t:.2f}: {sum(not offline_confident(j, t, policy) for j in offline_judgments) / n:.0%}"
                      for t in (0.5, 0.6, 0.7, 0.75, 0.8, 0.9))
    print(f"  share asked by threshold: {sweep}")
    verdict = "met" if median <= 0.5 * base else "NOT met"
    print(f"target median <= 50% of baseline ({0.5 * base:,.0f} chars): {verdict}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
