"""Helpers for the LLM tests: judgments, answers and providers on the stand-in (issues: `builders.svd_issue`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pytest

from issuetriage.evidence.signals import Signals
from issuetriage.judges.base import Judgment, Kind, LabelScore
from issuetriage.judges.llm.config import LLMConfig
from issuetriage.judges.llm.providers import Provider, make_provider
from issuetriage.models import Issue
from issuetriage.policy import Policy

PROVIDERS = ("anthropic", "bedrock", "bedrock-sigv4", "openai")


def offline_judgment(kind: Kind = Kind.BUG, confidence: float = 0.4,
                     labels: tuple[tuple[str, float], ...] = (("module: linear algebra", 0.45),),
                     **extra: Any) -> Judgment:
    return Judgment(judge="heuristic", kind=kind, kind_confidence=confidence,
                    labels=tuple(LabelScore(name=n, confidence=c, reason="keyword") for n, c in labels),
                    reasoning="offline", **extra)


@dataclass
class FixedJudge:
    """An offline judge that always answers the same and counts its calls."""

    judgment: Judgment = field(default_factory=offline_judgment)
    name: str = "heuristic"
    calls: int = 0

    def judge(self, issue: Issue, signals: Signals, policy: Policy) -> Judgment:
        self.calls += 1
        return self.judgment


def answer(**overrides: Any) -> dict[str, Any]:
    """A valid form, as a model would submit it."""
    base: dict[str, Any] = {
        "kind": "bug", "kind_confidence": 0.9,
        "labels": [{"name": "module: linear algebra", "confidence": 0.85,
                    "reason": "svd is a linear algebra routine"}],
        "templates": [], "transfer_repo": None, "missing_repro": None,
        "release_risk": False, "high_priority": False,
        "reasoning": "The report shows torch.linalg.svd failing on CUDA with a cusolver error. "
                     "It is a defect in a linear algebra routine.",
    }
    base.update(overrides)
    return base


def provider_for(kind: str, url: str, monkeypatch: pytest.MonkeyPatch) -> Provider:
    """A real SDK client pointed at the stand-in, for one wire format."""
    if kind == "bedrock":
        monkeypatch.setenv("AWS_BEARER_TOKEN_BEDROCK", "dummy-bedrock-token")
        monkeypatch.delenv("AWS_ACCESS_KEY_ID")
        monkeypatch.delenv("AWS_SECRET_ACCESS_KEY")
    if kind == "bedrock-sigv4":
        pytest.importorskip("botocore")
    name = {"bedrock-sigv4": "bedrock"}.get(kind, kind)
    model = {"anthropic": "claude-sonnet-4-6", "openai": "qwen2.5-7b-instruct"}.get(
        name, "anthropic.claude-sonnet-4-6-v1:0")
    base = f"{url}/v1" if name == "openai" else url
    config = LLMConfig(provider=name, model=model, base_url=base, max_retries=0, timeout=10)
    return make_provider(config)

# Fixtures (imported by the test modules: a conftest.py here would shadow tests/conftest.py).


