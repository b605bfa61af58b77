"""Labelled corpora: JSONL issues with their final labels, split into what a judge may see and gold.

The leakage guard starts here: each record becomes the `Issue` as it was filed: no labels, open
and unlocked. The labels maintainers applied and the final state travel separately (`raw_labels`,
`gold`, `final_state`), so no judge can read them.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from issuetriage.errors import UserError, first_problem
from issuetriage.evidence.history import History, Past, filed
from issuetriage.evidence.history_index import memory_history
from issuetriage.models import Issue
from issuetriage.policy import Policy
from issuetriage.records import normalize_record


@dataclass(frozen=True)
class Example:
    """One corpus issue as filed (no labels) plus the labels maintainers finally applied."""

    issue: Issue
    raw_labels: tuple[str, ...]
    gold: frozenset[str]
    line: int
    final_state: str = "open"


@dataclass(frozen=True)
class CorpusProblem:
    """A corpus line that was skipped, and why."""

    line: int
    reason: str

    def __str__(self) -> str:
        return f"line {self.line}: {self.reason}"


@dataclass(frozen=True)
class Corpus:
    """The usable examples of a corpus file, the lines that were skipped, and the file's hash."""

    path: str
    examples: tuple[Example, ...]
    problems: tuple[CorpusProblem, ...]
    sha256: str

    def subset(self, indices: Iterable[int]) -> Corpus:
        """The same corpus restricted to some examples (for cross-validation folds)."""
        return Corpus(self.path, tuple(self.examples[i] for i in indices), self.problems, self.sha256)


# Labels maintainers use when they close an issue as a usage question (any profile).
QUESTION_MARKERS = frozenset({"question", "usage question"})


def is_gold_question(example: Example, policy: Policy) -> bool:
    """A question marker label (ours or the profile's), or closed by maintainers without any
    content label."""
    if (QUESTION_MARKERS | set(policy.meta.question_labels)) & set(example.raw_labels):
        return True
    return example.final_state == "closed" and not example.gold


def content_labels(policy: Policy) -> frozenset[str]:
    """Catalog labels that describe an issue's content, i.e. everything but process labels."""
    process = set(policy.meta.process_labels) | policy.bot_label_names
    process |= {policy.bot.high_priority} - {""}
    return frozenset(name for name in policy.labels if name not in process)


def gold_labels(labels: Iterable[str], policy: Policy) -> frozenset[str]:
    """Final labels within the profile's catalog, minus process labels (docs/evaluation.md)."""
    allowed = content_labels(policy)
    return frozenset(label for label in labels if label in allowed)


def _record_problem(record: Any) -> str | None:
    """Why a decoded line is not a usable labelled issue, or None when it is."""
    if not isinstance(record, dict):
        return f"expected a JSON object, got {type(record).__name__}"
    for key in ("number", "title"):
        if key not in record:
            return f"missing field {key!r}"
    labels = record.get("labels")
    if not isinstance(labels, list):
        return "field 'labels' must be a list (use [] for an unlabelled issue)"
    if not all(isinstance(x, str) or (isinstance(x, dict) and isinstance(x.get("name"), str))
               for x in labels):
        return "field 'labels' must hold label names"
    return None


def _to_issue(record: dict[str, Any], default_repo: str) -> Issue:
    """The issue as filed: no labels, open, unlocked; comments kept as they were written."""
    data = dict(record)
    data.setdefault("repo", default_repo)
    data.update(labels=(), state="open", locked=False)
    return Issue.model_validate(data)


def parse_line(text: str, line: int, policy: Policy) -> Example | CorpusProblem:
    """One corpus line as an example, or the problem that keeps it out."""
    try:
        record = json.loads(text)
    except json.JSONDecodeError as exc:
        return CorpusProblem(line, f"not valid JSON: {exc.msg} (column {exc.colno})")
    return parse_record(record, line, policy)


def parse_record(record: Any, line: int, policy: Policy) -> Example | CorpusProblem:
    """One decoded record (a line, or an item of a `gh issue list --json` array) as an example."""
    problem = _record_problem(record)
    if problem:
        return CorpusProblem(line, problem)
    record = normalize_record(record)  # `gh issue list --json ...` lines too
    try:
        issue = _to_issue(record, policy.meta.repo)
    except ValidationError as exc:
        return CorpusProblem(line, first_problem(exc, "record"))
    raw = tuple(x if isinstance(x, str) else x["name"] for x in record["labels"])
    return Example(issue=issue, raw_labels=raw, gold=gold_labels(raw, policy), line=line,
                   final_state=str(record.get("state") or "open"))


def load_corpus(path: str | Path, policy: Policy, strict: bool = False) -> Corpus:
    """Read a JSONL corpus; bad lines are skipped and reported (or, with `strict`, rejected)."""
    examples: list[Example] = []
    problems, sha256 = scan_corpus(path, policy, examples.append, strict)
    return Corpus(str(path), tuple(examples), tuple(problems), sha256)


def scan_corpus(path: str | Path, policy: Policy, each: Callable[[Example], object],
                strict: bool = False) -> tuple[list[CorpusProblem], str]:
    """Hand each usable example of a corpus to `each` as it is read (so a caller keeps only what
    it needs); returns the skipped lines and the file's sha256. No usable issue is an error."""
    path = Path(path)
    digest = hashlib.sha256()
    problems: list[CorpusProblem] = []
    seen: dict[tuple[str, int], int] = {}
    for number, parsed in _parsed(path, policy, digest):
        if isinstance(parsed, Example):
            key = (parsed.issue.repo, parsed.issue.number)
            if key in seen:
                parsed = CorpusProblem(number, f"duplicate of line {seen[key]} "
                                               f"({parsed.issue.ref})")
            else:
                seen[key] = number
        if isinstance(parsed, CorpusProblem):
            if strict:
                raise UserError(f"{path}: {parsed}")
            problems.append(parsed)
        else:
            each(parsed)
    if not seen:
        raise UserError(f"{path}: no usable issues in corpus ({len(problems)} bad lines)")
    return problems, digest.hexdigest()


def _parsed(path: Path, policy: Policy, digest: Any) -> Iterator[tuple[int, Example | CorpusProblem]]:
    """Each record with its line (JSON Lines, read a line at a time) or its item number (a JSON
    array, as `gh issue list --json number,title,body,labels,state` writes it); `digest` sees
    every byte."""
    try:
        with path.open("rb") as fh:
            first = fh.read(4096)
            fh.seek(0)
            if first.lstrip().startswith(b"["):
                data = fh.read()
                digest.update(data)
                items = json.loads(_text(data, path, 0))
                for number, record in enumerate(items if isinstance(items, list) else [items], start=1):
                    yield number, parse_record(record, number, policy)
                return
            offset = 0
            for number, raw in enumerate(fh, start=1):
                digest.update(raw)
                line = _text(raw, path, offset)
                offset += len(raw)
                if line.strip():
                    yield number, parse_line(line, number, policy)
    except OSError as exc:
        raise UserError(f"{path}: cannot read corpus: {exc.strerror or exc}") from None
    except json.JSONDecodeError as exc:
        raise UserError(f"{path}: not a valid JSON array: {exc.msg} (line {exc.lineno})") from None


def _text(data: bytes, path: Path, offset: int) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise UserError(f"{path}: corpus is not UTF-8 (byte {offset + exc.start})") from None


def past_of(examples: Iterable[Example], repo: str) -> Past:
    """Corpus examples of `repo` that carry gold labels (never their raw process labels)."""
    rows = [(filed(e.issue), tuple(sorted(e.gold))) for e in examples if e.gold and e.issue.repo == repo]
    return sorted(rows, key=lambda row: row[0].number)


def history_from_examples(examples: Iterable[Example], policy: Policy) -> History:
    """History from corpus examples (their gold labels, never their raw process labels)."""
    return memory_history(policy.meta.repo, past_of(examples, policy.meta.repo))


def load_history(path: str | Path, policy: Policy) -> tuple[History, Past]:
    """History from a labelled corpus file (in memory), and its labelled issues; every issue must
    belong to the profile's repository."""
    corpus = load_corpus(path, policy, strict=True)
    foreign = next((e.issue for e in corpus.examples if e.issue.repo != policy.meta.repo), None)
    if foreign is not None:
        raise UserError(f"{path}: history issue {foreign.ref} is not from the profile's repository "
                        f"{policy.meta.repo} (profile {policy.name})")
    past = past_of(corpus.examples, policy.meta.repo)
    return memory_history(policy.meta.repo, past), past
