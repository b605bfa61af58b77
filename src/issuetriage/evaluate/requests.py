"""Export the exact LLM requests for a fixed sample of labelled issues, for answering elsewhere.

The answering side (a real key, or a model that reads only these files) writes recorded answers
the replay provider scores through the product (docs/llm.md). Nothing here carries gold: the
issues are label-free as filed, their history comes only from the other issues of the corpus and
only from issues filed before them, and the manifest names issues, never labels.
"""

from __future__ import annotations

import json
import shutil
import tempfile
from pathlib import Path
from typing import Any

import numpy as np

from issuetriage.errors import UserError
from issuetriage.evidence.history_index import memory_history
from issuetriage.evidence.signals import extract_signals
from issuetriage.judges.base import Judge
from issuetriage.judges.heuristic import HeuristicJudge
from issuetriage.judges.learned.corpus import Corpus, load_corpus, past_of
from issuetriage.judges.llm.judge import request
from issuetriage.judges.llm.prompt import PROMPT_VERSIONS, Prompt
from issuetriage.judges.stacking import stacked
from issuetriage.policy import load_profile

FORMAT_NOTE = ("Answer with ONE JSON object that matches # SCHEMA (every field present), nothing "
               "else: it is what the `submit_judgment` tool would receive.")


def sample_split(corpus: Corpus, size: int, seed: int = 0) -> tuple[list[int], list[int]]:
    """A fixed random sample of `size` labelled examples (held out, scored) and every other
    example (history); indices into `corpus.examples`, sorted."""
    labelled = [i for i, e in enumerate(corpus.examples) if e.gold]
    if not 0 < size <= len(labelled):
        raise UserError(f"--sample {size}: the corpus has {len(labelled)} labelled issues")
    held = sorted(np.random.default_rng(seed).choice(labelled, size=size, replace=False).tolist())
    chosen = set(held)
    return held, [i for i in range(len(corpus.examples)) if i not in chosen]


def chosen_split(corpus: Corpus, numbers: list[int]) -> tuple[list[int], list[int]]:
    """The labelled examples whose issue numbers are listed (held out) and every other example
    (history); indices into `corpus.examples`, sorted. An unknown or unlabelled number is an error."""
    index = {e.issue.number: i for i, e in enumerate(corpus.examples) if e.gold}
    missing = sorted(set(numbers) - set(index))
    if missing:
        raise UserError(f"--issues: {len(missing)} not labelled in the corpus, e.g. #{missing[0]}")
    if not numbers:
        raise UserError("--issues: the file names no issue")
    held = sorted(index[n] for n in set(numbers))
    chosen = set(held)
    return held, [i for i in range(len(corpus.examples)) if i not in chosen]


def read_numbers(path: str | Path) -> list[int]:
    """Issue numbers, one per line (a leading `#` and blank lines allowed)."""
    try:
        lines = Path(path).read_text(encoding="utf-8").split()
        return [int(word.lstrip("#")) for word in lines]
    except (OSError, UnicodeDecodeError) as exc:
        raise UserError(f"{path}: cannot read issue numbers ({exc})") from None
    except ValueError:
        raise UserError(f"{path}: expected issue numbers, one per line") from None


def render_request(prompt: Prompt) -> str:
    """One request as text: exactly the system prompt, the user message and the form's schema."""
    return "\n\n".join([f"# SYSTEM\n{prompt.system}", f"# USER\n{prompt.user}",
                        f"# SCHEMA\n{FORMAT_NOTE}\n{json.dumps(prompt.schema, indent=1, sort_keys=True)}"])


def request_file(repo: str, number: int) -> str:
    return f"{repo.replace('/', '__')}-{number}.txt"


def export_requests(corpus_path: str | Path, out: str | Path, size: int, seed: int = 0,
                    style: str = "catalog", profile: str = "pytorch",
                    neighbours: int = 0, numbers: list[int] | None = None) -> dict[str, Any]:
    """Write one request file per sampled issue and `manifest.json` into `out` (a new folder,
    written whole or not at all); returns the manifest. `neighbours` > 0 stacks the offline
    judge with the history, as `eval --neighbours K --sample N` does, so its requests match.
    `numbers` names the issues instead of a sample; the history is then every other issue."""
    if style not in PROMPT_VERSIONS:
        raise UserError(f"--prompt {style!r}: choose from {', '.join(PROMPT_VERSIONS)}")
    out = Path(out)
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise UserError(f"{out}: exists and is not an empty folder")
    policy = load_profile(profile)
    corpus = load_corpus(corpus_path, policy)
    held, rest = chosen_split(corpus, numbers) if numbers is not None else sample_split(corpus, size, seed)
    past = past_of((corpus.examples[i] for i in rest), policy.meta.repo)
    history = memory_history(policy.meta.repo, past)
    offline: Judge = HeuristicJudge()
    if neighbours:
        offline = stacked(offline, history, past, policy, neighbours)
    rows, texts = [], {}
    for i in held:
        issue = corpus.examples[i].issue
        assert not issue.labels, "leakage guard: corpus issues are label-free as filed"
        signals = extract_signals(issue)
        prompt = request(issue, signals, policy, offline.judge(issue, signals, policy),
                         history, style)
        if any(n >= issue.number for n in prompt.examples):
            raise AssertionError(f"leakage guard: {issue.ref} was given itself or a newer issue")
        name = request_file(issue.repo, issue.number)
        texts[name] = render_request(prompt)
        rows.append({"repo": issue.repo, "number": issue.number, "file": name,
                     "prompt_version": prompt.version, "prompt_digest": prompt.digest,
                     "chars": prompt.size, "examples": list(prompt.examples)})
    manifest = {"prompt_style": style, "prompt_version": PROMPT_VERSIONS[style],
                "profile": policy.name, "corpus": str(corpus_path), "corpus_sha256": corpus.sha256,
                "sample": len(held), "seed": None if numbers is not None else seed, "history_issues": len(history),
                "offline_judge": offline.name, "requests": rows}
    _write_folder(out, {**texts, "manifest.json": json.dumps(manifest, indent=1) + "\n"})
    return manifest


def _write_folder(out: Path, files: dict[str, str]) -> None:
    """All files or none: write beside `out`, then move into place."""
    parent = out.parent
    parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}.", dir=parent))
    try:
        for name, text in files.items():
            (tmp / name).write_text(text, encoding="utf-8")
        if out.exists():
            out.rmdir()
        tmp.rename(out)
    except OSError as exc:
        shutil.rmtree(tmp, ignore_errors=True)
        raise UserError(f"{out}: cannot write requests ({exc})") from None
