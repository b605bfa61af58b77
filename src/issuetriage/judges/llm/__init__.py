"""The LLM judge: Claude (API or Bedrock) or any OpenAI-compatible model, behind the same guard.

`make_judge` builds the judge `issuetriage eval --judge llm` and the engine use, from a config
(`load_config`: the profile's llm.toml and the environment) and the offline judge that
`judges.factory.get_judge` built for the same profile object.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Literal

from issuetriage.evidence.history import History
from issuetriage.judges.base import Judge
from issuetriage.judges.llm.cache import AnswerCache, Recorder
from issuetriage.judges.llm.config import LLMConfig, default_cache_dir, load_config
from issuetriage.judges.llm.judge import HybridJudge, LivePrecision, LLMJudge
from issuetriage.judges.llm.prompt import DEFAULT_STYLE, PROMPT_VERSION
from issuetriage.judges.llm.providers import make_provider
from issuetriage.policy import Policy

__all__ = ["PROMPT_VERSION", "LLMConfig", "load_config", "make_judge"]


def make_judge(config: LLMConfig, policy: Policy, offline: Judge, *, mode: Literal["llm", "hybrid"] = "llm",
               cache: bool = True, history: History | None = None, style: str = DEFAULT_STYLE,
               live_precision: Mapping[str, LivePrecision] | None = None) -> Judge:
    """The LLM judge (every issue asked) or the hybrid judge (only unsure ones) for `policy`'s
    repository. `offline` (built by `judges.factory` for the same profile object) supplies the
    candidates, the fallback and the hybrid's routing; nothing here loads a profile.
    `live_precision`: what humans did with the bot's labels, for the hybrid's routing."""

    repo = policy.meta.repo
    if history is None and config.history is not None:
        from issuetriage.judges.learned.corpus import load_history  # lazy: the learned package loads scipy

        history = load_history(config.history, policy)[0]
    replaying = config.provider == "replay"  # recorded answers are never cached as bought ones
    store = AnswerCache(default_cache_dir(config)) if cache and not replaying else None
    provider = make_provider(config, repo)
    recorder = Recorder.shared(config.record, provider.model, repo, policy.name) if config.record and not replaying else None
    llm = LLMJudge(provider, config.cost, store, offline, history, style, recorder=recorder)
    return HybridJudge(offline, llm, config.hybrid_threshold, live_precision) if mode == "hybrid" else llm
