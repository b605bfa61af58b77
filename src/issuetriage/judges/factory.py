"""Judge factory: the CLI and evaluation name a judge; this builds it (heavy ones lazily)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from issuetriage.errors import UserError
from issuetriage.judges.base import Judge
from issuetriage.judges.heuristic import HeuristicJudge

JUDGES = ("auto", "heuristic", "learned", "llm", "hybrid")


def _llm_configured(profile: str | None) -> bool:
    """True when an LLM is configured (environment or the profile's llm.toml)."""
    from issuetriage.judges.llm import load_config
    from issuetriage.policy import load_profile

    return load_config(load_profile(profile).root if profile else None) is not None


def get_judge(name: str = "auto", model_dir: str | Path | None = None, *, profile: str | None = None,
              **options: Any) -> Judge:
    """Build a judge by name.

    `auto`: the hybrid judge when an LLM is configured, over the learned judge when `model_dir`
    is given, else the offline heuristic. `learned` checks the model was made for `profile`.
    """
    if name == "auto":
        offline = "learned" if model_dir is not None else "heuristic"
        name = "hybrid" if _llm_configured(profile) else offline
    if name == "heuristic" and model_dir is not None:
        name = "learned"
    if name == "heuristic":
        return HeuristicJudge()
    if name == "learned":
        if model_dir is None:
            raise UserError("the learned judge needs --model MODEL_DIR (make one with `issuetriage train`)")
        from issuetriage.judges.learned import load_judge
        from issuetriage.policy import load_profile

        return load_judge(Path(model_dir), profile=load_profile(profile or "pytorch").name)
    if name in ("llm", "hybrid"):
        from issuetriage.judges.llm import make_judge
        from issuetriage.policy import load_profile

        policy = load_profile(profile) if profile else None
        options.setdefault("repo", policy.meta.repo if policy else None)
        return make_judge(mode=name, model_dir=model_dir,  # type: ignore[arg-type]  # name is llm or hybrid
                          profile_root=policy.root if policy else None, **options)
    raise UserError(f"unknown judge {name!r} (choose from {', '.join(JUDGES)})")
