"""A built history folder: everything history-based judging needs, written once, loaded fast.

    manifest.json      format, schema version, profile, repository, source digest, counts,
                       settings, build time, and every file's size (small files: their sha256)
    index.sqlite3      past issues, their SQLite FTS5 index, the frozen word statistics
    text.json          the text model's labels and vocabulary (token list in column order)
    text.npz           its idf and intercepts
    text_coef.npy      its coefficients (features × labels), memory-mapped when loaded
    stack.json         the stack's cut and label shares
    stack.npz          the stack's standardisation and logistic weights
    taught.json        labels past issues were taught beside their maintainers' labels (a model's
                       recorded answers, corrections), with provenance and weight (when any)

Arrays are read with `allow_pickle=False`; nothing is unpickled. A folder built for another
profile, repository or schema version, or one that is incomplete or damaged, is a one-line
`HistoryError`. Writing goes to a temporary folder beside the target, renamed into place.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import zipfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from issuetriage.errors import ModelError
from issuetriage.evidence.history import History, Past
from issuetriage.evidence.history_index import ARRAYS, FolderIndex
from issuetriage.judges import taught
from issuetriage.judges.learned.corpus import content_labels
from issuetriage.judges.learned.features import Vocabulary
from issuetriage.judges.learned.model import move_into_place, stage_beside
from issuetriage.judges.neighbours import Stack, TextModel
from issuetriage.policy import Policy

FORMAT = "issuetriage-history"
SCHEMA_VERSION = 2  # bump when the folder's files or what they mean change
MANIFEST = "manifest.json"
INDEX = "index.sqlite3"
HASHED = ("text.json", "text.npz", "stack.json", "stack.npz", "taught.json")  # small enough to check at every load


class HistoryError(ModelError):
    """A history folder that is missing, damaged, or built for another profile, repository or
    schema version."""


@dataclass(frozen=True)
class Built:
    """A loaded history folder: the searchable history, the fitted stack, the manifest. A
    labelled corpus file read at start has no stack yet but its labelled issues (`past`), to be
    fitted for the judge it stacks."""

    history: History
    stack: Stack | None
    manifest: dict[str, Any]
    path: Path
    past: Past | None = None


def is_history_folder(path: Path) -> bool:
    return (path / MANIFEST).is_file()


def check_out(out: Path) -> None:
    """Refuse an `--out` that writing would destroy: a file, or a non-empty folder that is not a
    history folder."""
    if out.exists() and not (out.is_dir() and (is_history_folder(out) or not any(out.iterdir()))):
        raise HistoryError(f"{out}: exists and is not a history folder; give a new or history folder to --out")


def staging(out: Path) -> Path:
    """An empty temporary folder beside `out`, renamed into place by `finish`."""
    return stage_beside(out, HistoryError, "history folder")


def write_parts(folder: Path, stack: Stack | None) -> None:
    """The learned parts as JSON and arrays (no pickle)."""
    if stack is None:
        return
    text = stack.text
    (folder / "text.json").write_text(json.dumps({"labels": list(text.labels),
                                                  "tokens": list(text.vocab.tokens)}), encoding="utf-8")
    np.savez(folder / "text.npz", idf=text.vocab.idf, intercept=text.intercept)
    np.save(folder / "text_coef.npy", np.ascontiguousarray(text.coef, dtype=np.float32))
    (folder / "stack.json").write_text(json.dumps({"cut": stack.cut, "share": stack.share}, sort_keys=True),
                                       encoding="utf-8")
    np.savez(folder / "stack.npz", mean=stack.mean, scale=stack.scale, weights=stack.weights,
             bias=np.array([stack.bias]))
    if stack.taught:
        (folder / "taught.json").write_text(json.dumps(taught.to_json(stack.taught), sort_keys=True),
                                            encoding="utf-8")


def finish(folder: Path, out: Path, manifest: dict[str, Any]) -> Path:
    """Record every file's size (and the small ones' digests) in the manifest, then move the
    staged folder into place (an existing one is replaced only once the new one is complete)."""
    files = {}
    for path in sorted(folder.iterdir()):
        entry: dict[str, Any] = {"bytes": path.stat().st_size}
        if path.name in HASHED:
            entry["sha256"] = hashlib.sha256(path.read_bytes()).hexdigest()
        files[path.name] = entry
    manifest = {"format": FORMAT, "schema_version": SCHEMA_VERSION, **manifest, "files": files}
    (folder / MANIFEST).write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
    return move_into_place(folder, out)


def read_manifest(root: Path) -> dict[str, Any]:
    """The manifest of a history folder, checked for format and schema version."""
    try:
        manifest = json.loads((root / MANIFEST).read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise HistoryError(f"{root}: not a history folder (no {MANIFEST}; build one with "
                           "`issuetriage history build`)") from None
    except (OSError, json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise HistoryError(f"{root}/{MANIFEST}: damaged ({exc}); build the folder again") from None
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
        raise HistoryError(f"{root}: not an issuetriage history folder")
    if manifest.get("schema_version") != SCHEMA_VERSION:
        raise HistoryError(f"{root}: history schema version {manifest.get('schema_version')!r}, this "
                           f"issuetriage reads version {SCHEMA_VERSION}; build it again")
    return manifest


def check_for(manifest: dict[str, Any], root: Path, policy: Policy) -> None:
    if manifest.get("repo") != policy.meta.repo:
        raise HistoryError(f"{root}: history built for repository {manifest.get('repo')!r}, not "
                           f"{policy.meta.repo!r} (profile {policy.name})")
    if manifest.get("profile") != policy.name:
        raise HistoryError(f"{root}: history built for profile {manifest.get('profile')!r}, not "
                           f"{policy.name!r}; build one with --profile {policy.name}")


def _check_files(manifest: dict[str, Any], root: Path) -> None:
    files = manifest.get("files")
    if not isinstance(files, dict) or not {INDEX, *(f"vectors_{a}.npy" for a in ARRAYS)} <= set(files):
        raise HistoryError(f"{root}/{MANIFEST}: lists no files; build the folder again")
    for name, entry in files.items():
        path = root / Path(str(name)).name
        try:
            size = path.stat().st_size
        except OSError:
            raise HistoryError(f"{root}: {name} is missing; build the folder again") from None
        if not isinstance(entry, dict) or size != entry.get("bytes"):
            raise HistoryError(f"{root}: {name} is damaged (its size differs from the manifest's); "
                               "build the folder again")
        if "sha256" in entry and hashlib.sha256(path.read_bytes()).hexdigest() != entry["sha256"]:
            raise HistoryError(f"{root}: {name} is damaged (its digest differs from the manifest's); "
                               "build the folder again")


def open_index(folder: Path, writable: bool = False) -> FolderIndex:
    """The folder's index: its SQLite file (read-only unless `writable`) and its vectors
    (memory-mapped; loaded whole when `writable`, to be updated)."""
    path = folder / INDEX
    try:
        db = (sqlite3.connect(path, check_same_thread=False) if writable else
              sqlite3.connect(path.resolve().as_uri() + "?mode=ro", uri=True, check_same_thread=False))
        index = FolderIndex.open(db, folder)
        if writable:
            index.arrays = {name: np.array(array) for name, array in index.arrays.items()}
        if len(index.arrays["numbers"]) != index.issues or len(index.arrays["indptr"]) != index.issues + 1:
            raise ValueError(f"{index.issues} issues indexed, vectors for {len(index.arrays['numbers'])}")
        return index
    except (OSError, sqlite3.Error, KeyError, ValueError) as exc:
        raise HistoryError(f"{folder}: damaged index ({' '.join(str(exc).split())}); build the folder again") from None


def _arrays(path: Path, names: tuple[str, ...]) -> dict[str, np.ndarray]:
    try:
        with np.load(path, allow_pickle=False) as npz:
            return {name: npz[name] for name in names}
    except (OSError, ValueError, KeyError, zipfile.BadZipFile) as exc:
        raise HistoryError(f"{path}: damaged ({' '.join(str(exc).split())}); build the folder again") from None


def _json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise HistoryError(f"{path}: damaged ({exc}); build the folder again") from None


def read_stack(root: Path) -> Stack:
    """The learned parts (the coefficients memory-mapped: only the rows an issue uses are read)."""
    text_meta, stack_meta = _json(root / "text.json"), _json(root / "stack.json")
    text_arrays = _arrays(root / "text.npz", ("idf", "intercept"))
    stack_arrays = _arrays(root / "stack.npz", ("mean", "scale", "weights", "bias"))
    try:
        coef = np.load(root / "text_coef.npy", mmap_mode="r", allow_pickle=False)
        tokens, labels = tuple(text_meta["tokens"]), tuple(text_meta["labels"])
        shapes = {"coef": (coef.shape, (len(tokens), len(labels))),
                  "idf": (text_arrays["idf"].shape, (len(tokens),)),
                  "intercept": (text_arrays["intercept"].shape, (len(labels),))}
        cut, share = float(stack_meta["cut"]), {str(k): float(v) for k, v in stack_meta["share"].items()}
        evidence = taught.from_json(_json(root / "taught.json")) if (root / "taught.json").exists() else {}
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
        raise HistoryError(f"{root}: damaged learned parts ({' '.join(str(exc).split())}); "
                           "build the folder again") from None
    for name, (got, want) in shapes.items():
        if got != want:
            raise HistoryError(f"{root}: text model {name} has shape {got}, expected {want}; build the folder again")
    text = TextModel(Vocabulary(tokens, text_arrays["idf"].astype(np.float32)), labels, coef,
                     text_arrays["intercept"].astype(np.float64))
    return Stack(mean=stack_arrays["mean"], scale=stack_arrays["scale"], weights=stack_arrays["weights"],
                 bias=float(stack_arrays["bias"][0]), cut=cut, share=share, text=text, taught=evidence)


def load_folder(root: str | Path, policy: Policy,
                index: Callable[[FolderIndex], Any] | None = None) -> Built:
    """A built history folder for `policy`'s repository and profile; never refits anything.
    `index`, given the folder's index, may return another search index (the store's) to read
    candidates from, with the folder's frozen statistics."""
    root = Path(root)
    manifest = read_manifest(root)
    check_for(manifest, root, policy)
    _check_files(manifest, root)
    folder_index = open_index(root)
    search = index(folder_index) if index is not None else folder_index
    history = History(policy.meta.repo, folder_index, search, gold=_gold(policy))
    stack = read_stack(root) if manifest.get("stack") else None
    return Built(history, stack, manifest, root)


def _gold(policy: Policy) -> Callable[[Any], tuple[str, ...]]:
    allowed = content_labels(policy)
    return lambda labels: tuple(sorted(x for x in labels if x in allowed))
