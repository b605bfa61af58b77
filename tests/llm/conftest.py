"""Fixtures of the LLM tests: the loopback model stand-in (it shadows the GitHub one here) and
dummy provider credentials."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from llm_standin import Server, StandIn


@pytest.fixture
def standin() -> Iterator[StandIn]:
    with Server() as state:
        yield state


@pytest.fixture
def dummy_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-dummy-not-a-key")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-dummy-not-a-key")
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "AKIDUMMYDUMMYDUMMY")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "dummy-secret")
    monkeypatch.setenv("AWS_REGION", "us-east-1")
    monkeypatch.delenv("AWS_BEARER_TOKEN_BEDROCK", raising=False)
    monkeypatch.delenv("AWS_PROFILE", raising=False)
    monkeypatch.delenv("AWS_SESSION_TOKEN", raising=False)
