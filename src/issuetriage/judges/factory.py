"""Judge factory: the CLI and evaluation name a judge; this builds it (heavy ones lazily)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from issuetriage.errors import UserError
from issuetriage.judges.base import Judge
from issuetriage.judges.heuristic import HeuristicJudge

if TYPE_CHECKING:
    from issuetriage.policy import Policy

JUDGES = ("auto", "heuristic", "learned", "llm", "hybrid")


def get_judge(name: str = "auto", model_dir: str | Path | None = None, *, profile: str | Policy | None = None,
              **options: Any) -> Judge:
    """Build a judge by name, for `profile` (a profile's name or folder, or a loaded Policy: a
    repository's own profile is built from its object, never looked up by its name).

    `auto`: the hybrid judge when an LLM is configured (environment or the profile's llm.toml),
    over the learned judge when `model_dir` is given, else the offline heuristic. `learned` checks
    the model was made for the profile.
    """
    from issuetriage.policy import load_profile

    policy = load_profile(profile) if isinstance(profile, str) else profile
    if name == "auto":
        from issuetriage.judges.llm import load_config

        offline = "learned" if model_dir is not None else "heuristic"
        name = "hybrid" if load_config(policy.root if policy else None) is not None else offline
    if name == "heuristic" and model_dir is not None:
        name = "learned"
    if name == "heuristic":
        return HeuristicJudge()
    if name == "learned":
        if model_dir is None:
            raise UserError("the learned judge needs --model MODEL_DIR (make one with `issuetriage train`)")
        from issuetriage.judges.learned import load_judge

        return load_judge(Path(model_dir), profile=(policy or load_profile("pytorch")).name)
    if name in ("llm", "hybrid"):
        from issuetriage.judges.llm import make_judge

        options.setdefault("repo", policy.meta.repo if policy else None)
        return make_judge(mode=name, model_dir=model_dir,  # type: ignore[arg-type]  # name is llm or hybrid
                          profile_root=policy.root if policy else None, **options)
    raise UserError(f"unknown judge {name!r} (choose from {', '.join(JUDGES)})")
