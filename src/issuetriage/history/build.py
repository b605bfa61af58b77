"""`issuetriage history build`: read a source, index it, fit the learned parts, write the folder.

Everything is written into a temporary folder beside `--out` and renamed into place at the end,
so a failed or interrupted build leaves the old folder (or nothing) behind. `--update` starts
from the existing folder's index: only new or changed issues are indexed again; the statistics
are refrozen (one linear pass) and the learned parts refitted on the window (bounded:
`judges/stacking.py`), so its cost grows at most linearly with the history.

Evidence beside the maintainers' labels (a model's recorded answers, humans' corrections:
`judges/taught.py`) is fitted into the stack as its own features and kept in the folder; an
`--update` keeps what the folder was taught before, newer evidence about an issue winning.
"""

from __future__ import annotations

import json
import shutil
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from issuetriage.evidence.history import History, english_stop_words
from issuetriage.evidence.history_index import ARRAYS, FolderIndex
from issuetriage.history.sources import Source
from issuetriage.judges.base import Judge
from issuetriage.judges.history_folder import (
    INDEX,
    HistoryError,
    check_for,
    check_out,
    finish,
    open_index,
    read_manifest,
    staging,
    write_parts,
)
from issuetriage.judges.stacking import WINDOW, Progress, fit_stack, window
from issuetriage.judges.taught import Taught, Teaching, from_json, summary
from issuetriage.policy import Policy


def _quiet(step: str, done: int, total: int) -> None:
    pass


def build(source: Source, policy: Policy, out: Path, base: Judge, k: int, *, update: bool = False,
          progress: Progress = _quiet, taught: Teaching | None = None) -> dict[str, Any]:
    """Build (or with `update`, refresh) the history folder `out`; returns its manifest. The
    source's issues are handed over: once indexed, all but the fit's window are let go (a
    100,000-issue build keeps 5,000 issues in memory while it fits)."""
    started = time.perf_counter()
    check_out(out)
    if update:
        check_for(read_manifest(out), out, policy)
    evidence = {**(_taught_before(out) if update else {}), **(taught or {})}
    tmp = staging(out)
    try:
        index = _index(tmp, source, policy, out if update else None, progress)
        index.save_arrays(tmp)
        index = FolderIndex.open(index.db, tmp)  # the vectors memory-mapped from here on
        history = History(policy.meta.repo, index, index)
        labelled = len(source.past)
        fitted_on = window(source.past)
        source.past.clear()
        stack = fit_stack(base, history, fitted_on, policy, k, progress, taught=evidence)
        index.db.close()
        write_parts(tmp, stack)
        manifest = {
            "profile": policy.name, "repo": policy.meta.repo, "base_judge": base.name,
            "source": source.manifest(),
            "built_at": datetime.now(UTC).isoformat(timespec="seconds"),
            "counts": {"issues": source.issues, "labelled": labelled, "indexed": index.issues,
                       "fitted_on": len(fitted_on), "taught": summary(evidence)},
            "settings": {"window": WINDOW, "neighbours": k},
            "stack": stack is not None,
            "seconds": round(time.perf_counter() - started, 1),
        }
        finish(tmp, out, manifest)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return read_manifest(out)


def _taught_before(out: Path) -> dict[int, Taught]:
    """What an existing folder was taught (kept through an `--update`)."""
    path = out / "taught.json"
    if not path.exists():
        return {}
    try:
        return from_json(json.loads(path.read_text(encoding="utf-8")))
    except (OSError, ValueError, KeyError, TypeError, UnicodeDecodeError) as exc:
        raise HistoryError(f"{path}: damaged ({exc}); build the folder again without --update") from None


def _index(folder: Path, source: Source, policy: Policy, previous: Path | None, progress: Progress) -> FolderIndex:
    """The folder's index: a new one, or a copy of the previous folder's brought up to date."""
    progress("indexing", 0, len(source.past))
    if previous is None:
        index = FolderIndex.create(folder / INDEX, policy.meta.repo, source.past, english_stop_words())
    else:
        try:
            shutil.copyfile(previous / INDEX, folder / INDEX)
            for name in ARRAYS:
                shutil.copyfile(previous / f"vectors_{name}.npy", folder / f"vectors_{name}.npy")
        except OSError as exc:
            raise HistoryError(f"{previous}: cannot read the index to update ({exc.strerror or exc})") from None
        index = open_index(folder, writable=True)
        index.update(source.past)
    progress("indexing", len(source.past), len(source.past))
    return index
