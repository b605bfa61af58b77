"""Adjudicated precision: gold is incomplete, so a blind reviewer judges the labels a judge adds
beyond gold, mixed with gold labels as controls, never told which is which.

`review_sample` writes what the reviewer sees (issue text, label name, the label's catalog
description; no source, no judge) and a private key; `adjudicated` combines the reviewer's
verdicts with the key: precision counts a label right when gold has it, or when the reviewer
found the sampled extras right (clearly, or at least defensibly), scaled to every extra.
"""

from __future__ import annotations

import json
import random
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from issuetriage.errors import UserError
from issuetriage.evaluate.scoring import IssueResult
from issuetriage.judges.learned.corpus import Corpus
from issuetriage.policy import Policy

VERDICTS = ("clearly_right", "defensible", "wrong")
ISSUE_CHARS = 4000


def describe(policy: Policy, name: str) -> str:
    """A label as a reviewer reads it: its catalog description, when to use it and when not."""
    spec = policy.labels.get(name)
    if spec is None:
        return "(not in the catalog)"
    parts = [spec.description] + ([f"Use when: {spec.when}"] if spec.when else [])
    parts += [f"Not when: {spec.when_not}"] if spec.when_not else []
    return " ".join(" ".join(parts).split())


def review_sample(results: Mapping[str, Sequence[IssueResult]], corpus: Corpus, policy: Policy,
                  per_judge: int = 40, controls: int = 40, seed: int = 0
                  ) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(items for the reviewer, the private key). Per judge, a fixed random sample of the
    labels it added that gold lacks; plus gold labels of the same issues as controls."""
    rng = random.Random(seed)
    pairs: dict[tuple[int, str], dict[str, Any]] = {}
    for judge, rows in sorted(results.items()):
        extras = sorted((r.number, lab) for r in rows if r.labelled for lab in r.predicted - r.gold)
        for key in rng.sample(extras, min(per_judge, len(extras))):
            pairs.setdefault(key, {"judges": [], "gold": False})["judges"].append(judge)
    gold = sorted({(r.number, lab) for rows in results.values() for r in rows if r.labelled
                   for lab in r.gold})
    for key in rng.sample(gold, min(controls, len(gold))):
        pairs.setdefault(key, {"judges": [], "gold": True})["gold"] = True
    issues = {e.issue.number: e.issue for e in corpus.examples}
    keys = sorted(pairs)
    rng.shuffle(keys)
    items, key_rows = [], []
    for i, (number, label) in enumerate(keys, 1):
        issue = issues[number]
        text = f"Title: {issue.title.strip()}\n\n{issue.body[:ISSUE_CHARS]}"
        items.append({"id": i, "issue": text, "label": label,
                      "label_description": describe(policy, label)})
        key_rows.append({"id": i, "repo": issue.repo, "number": number, "label": label,
                         "gold": pairs[(number, label)]["gold"],
                         "judges": sorted(pairs[(number, label)]["judges"])})
    return items, key_rows


def write_review(out: Path, items: Sequence[dict], key: Sequence[dict]) -> None:
    """`sample.jsonl` (for the reviewer) and `key.jsonl` (never shown to it) in `out`."""
    out.mkdir(parents=True, exist_ok=True)
    for name, rows in (("sample.jsonl", items), ("key.jsonl", key)):
        (out / name).write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows),
                                encoding="utf-8")


def read_verdicts(path: Path) -> dict[int, str]:
    """Verdicts by item id; a line that is not one of VERDICTS is an error."""
    verdicts: dict[int, str] = {}
    for lineno, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
            item, verdict = int(row["id"]), str(row["verdict"])
        except (json.JSONDecodeError, KeyError, TypeError, ValueError):
            raise UserError(f"{path}:{lineno}: expected {{\"id\": N, \"verdict\": ...}}") from None
        if verdict not in VERDICTS:
            raise UserError(f"{path}:{lineno}: verdict {verdict!r} is not one of {VERDICTS}")
        verdicts[item] = verdict
    return verdicts


def adjudicated(results: Sequence[IssueResult], judge: str, key: Iterable[dict],
                verdicts: Mapping[int, str]) -> dict[str, Any]:
    """One judge's precision against gold and adjudicated (clearly right; at least defensible)."""
    labelled = [r for r in results if r.labelled]
    tp = sum(len(r.predicted & r.gold) for r in labelled)
    extra = sum(len(r.predicted - r.gold) for r in labelled)
    mine = [verdicts[k["id"]] for k in key if judge in k["judges"] and k["id"] in verdicts]
    clear = mine.count("clearly_right")
    defensible = mine.count("defensible")
    total = tp + extra
    out: dict[str, Any] = {"judge": judge, "labels": total, "gold_tp": tp, "extras": extra,
                           "reviewed_extras": len(mine), "clearly_right": clear,
                           "defensible": defensible, "wrong": mine.count("wrong"),
                           "gold_precision": round(tp / total, 4) if total else None}
    if mine and total:
        out["adjudicated_precision_clear"] = round((tp + extra * clear / len(mine)) / total, 4)
        out["adjudicated_precision_defensible"] = round(
            (tp + extra * (clear + defensible) / len(mine)) / total, 4)
    return out


def controls(key: Iterable[dict], verdicts: Mapping[int, str]) -> dict[str, int]:
    """How the reviewer judged gold labels (its own error rate on labels maintainers gave)."""
    seen = [verdicts[k["id"]] for k in key if k["gold"] and k["id"] in verdicts]
    return {v: seen.count(v) for v in VERDICTS}
