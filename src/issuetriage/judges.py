"""Judge factory: the CLI and evaluation name a judge; this builds it (heavy ones lazily)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from issuetriage.errors import UserError
from issuetriage.heuristic import HeuristicJudge
from issuetriage.judgment import Judge

JUDGES = ("heuristic", "learned", "llm", "hybrid")


def get_judge(name: str = "heuristic", model_dir: str | Path | None = None, **options: Any) -> Judge:
    """`heuristic` (offline rules), `learned` (needs model_dir), `llm` or `hybrid` (needs a model config)."""
    if name == "heuristic" and model_dir is not None:
        name = "learned"
    if name == "heuristic":
        return HeuristicJudge()
    if name == "learned":
        if model_dir is None:
            raise UserError("the learned judge needs --model MODEL_DIR (make one with `issuetriage train`)")
        try:
            from issuetriage.learn import load_judge
        except ImportError as exc:
            raise UserError(f"the learned judge is unavailable: {exc}") from None
        return load_judge(Path(model_dir))
    if name in ("llm", "hybrid"):
        try:
            from issuetriage.llm import make_judge
        except ImportError as exc:
            raise UserError(f"the LLM judge is unavailable: {exc}") from None
        return make_judge(mode=name, model_dir=model_dir, **options)
    raise UserError(f"unknown judge {name!r} (choose from {', '.join(JUDGES)})")
