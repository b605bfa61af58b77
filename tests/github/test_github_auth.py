"""Credentials from the environment, GitHub App installation tokens, and endpoints for GHES."""

from __future__ import annotations

import jwt
import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from ghtest import REPO

from issuetriage.errors import ConfigError, GitHubClientError
from issuetriage.github import reads
from issuetriage.github.auth import credentials_from_env, endpoints_from_env, redact
from issuetriage.github.client import GitHubClient


@pytest.mark.parametrize("env,rest,graphql", [
    ({}, "https://api.github.com", "https://api.github.com/graphql"),
    ({"GITHUB_API_URL": "https://ghe.example.com/api/v3"}, "https://ghe.example.com/api/v3",
     "https://ghe.example.com/api/graphql"),
    ({"GITHUB_API_URL": "https://ghe.example.com/api/v3/", "GITHUB_GRAPHQL_URL": "https://gql.example.com/q"},
     "https://ghe.example.com/api/v3", "https://gql.example.com/q"),
])
def test_endpoints_follow_the_actions_variables(env, rest, graphql):
    found = endpoints_from_env(env)
    assert (found.rest, found.graphql) == (rest, graphql)


def test_token_precedence_and_missing_credentials():
    assert credentials_from_env({"GITHUB_TOKEN": "a", "GH_TOKEN": "b"}).token == "a"
    assert credentials_from_env({"GH_TOKEN": "b"}).token == "b"
    with pytest.raises(ConfigError, match="no GitHub credentials"):
        credentials_from_env({})
    with pytest.raises(ConfigError, match="PRIVATE_KEY"):
        credentials_from_env({"GITHUB_APP_ID": "12"})
    assert "tok3n" not in repr(credentials_from_env({"GITHUB_TOKEN": "tok3n"}))


def test_redact_hides_known_secrets_and_token_shapes():
    text = "failed with ghp_" + "x" * 36 + " and sekrit"
    assert redact(text, ("sekrit",)) == "failed with *** and ***"


def test_github_app_mints_an_installation_token_once(standin, clock, tmp_path):
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                            serialization.NoEncryption()).decode()
    public = key.public_key()
    standin.jwt_check = lambda token: jwt.decode(token, public, algorithms=["RS256"])["iss"] == "12345"
    key_file = tmp_path / "app.pem"
    key_file.write_text(pem)
    standin.state.add_issue(REPO, 1, "t", "b")
    env = {"GITHUB_API_URL": standin.url, "GITHUB_GRAPHQL_URL": f"{standin.url}/graphql",
           "GITHUB_APP_ID": "12345", "GITHUB_APP_PRIVATE_KEY_PATH": str(key_file)}
    client = GitHubClient.from_env(env, repo=REPO, clock=clock)
    reads.issue_json(client, REPO, 1)
    reads.issue_json(client, REPO, 1)
    paths = [r.path for r in standin.log]
    assert paths == [f"/repos/{REPO}/installation", "/app/installations/4242/access_tokens",
                     f"/repos/{REPO}/issues/1", f"/repos/{REPO}/issues/1"]
    [token] = standin.minted
    assert standin.log[-1].headers["authorization"] == f"token {token}"


def test_app_with_a_wrong_key_is_a_clean_error(standin, clock):
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                            serialization.NoEncryption()).decode()
    standin.jwt_check = lambda token: False
    env = {"GITHUB_API_URL": standin.url, "GITHUB_APP_ID": "12345", "GITHUB_APP_PRIVATE_KEY": pem,
           "GITHUB_APP_INSTALLATION_ID": "4242"}
    standin.state.add_issue(REPO, 1, "t", "b")
    client = GitHubClient.from_env(env, repo=REPO, clock=clock)
    with pytest.raises(GitHubClientError, match="HTTP 401") as info:
        reads.issue_json(client, REPO, 1)
    assert clock.waits == []  # an auth failure is not retried
    assert "PRIVATE KEY" not in str(info.value) and pem[100:140] not in str(info.value)
