"""The LLM judge: Claude (API or Bedrock) or any OpenAI-compatible model, behind the same guard.

`make_judge(config)` builds the judge `issuetriage eval --judge llm` and the engine use;
`configured_judge(policy)` is the hybrid judge when a model is configured, else None.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from issuetriage.evidence.history import History
from issuetriage.judges.base import Judge
from issuetriage.judges.llm.config import LLMConfig, default_cache_dir, load_config
from issuetriage.judges.llm.prompt import DEFAULT_STYLE, PROMPT_VERSION
from issuetriage.policy import Policy

__all__ = ["PROMPT_VERSION", "LLMConfig", "configured_judge", "load_config", "make_judge"]


def _offline_judge(model_dir: str | Path | None, profile_root: Path | None) -> Judge:
    """The heuristic judge, or the learned one of `model_dir`, checked against the profile the
    LLM judge serves (its folder; the default profile without one)."""
    from issuetriage.judges.factory import get_judge
    from issuetriage.policy import load_profile_dir

    profile = load_profile_dir(profile_root) if profile_root else None
    return get_judge("learned" if model_dir else "heuristic", model_dir, profile=profile)


def make_judge(config: LLMConfig | None = None, *, mode: Literal["llm", "hybrid"] = "llm",
               offline: Judge | None = None, cache: bool = True,
               model_dir: str | Path | None = None, profile_root: Path | None = None,
               repo: str | None = None, history: History | None = None,
               style: str = DEFAULT_STYLE) -> Judge:
    """The LLM judge (every issue asked) or the hybrid judge (only unsure ones), from a config
    (default: the profile's llm.toml and the environment). The offline judge (heuristic, or the
    learned one when `model_dir` is given) supplies candidates, the fallback and hybrid routing."""
    from issuetriage.errors import ConfigError
    from issuetriage.judges.llm.cache import AnswerCache, Recorder
    from issuetriage.judges.llm.judge import HybridJudge, LLMJudge
    from issuetriage.judges.llm.providers import make_provider

    config = config or load_config(profile_root)
    if config is None:
        raise ConfigError("no LLM configured: set ISSUETRIAGE_LLM_MODEL (and the provider's key)")
    offline = offline or _offline_judge(model_dir, profile_root)
    if history is None and config.history is not None:
        from issuetriage.evidence.history import load_history
        from issuetriage.policy import load_profile, load_profile_dir

        policy = load_profile_dir(profile_root) if profile_root else load_profile()
        history = load_history(config.history, policy)[0]
        repo = repo or policy.meta.repo
    replaying = config.provider == "replay"  # recorded answers are never cached as bought ones
    store = AnswerCache(default_cache_dir(config)) if cache and not replaying else None
    provider = make_provider(config, repo)
    recorder = Recorder.shared(config.record, provider.model, repo) if config.record and not replaying else None
    llm = LLMJudge(provider, config.cost, store, offline, history, style, recorder=recorder)
    return HybridJudge(offline, llm, config.hybrid_threshold) if mode == "hybrid" else llm


def configured_judge(policy: Policy) -> Judge | None:
    """The default judge when a model is configured (hybrid), else None (offline only)."""
    config = load_config(policy.root)
    return make_judge(config, mode="hybrid", profile_root=policy.root) if config else None
