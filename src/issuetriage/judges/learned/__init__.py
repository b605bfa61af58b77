"""Learning from a repository's labelled history: corpus, features, training, model io, judge."""

from __future__ import annotations

from pathlib import Path

from issuetriage.judges.heuristic import HeuristicJudge
from issuetriage.judges.learned.judge import LearnedJudge
from issuetriage.judges.learned.model import LearnedModel, load_model, save_model


def load_judge(model_dir: str | Path, profile: str | None = None) -> LearnedJudge:
    """The learned judge for a model folder, on top of the offline heuristic judge."""

    return LearnedJudge(load_model(model_dir, profile=profile), base=HeuristicJudge())


__all__ = ["LearnedJudge", "LearnedModel", "load_judge", "load_model", "save_model"]
