"""The learned model: arrays and JSON only, saved and loaded without pickle.

On disk a model is a folder: `manifest.json` (format, issuetriage version, profile, label set,
training corpus hash, thresholds, metrics, feature config), `vocabulary.json` (token list in
column order) and `weights.npz` (idf, coefficients, intercepts, calibration), read with
`numpy.load(..., allow_pickle=False)`.
"""

from __future__ import annotations

import json
import math
import os
import shutil
import tempfile
import zipfile
from collections.abc import Mapping
from dataclasses import dataclass, field
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

import numpy as np

from issuetriage.errors import ModelError
from issuetriage.evidence.signals import Signals
from issuetriage.judges.learned.features import FeatureConfig, Vocabulary, issue_tokens

try:
    __version__ = version("issuetriage")
except PackageNotFoundError:  # running from a source tree without an install
    __version__ = "0+unknown"

FORMAT = "issuetriage-learned-model"
FORMAT_VERSION = 1
ARRAYS = ("idf", "coef", "intercept", "calibration", "thresholds")


@dataclass(frozen=True)
class LearnedModel:
    """Linear one-vs-rest label scorer with calibrated probabilities and per-label thresholds.

    `calibration[j] = (a, b, c)` maps the raw score s and the prior judge's score h for label j
    to a probability sigmoid(a*s + b*h + c). Labels outside `labels` are only passed through from
    the prior judge when its score reaches `prior_threshold`. The prior judge's "usage question"
    answers are only trusted for closing at `question_threshold` or above. A label the prior
    judge is confident of is kept (below the model's own labels) unless its probability is under
    `prior_veto` (1.01: the prior's labels are never kept on their own).
    """

    profile: str
    labels: tuple[str, ...]
    features: FeatureConfig
    vocabulary: Vocabulary
    coef: np.ndarray
    intercept: np.ndarray
    calibration: np.ndarray
    thresholds: np.ndarray
    prior_threshold: float
    prior_judge: str | None
    corpus_sha256: str
    question_threshold: float = 1.01
    prior_veto: float = 1.01
    metrics: Mapping[str, Any] = field(default_factory=dict)
    training: Mapping[str, Any] = field(default_factory=dict)
    _label_index: dict[str, int] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_label_index", {lab: j for j, lab in enumerate(self.labels)})

    def raw_scores(self, signals: Signals) -> np.ndarray:
        """Linear scores of one issue for every model label."""
        cols, values = self.vocabulary.vector(issue_tokens(signals, self.features))
        return values @ self.coef[cols] + self.intercept

    def calibrate(self, raw: np.ndarray, prior: np.ndarray) -> np.ndarray:
        """Calibrated probabilities from raw scores and prior scores (same shape)."""
        a, b, c = self.calibration[:, 0], self.calibration[:, 1], self.calibration[:, 2]
        return 1.0 / (1.0 + np.exp(-(a * raw + b * prior + c)))

    def probabilities(self, signals: Signals, prior: Mapping[str, float]) -> np.ndarray:
        """Calibrated probability of every model label for one issue."""
        h = np.zeros(len(self.labels), dtype=np.float32)
        for label, score in prior.items():
            j = self._label_index.get(label)
            if j is not None:
                h[j] = score
        return self.calibrate(self.raw_scores(signals), h)

    def index(self, label: str) -> int | None:
        """The label's column, None when the model has no classifier for it."""
        return self._label_index.get(label)

    def threshold(self, label: str) -> float:
        """The confidence this label needs (prior-only labels use `prior_threshold`)."""
        try:
            return float(self.thresholds[self.labels.index(label)])
        except ValueError:
            return self.prior_threshold


def _manifest(model: LearnedModel) -> dict[str, Any]:
    return {
        "format": FORMAT,
        "format_version": FORMAT_VERSION,
        "issuetriage_version": __version__,
        "profile": model.profile,
        "labels": list(model.labels),
        "thresholds": {lab: round(float(t), 6) for lab, t in zip(model.labels, model.thresholds)},
        "prior_threshold": model.prior_threshold if math.isfinite(model.prior_threshold) else None,
        "prior_judge": model.prior_judge,
        "question_threshold": model.question_threshold,
        "prior_veto": model.prior_veto,
        "corpus_sha256": model.corpus_sha256,
        "features": model.features.to_json(),
        "metrics": dict(model.metrics),
        "training": dict(model.training),
        "files": {"vocabulary": "vocabulary.json", "weights": "weights.npz"},
    }


def check_model_out(out: Path) -> None:
    """Refuse an `--out` that saving would destroy: a file, or a non-empty folder without a manifest."""
    if out.exists() and not (out.is_dir() and ((out / "manifest.json").is_file() or not any(out.iterdir()))):
        raise ModelError(f"{out}: exists and is not a model folder; give a new or model folder to --out")


def save_model(model: LearnedModel, out_dir: str | Path) -> Path:
    """Write the model folder atomically: a half-written model is never left behind."""
    out = Path(out_dir)
    check_model_out(out)
    staging = stage_beside(out, ModelError, "model folder")
    arrays = {name: np.asarray(getattr(model, name) if name != "idf" else model.vocabulary.idf)
              for name in ARRAYS}
    np.savez_compressed(staging / "weights.npz", **arrays)  # type: ignore[arg-type]
    (staging / "vocabulary.json").write_text(json.dumps(list(model.vocabulary.tokens)),
                                             encoding="utf-8")
    (staging / "manifest.json").write_text(json.dumps(_manifest(model), indent=2) + "\n",
                                           encoding="utf-8")
    return move_into_place(staging, out)


def stage_beside(out: Path, error: type[Exception], what: str) -> Path:
    """An empty temporary folder beside `out` (same file system, so the final rename is atomic)."""
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(prefix=f".{out.name}.", dir=out.parent))
    except OSError as exc:
        raise error(f"{out}: cannot create the {what} ({exc.strerror or exc})") from None
    staging.chmod(0o755)
    return staging


def move_into_place(staging: Path, out: Path) -> Path:
    """Rename a complete staged folder to `out` (beside it, same file system); an existing `out`
    is moved aside first and removed only once the new one is in place."""
    if out.exists():
        backup = Path(tempfile.mkdtemp(prefix=f".{out.name}.old.", dir=out.parent))
        os.replace(out, backup / out.name)
        os.replace(staging, out)
        shutil.rmtree(backup)
    else:
        os.replace(staging, out)
    return out


def _read_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ModelError(f"{path}: missing (not a model folder?)") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise ModelError(f"{path}: not valid JSON: {exc}") from None


def _read_arrays(path: Path) -> dict[str, np.ndarray]:
    try:
        with np.load(path, allow_pickle=False) as npz:
            missing = [name for name in ARRAYS if name not in npz.files]
            if missing:
                raise ModelError(f"{path}: missing arrays {missing}")
            return {name: npz[name] for name in ARRAYS}
    except FileNotFoundError:
        raise ModelError(f"{path}: missing (not a model folder?)") from None
    except ValueError as exc:  # object arrays need pickle, which we refuse
        raise ModelError(f"{path}: refused to load: {exc}") from None
    except (OSError, zipfile.BadZipFile) as exc:
        raise ModelError(f"{path}: not a valid weights file: {exc}") from None


def _check_manifest(manifest: Any, path: Path, profile: str | None) -> None:
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
        raise ModelError(f"{path}: not an issuetriage learned model")
    if manifest.get("format_version") != FORMAT_VERSION:
        raise ModelError(f"{path}: model format version {manifest.get('format_version')!r}, this "
                         f"issuetriage {__version__} reads version {FORMAT_VERSION}; retrain it")
    if manifest.get("issuetriage_version") != __version__:
        raise ModelError(f"{path}: model made by issuetriage {manifest.get('issuetriage_version')}"
                         f", this is {__version__}; retrain it with `issuetriage train`")
    if profile is not None and manifest.get("profile") != profile:
        raise ModelError(f"{path}: model made for profile {manifest.get('profile')!r}, "
                         f"not {profile!r}; train one with --profile {profile}")


def load_model(model_dir: str | Path, profile: str | None = None) -> LearnedModel:
    """Read a model folder; a model for another profile or version is a ModelError."""
    root = Path(model_dir)
    if not root.is_dir():
        raise ModelError(f"{root}: no model folder here (train one with `issuetriage train`)")
    manifest = _read_json(root / "manifest.json")
    _check_manifest(manifest, root / "manifest.json", profile)
    tokens = _read_json(root / "vocabulary.json")
    arrays = _read_arrays(root / "weights.npz")
    labels = tuple(manifest["labels"])
    n_labels, n_features = len(labels), len(tokens)
    shapes = {"idf": (n_features,), "coef": (n_features, n_labels), "intercept": (n_labels,),
              "calibration": (n_labels, 3), "thresholds": (n_labels,)}
    for name, shape in shapes.items():
        if arrays[name].shape != shape:
            raise ModelError(f"{root}: {name} has shape {arrays[name].shape}, expected {shape}")
    prior_threshold = manifest.get("prior_threshold")
    return LearnedModel(
        profile=manifest["profile"],
        labels=labels,
        features=FeatureConfig.from_json(manifest["features"]),
        vocabulary=Vocabulary(tuple(tokens), arrays["idf"].astype(np.float32)),
        coef=np.ascontiguousarray(arrays["coef"], dtype=np.float32),
        intercept=arrays["intercept"].astype(np.float32),
        calibration=arrays["calibration"].astype(np.float64),
        thresholds=arrays["thresholds"].astype(np.float64),
        prior_threshold=math.inf if prior_threshold is None else float(prior_threshold),
        prior_judge=manifest.get("prior_judge"),
        question_threshold=float(manifest.get("question_threshold", 1.01)),
        prior_veto=float(manifest.get("prior_veto", 1.01)),
        corpus_sha256=manifest["corpus_sha256"],
        metrics=manifest.get("metrics", {}),
        training=manifest.get("training", {}),
    )
