"""App mode end to end through the service (h19q's receiver, queue and jobs): a delivery acts as
its installation with the repository's own profile, a repository with no usable profile is refused
with its reason and nothing is queued, and reconcile recovers what an outage lost."""

from __future__ import annotations

import datetime as dt
import hashlib
import hmac
import json
import uuid

import pytest

service_app = pytest.importorskip("issuetriage.service.app", reason="the service queue (#19, h19q) is not here")
receiver = pytest.importorskip("issuetriage.service.receiver")

from ghtest import REPO, app_env, number_for, seed  # noqa: E402
from starlette.testclient import TestClient  # noqa: E402
from test_github_repo_profile import put_profile  # noqa: E402

from issuetriage.github.installations import GitHubApp  # noqa: E402
from issuetriage.service.app_mode import AppResolver, ProfileMap  # noqa: E402
from issuetriage.service.reconcile import reconcile  # noqa: E402

SECRET = b"app-secret"
VISION = "pytorch/vision"


@pytest.fixture
def service(standin, clock, tmp_path):
    standin.state.installations = {REPO: 4242, VISION: 77}
    resolver = AppResolver(GitHubApp.from_env(app_env(standin, clock), clock=clock),
                           ProfileMap(installations={"4242": "repo"}))
    jobs = service_app.open_jobs(tmp_path / "t.db", None, resolver, "heuristic")
    jobs.huey.flush()
    return TestClient(service_app.receiver_app(receiver.Receiver((SECRET,), jobs))), jobs, resolver


def deliver(client, repo: str, number: int, installation: int, delivery: str | None = None):
    body = json.dumps({"action": "opened", "sender": {"login": "reporter", "type": "User"},
                       "repository": {"full_name": repo}, "installation": {"id": installation},
                       "issue": {"number": number, "user": {"login": "reporter"},
                                 "updated_at": "2026-02-01T00:00:00Z"}}).encode()
    return client.post("/webhook", content=body, headers={
        "X-GitHub-Event": "issues", "X-GitHub-Delivery": delivery or str(uuid.uuid4()),
        "Content-Type": "application/json",
        "X-Hub-Signature-256": "sha256=" + hmac.new(SECRET, body, hashlib.sha256).hexdigest()})


def drain(jobs) -> int:
    ran = 0
    while (task := jobs.huey.dequeue()) is not None:
        jobs.huey.execute(task)
        ran += 1
    return ran


def test_a_delivery_acts_as_its_installation_with_the_repository_profile(service, standin):
    client, jobs, resolver = service
    n = number_for("label")
    seed(standin, n)
    put_profile(standin)
    assert deliver(client, REPO, n, 4242).status_code == 202
    assert drain(jobs) == 1
    assert standin.state.label_names(REPO, n) and len(jobs.store().audit(REPO, n)) == 1
    paths = [r.path for r in standin.log]
    assert paths.count("/app/installations/4242/access_tokens") == 1
    assert f"/repos/{REPO}/installation" not in paths  # the signed delivery said which installation
    writes = [r for r in standin.writes if r.path.startswith("/repos/")]
    assert writes and all(r.headers["authorization"].startswith("token ghs_standin4242") for r in writes)


def test_no_usable_profile_is_refused_with_its_reason_and_nothing_queued(service, standin):
    client, jobs, resolver = service
    seed(standin, number_for("label"), repo=VISION)
    answer = deliver(client, VISION, number_for("label"), 77)
    assert answer.status_code == 422 and "not in the server's mapping" in answer.text
    assert drain(jobs) == 0 and standin.log == []


def test_reconcile_recovers_an_outage(service, standin):
    client, jobs, resolver = service
    put_profile(standin)
    now = dt.datetime.now(dt.UTC)
    stamp = f"{now:%Y-%m-%dT%H:%M:%SZ}"
    lost, seen_n = number_for("label"), number_for("close_question")
    for n in (lost, seen_n):
        seed(standin, n)
        standin.state.issues[(REPO, n)]["created_at"] = stamp
    assert deliver(client, REPO, seen_n, 4242, delivery="seen-1").status_code == 202  # before the outage
    standin.state.deliveries = [
        {"id": 2, "guid": "lost-1", "delivered_at": stamp, "status_code": 503, "event": "issues"},
        {"id": 1, "guid": "seen-1", "delivered_at": stamp, "status_code": 202, "event": "issues"}]
    db = jobs.store().db
    done = reconcile(resolver, lambda repo, number, inst, why: jobs.submit("triage", repo, number, inst),
                     now - dt.timedelta(hours=1), repos=[REPO],
                     seen=lambda repo, number: db.execute("SELECT 1 FROM deliveries WHERE repo=? AND number=?",
                                                          (repo, number)).fetchone() is not None)
    assert standin.state.redelivered == [2] and done.enqueued == [(REPO, lost)]
    assert drain(jobs) == 2  # the delivery recorded before the outage, and the swept one
    assert standin.state.label_names(REPO, lost)


def test_the_reconcile_command_queues_through_the_service_queue(service, standin, clock, monkeypatch, tmp_path,
                                                                capsys):
    from test_github_cli import run

    client, jobs, resolver = service
    put_profile(standin)
    stamp = f"{dt.datetime.now(dt.UTC):%Y-%m-%dT%H:%M:%SZ}"
    lost, seen_n = number_for("label"), number_for("close_question")
    for n in (lost, seen_n):
        seed(standin, n)
        standin.state.issues[(REPO, n)]["created_at"] = stamp
    assert deliver(client, REPO, seen_n, 4242).status_code == 202
    drain(jobs)
    mapping = tmp_path / "profiles.toml"
    mapping.write_text('[installations]\n"4242" = "repo"\n')
    for key, value in {**app_env(standin, clock), "ISSUETRIAGE_APP_PROFILES": str(mapping)}.items():
        monkeypatch.setenv(key, value)
    assert run(["reconcile", "--since", "1h", "--repo", REPO, "--store", str(tmp_path / "t.db"), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["enqueued"] == [f"{REPO}#{lost}"]
    assert drain(jobs) == 1 and standin.state.label_names(REPO, lost)
