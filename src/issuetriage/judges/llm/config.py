"""LLM configuration: an optional `llm.toml` in the profile folder, overridden by environment
variables. Keys are never read from files, only from the environment variable the config names."""

from __future__ import annotations

import os
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from issuetriage.errors import ConfigError, first_problem

ENV_PREFIX = "ISSUETRIAGE_LLM_"
DEFAULT_KEY_ENV = {"anthropic": "ANTHROPIC_API_KEY", "bedrock": "", "openai": "OPENAI_API_KEY",
                   "replay": ""}
DEFAULT_MODEL = {"anthropic": "claude-sonnet-4-6", "replay": "replay"}
# USD per million tokens (in, out), matched by substring of the model name, first match wins.
# Local models cost nothing; override with ISSUETRIAGE_LLM_PRICE_IN / _PRICE_OUT.
# These are list prices as last checked, an estimate for the audit log, not an invoice.
PRICES: tuple[tuple[str, float, float], ...] = (
    ("opus-4-0", 15.0, 75.0), ("opus-4-1", 15.0, 75.0), ("opus", 5.0, 25.0), ("sonnet", 3.0, 15.0),
    ("haiku-3", 0.8, 4.0), ("haiku", 1.0, 5.0),
)


class LLMConfig(BaseModel):
    """Which model answers, where it lives, and what the hybrid judge hands it."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    provider: Literal["anthropic", "bedrock", "openai", "replay"] = "anthropic"
    model: str = Field(min_length=1)
    base_url: str | None = None
    api_key_env: str | None = None
    region: str | None = None
    max_tokens: int = Field(1024, ge=64)
    timeout: float = Field(60.0, gt=0)
    max_retries: int = Field(2, ge=0, le=10)
    hybrid_threshold: float = Field(0.75, ge=0.0, le=1.0)
    cache_dir: Path | None = None
    price_in: float | None = Field(None, ge=0)
    price_out: float | None = Field(None, ge=0)
    answers: Path | None = None  # the replay provider's recorded answers (docs/llm.md)
    history: Path | None = None  # labelled issues of the profile's repo, for examples (JSONL)
    record: Path | None = None  # write every validated answer here, as replayable JSONL

    def api_key(self, env: Mapping[str, str] | None = None) -> str | None:
        """The key from the environment variable this config names (None for Bedrock's AWS chain)."""
        env = os.environ if env is None else env
        name = self.api_key_env if self.api_key_env is not None else DEFAULT_KEY_ENV[self.provider]
        if not name:
            return None
        key = env.get(name)
        if not key and self.provider == "anthropic":
            raise ConfigError(f"the anthropic provider needs an API key in ${name}")
        return key or None

    def cost(self, tokens_in: int, tokens_out: int) -> float:
        """Dollar cost of one call, from the configured or the known price per million tokens."""
        known = next(((i, o) for part, i, o in PRICES if part in self.model.lower()), (0.0, 0.0))
        p_in = known[0] if self.price_in is None else self.price_in
        p_out = known[1] if self.price_out is None else self.price_out
        return round((tokens_in * p_in + tokens_out * p_out) / 1_000_000, 6)


_ENV_FIELDS = ("provider", "model", "base_url", "api_key_env", "region", "max_tokens", "timeout",
               "max_retries", "hybrid_threshold", "cache_dir", "price_in", "price_out", "answers",
               "history", "record")


def _profile_settings(profile_root: Path | None) -> dict[str, object]:
    if profile_root is None or not (profile_root / "llm.toml").is_file():
        return {}
    path = profile_root / "llm.toml"
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: not valid TOML: {exc}") from None
    if any("key" in k and k != "api_key_env" for k in data):
        raise ConfigError(f"{path}: keys belong in the environment, name the variable in api_key_env")
    return data


def load_config(profile_root: Path | None = None,
                env: Mapping[str, str] | None = None) -> LLMConfig | None:
    """The configured model, or None when neither the profile nor the environment names one."""
    env = os.environ if env is None else env
    data = _profile_settings(profile_root)
    for name in _ENV_FIELDS:
        value = env.get(ENV_PREFIX + name.upper())
        if value:
            data[name] = value
    if not data:
        return None
    provider = str(data.get("provider", "anthropic"))
    if "model" not in data and provider in DEFAULT_MODEL:
        data["model"] = DEFAULT_MODEL[provider]
    try:
        return LLMConfig.model_validate(data)
    except ValidationError as exc:
        problem = first_problem(exc)
        where = "llm.toml or $" + ENV_PREFIX + problem.split(":", 1)[0].upper()
        raise ConfigError(f"LLM config ({where}): {problem}") from None


def default_cache_dir(config: LLMConfig, env: Mapping[str, str] | None = None) -> Path:
    """Where answers are cached: the configured folder, else $XDG_CACHE_HOME/issuetriage/llm."""
    env = os.environ if env is None else env
    if config.cache_dir is not None:
        return config.cache_dir
    base = Path(env.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return base / "issuetriage" / "llm"
