"""Labels beside the maintainers' own: a model's recorded answers and humans' corrections, as
evidence the offline judge learns from.

Each issue's taught labels keep their provenance (`model:NAME@PROMPT_VERSION`, `correction`) and
a weight, and stay apart from the maintainers' final labels: the stack reads them as separate
features of an issue's nearest earlier issues (`judges/neighbours.py`), so it learns from the
history itself how far to trust them, and they never become gold (nothing is scored against
them). `eval` hands a split's judge only the evidence of its training side, so an issue's own
answer never teaches the judge that scores it (`evaluate/run.py`).

A recordings file (the `ISSUETRIAGE_LLM_RECORD` format, docs/llm.md) for another repository,
profile or prompt version is refused in one line (exit 2); a label outside the catalog is dropped
with a warning, never learned.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from issuetriage.errors import UserError, first_problem
from issuetriage.judges.learned.corpus import content_labels, load_corpus
from issuetriage.judges.llm.prompt import PROMPT_VERSIONS
from issuetriage.judges.llm.providers import read_recordings
from issuetriage.judges.llm.schema import Answer
from issuetriage.policy import Policy

MODEL_WEIGHT = 0.5  # a model's label counts half a maintainer's correction
CORRECTION_WEIGHT = 1.0
ANSWER_GATE = 0.5  # an answer's label is taught when named at this confidence or more
Warn = Callable[[str], None]


def _stderr(message: str) -> None:
    sys.stderr.write(f"warning: {message}\n")


@dataclass(frozen=True)
class Taught:
    """The labels one issue was taught, where they came from, and how much they count."""

    labels: tuple[str, ...]
    source: str
    weight: float


Teaching = Mapping[int, Taught]  # issue number → its taught labels (one repository)


def read_answers(path: Path, policy: Policy, weight: float = MODEL_WEIGHT,
                 warn: Warn = _stderr) -> dict[int, Taught]:
    """Recorded model answers as taught labels (UserError for a file that is not this
    repository's, profile's or a current prompt version's)."""
    taught: dict[int, Taught] = {}
    allowed = content_labels(policy)
    for (repo, number), record in read_recordings(path, policy.meta.repo).items():
        where = f"{path}: answer for {repo}#{number}"
        profile = record.get("profile")
        if profile is not None and profile != policy.name:
            raise UserError(f"{where} was recorded for profile {profile!r}, not {policy.name!r}")
        version = record.get("prompt_version")
        if version not in PROMPT_VERSIONS.values():
            raise UserError(f"{where} was recorded for prompt version {version!r}; this issuetriage asks "
                            f"{', '.join(sorted(PROMPT_VERSIONS.values()))} (record it again)")
        try:
            answer = Answer.model_validate(record["answer"])
        except ValidationError as exc:
            raise UserError(f"{where}: {first_problem(exc, 'answer')}") from None
        labels = []
        for choice in answer.labels:
            if choice.name not in policy.labels:
                warn(f"{where} names {choice.name!r}, not in the {policy.name} catalog; not learned")
            elif choice.confidence >= ANSWER_GATE and choice.name in allowed:
                labels.append(choice.name)
        model = str(record.get("model") or "unnamed")
        taught[number] = Taught(tuple(sorted(set(labels))), f"model:{model}@{version}", weight)
    return taught


def read_corrections(path: Path, policy: Policy, weight: float = CORRECTION_WEIGHT) -> dict[int, Taught]:
    """What humans stand by after the bot's plans (`issuetriage corrections --out`), as taught
    labels; an issue of another repository is an error."""
    corpus = load_corpus(path, policy, strict=True)
    taught = {}
    for example in corpus.examples:
        if example.issue.repo != policy.meta.repo:
            raise UserError(f"{path}: correction for {example.issue.ref}, not the profile's repository "
                            f"{policy.meta.repo}")
        taught[example.issue.number] = Taught(tuple(sorted(example.gold)), "correction", weight)
    return taught


def evidence(policy: Policy, answers: Path | None = None, corrections: Path | None = None) -> dict[int, Taught]:
    """What `--learn-answers`/`--answers` and `--learn-corrections`/`--corrections` name, as one
    (a correction wins over a model's answer for the same issue)."""
    return {**(read_answers(answers, policy) if answers else {}),
            **(read_corrections(corrections, policy) if corrections else {})}


def restricted(teaching: Teaching, numbers: Iterable[int]) -> dict[int, Taught]:
    """Only the evidence about `numbers` (a split's training side)."""
    wanted = set(numbers)
    return {n: t for n, t in teaching.items() if n in wanted}


def to_json(teaching: Teaching) -> dict[str, Any]:
    """The evidence as a history folder stores it (`taught.json`)."""
    return {str(n): {"labels": list(t.labels), "source": t.source, "weight": t.weight}
            for n, t in sorted(teaching.items())}


def from_json(data: Any) -> dict[int, Taught]:
    """`to_json`'s inverse; ValueError for anything else."""
    if not isinstance(data, dict):
        raise ValueError("taught evidence must be an object")
    out = {}
    for key, row in data.items():
        labels, source, weight = row["labels"], row["source"], row["weight"]
        if not (isinstance(labels, list) and all(isinstance(x, str) for x in labels)
                and isinstance(source, str) and isinstance(weight, (int, float))):
            raise ValueError(f"taught evidence for {key}: labels, source and weight expected")
        out[int(key)] = Taught(tuple(labels), source, float(weight))
    return out


def summary(teaching: Teaching) -> dict[str, int]:
    """How many issues each source taught (for manifests and reports)."""
    counts: dict[str, int] = {}
    for t in teaching.values():
        counts[t.source] = counts.get(t.source, 0) + 1
    return dict(sorted(counts.items()))
