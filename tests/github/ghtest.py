"""Helpers for the GitHub tests (the fixtures are in conftest.py)."""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path

import pytest
from standin import StandIn

from issuetriage.github.client import GitHubClient

REPO = "pytorch/pytorch"
SAMPLES = Path(__file__).resolve().parents[2] / "src" / "issuetriage" / "samples" / "demo_issues.jsonl"


def demo_issues() -> dict[int, dict]:
    """The engine's demo issues (written for this project) by number."""
    return {d["number"]: d for d in map(json.loads, SAMPLES.read_text().splitlines()) if d}


def seed(standin: StandIn, number: int, repo: str = REPO, **extra: object) -> None:
    """Put one demo issue into the stand-in as `repo#number`."""
    data = demo_issues()[number]
    standin.state.add_issue(repo, number, data["title"], data.get("body") or "",
                            labels=tuple(extra.pop("labels", data.get("labels") or ())), **extra)  # type: ignore[arg-type]


@cache
def engine_plans() -> dict[int, object]:
    """What the engine decides today for each demo issue (computed, so tests follow the engine)."""
    from issuetriage.engine.pipeline import triage
    from issuetriage.policy import load_profile
    from issuetriage.records import issue_from_record
    policy = load_profile("pytorch")
    return {n: triage(issue_from_record({**d, "repo": REPO}, "demo"), policy) for n, d in demo_issues().items()}


def number_for(decision: str, comment: bool | None = None) -> int:
    """The first demo issue the engine gives `decision` (with or without a comment when asked);
    skips the test when none does."""
    for number, plan in sorted(engine_plans().items()):
        if plan.decision.value == decision and (  # type: ignore[attr-defined]
                comment is None or bool(plan.templates) == comment):  # type: ignore[attr-defined]
            return number
    pytest.skip(f"no demo issue gets {decision} from today's engine")
    raise AssertionError  # unreachable


def live(client: GitHubClient, number: int, policy, judge=None, apply: bool = True, repo: str = REPO,
         store=None, keep_subscription: bool = False):
    """One run of the one flow on GitHub (what `issuetriage triage OWNER/REPO#N` does)."""
    from issuetriage.act.flow import act, engine
    from issuetriage.act.hold import Mode
    from issuetriage.github.apply import GitHubApplier

    return act(GitHubApplier(client, keep_subscription), repo, number, policy, engine(judge),
               Mode(apply=apply), audit=store)


def apply_plan(client: GitHubClient, plan, issue, policy, keep_subscription: bool = False):
    """Apply a plan decided elsewhere through the one flow."""
    from issuetriage.act.flow import act, given
    from issuetriage.act.hold import Mode
    from issuetriage.github.apply import GitHubApplier

    return act(GitHubApplier(client, keep_subscription), issue.repo, issue.number, policy,
               given(plan), Mode(apply=True), respect_marker=False)


@cache
def app_key() -> tuple[str, object]:
    """A GitHub App private key (PEM) and its public key, made once per test run."""
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import rsa
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                            serialization.NoEncryption()).decode()
    return pem, key.public_key()


def app_env(standin: StandIn, clock, app_id: str = "24680") -> dict[str, str]:
    """Environment for the App mode against the stand-in, which checks the App's JWT and dates
    tokens by the test's clock. githubkit caches an App's JWT per app id for minutes, so the id
    is not one other tests sign with other keys."""
    import jwt
    pem, public = app_key()
    standin.jwt_check = lambda token: jwt.decode(token, public, algorithms=["RS256"])["iss"] == app_id
    standin.now = clock.now
    return {"GITHUB_API_URL": standin.url, "GITHUB_GRAPHQL_URL": f"{standin.url}/graphql",
            "GITHUB_APP_ID": app_id, "GITHUB_APP_PRIVATE_KEY": pem}
