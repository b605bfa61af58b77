"""App mode end to end through the service (h19q's receiver, queue and jobs): a delivery acts as
its installation with the repository's own profile, a repository with no usable profile is refused
with its reason and nothing is queued, and reconcile recovers what an outage lost."""

from __future__ import annotations

import datetime as dt
import hashlib
import hmac
import json
import os
import uuid

import pytest
from ghtest import REPO, app_env, number_for, seed
from standin import RateWindow
from starlette.testclient import TestClient
from test_github_repo_profile import SHIPPED, put_profile

from issuetriage.errors import UserError
from issuetriage.judges.heuristic import HeuristicJudge
from issuetriage.service import app as service_app
from issuetriage.service import receiver
from issuetriage.service.app_mode import AppResolver
from issuetriage.service.queue import LOCK_TTL, MAX_BUDGET_WAIT, RETRIES, IssueLock
from issuetriage.service.reconcile import reconcile

SECRET = b"app-secret"
VISION = "pytorch/vision"


def open_service(standin, clock, tmp_path, queue=None, judge="heuristic", mapped: bool = True):
    """The service as `serve` builds it in App mode (resolver_from_env: GITHUB_APP_ID is set;
    installation 4242's repositories bring their own profile, the others use --profile), on the
    test's clock; `mapped=False`: no --profile either, so 77's repositories have none."""
    standin.state.installations = {REPO: 4242, VISION: 77}
    (tmp_path / "profiles.toml").write_text('[installations]\n"4242" = "repo"\n')
    env = {**app_env(standin, clock), "ISSUETRIAGE_APP_PROFILES": str(tmp_path / "profiles.toml")}
    resolver = service_app.resolver_from_env((), "pytorch" if mapped else None, env, clock)
    jobs = service_app.open_jobs(tmp_path / "t.db", queue, resolver, judge, clock=clock)
    jobs.huey.flush()
    return TestClient(service_app.receiver_app(receiver.Receiver((SECRET,), jobs))), jobs, resolver


@pytest.fixture
def service(standin, clock, tmp_path):
    return open_service(standin, clock, tmp_path, mapped=False)


def deliver(client, repo: str, number: int, installation: int, delivery: str | None = None):
    body = json.dumps({"action": "opened", "sender": {"login": "reporter", "type": "User"},
                       "repository": {"full_name": repo},
                       **({"installation": {"id": installation}} if installation is not None else {}),
                       "issue": {"number": number, "user": {"login": "reporter"},
                                 "updated_at": "2026-02-01T00:00:00Z"}}).encode()
    return client.post("/webhook", content=body, headers={
        "X-GitHub-Event": "issues", "X-GitHub-Delivery": delivery or str(uuid.uuid4()),
        "Content-Type": "application/json",
        "X-Hub-Signature-256": "sha256=" + hmac.new(SECRET, body, hashlib.sha256).hexdigest()})


def drain(jobs) -> int:
    ran = 0
    while jobs.huey.pending_count() and (task := jobs.huey.dequeue()) is not None:  # Redis blocks when empty
        jobs.huey.execute(task)
        ran += 1
    return ran


def due_now(jobs) -> None:
    """Move the jobs huey scheduled for later onto the queue (the test stands in for the time)."""
    for task in jobs.huey.read_schedule(dt.datetime.now(dt.UTC).replace(tzinfo=None) + dt.timedelta(days=1)):
        task.eta = None
        jobs.huey.enqueue(task)


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
    done = reconcile(resolver, lambda repo, number, inst, why: jobs.submit("triage", repo, number, inst),
                     now - dt.timedelta(hours=1), repos=[REPO], seen=jobs.store().has_delivery)
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


def test_the_service_is_an_app_when_app_credentials_are_set(service, standin):
    client, jobs, resolver = service
    assert isinstance(resolver, AppResolver)
    with pytest.raises(UserError, match="--repo is for token mode"):
        service_app.resolver_from_env((REPO,), "pytorch", {"GITHUB_APP_ID": "1"})


def test_metrics_show_the_app_resolvers_budgets_and_tokens(service, standin):
    client, jobs, resolver = service
    n = number_for("label")
    seed(standin, n)
    put_profile(standin)
    deliver(client, REPO, n, 4242)
    drain(jobs)
    text = client.get("/metrics").text
    assert "issuetriage_github_tokens_minted_total 1" in text
    assert 'issuetriage_github_app_calls_total{installation="4242",resource="graphql"}' in text
    assert "# TYPE issuetriage_github_rate_remaining gauge" in text


def test_installation_events_reach_the_app_resolver(service, standin):
    client, jobs, resolver = service
    body = json.dumps({"action": "removed", "installation": {"id": 4242}, "sender": {"login": "admin"},
                       "repositories_removed": [{"full_name": REPO}]}).encode()
    answer = client.post("/webhook", content=body, headers={
        "X-GitHub-Event": "installation_repositories", "X-GitHub-Delivery": "inst-1",
        "X-Hub-Signature-256": "sha256=" + hmac.new(SECRET, body, hashlib.sha256).hexdigest()})
    assert answer.status_code == 202 and len(jobs.huey) == 0
    refused = deliver(client, REPO, 5, None)  # no installation in the payload: the resolver's memory
    assert refused.status_code == 422 and "not installed" in refused.text


def local_profile(standin, name: str) -> None:
    text = (SHIPPED / "profile.toml").read_text().replace('name = "pytorch"', f'name = "{name}"')
    assert f'name = "{name}"' in text
    put_profile(standin, profile_toml=text.replace('repo = "pytorch/pytorch"', f'repo = "{REPO}"'))


@pytest.fixture
def no_llm_env(monkeypatch):
    for key in [k for k in os.environ if k.startswith("ISSUETRIAGE_LLM_")]:
        monkeypatch.delenv(key)


def test_a_repo_local_profile_with_an_unshipped_name_triages_with_the_default_judge(standin, clock, tmp_path,
                                                                                    no_llm_env):
    client, jobs, resolver = open_service(standin, clock, tmp_path, judge="auto")
    n = number_for("label")
    seed(standin, n)
    local_profile(standin, "myproj")
    assert deliver(client, REPO, n, 4242).status_code == 202
    assert drain(jobs) == 1
    assert standin.state.label_names(REPO, n) and len(jobs.store().audit(REPO, n)) == 1
    assert jobs.store().dead_letters() == []


def test_a_repo_local_profile_with_a_model_configured_triages_and_leaves_no_dead_letter(standin, clock, tmp_path,
                                                                                      no_llm_env, monkeypatch):
    """The repository's own profile is read into a temporary folder that is gone when the judge is
    built: the LLM half gets the Policy object and its offline judge, and never reloads the folder."""
    answers = tmp_path / "answers.jsonl"
    answers.write_text("")  # no recorded answer: the model's half falls back to the offline judge
    monkeypatch.setenv("ISSUETRIAGE_LLM_PROVIDER", "replay")
    monkeypatch.setenv("ISSUETRIAGE_LLM_ANSWERS", str(answers))
    client, jobs, resolver = open_service(standin, clock, tmp_path, judge="auto")
    n = number_for("label")
    seed(standin, n)
    local_profile(standin, "myproj")
    assert deliver(client, REPO, n, 4242).status_code == 202
    assert drain(jobs) == 1
    assert jobs.store().dead_letters() == []
    assert standin.state.label_names(REPO, n) and len(jobs.store().audit(REPO, n)) == 1
    local = resolver.profile(REPO, resolver.client(REPO, 4242))
    assert local.name == "myproj" and jobs.judge(local).name == "hybrid"


def test_a_repo_local_profile_named_like_a_shipped_one_does_not_get_its_llm_toml(standin, clock, tmp_path,
                                                                                  no_llm_env, monkeypatch):
    import shutil

    import issuetriage.policy as policies
    from issuetriage.policy import loader

    shipped = tmp_path / "shipped"
    shutil.copytree(SHIPPED, shipped / "pytorch")
    (shipped / "pytorch" / "llm.toml").write_text('provider = "anthropic"\nmodel = "claude-sonnet-4-6"\n'
                                                 f'cache_dir = "{tmp_path / "llm"}"\n')
    monkeypatch.setattr(loader, "PROFILES_DIR", shipped)
    monkeypatch.setattr(loader, "_CACHE", {})
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-test-not-a-real-key")  # built, never called
    client, jobs, resolver = open_service(standin, clock, tmp_path, judge="auto")
    assert jobs.judge(policies.load_profile("pytorch")).name == "hybrid"  # the operator's own profile
    local_profile(standin, "pytorch")
    local = resolver.profile(REPO, resolver.client(REPO, 4242))
    assert local.name == "pytorch" and isinstance(jobs.judge(local), HeuristicJudge)


def table(jobs, name: str) -> list[dict]:
    return [dict(r) for r in jobs.store().db.execute(f"SELECT * FROM {name}")]


def test_a_budget_that_resets_too_late_puts_the_job_back_until_then_without_spending_a_try(service, standin,
                                                                                              clock):
    client, jobs, resolver = service
    n = number_for("label")
    seed(standin, n)
    put_profile(standin)
    reset = clock.now() + 1000  # past MAX_BUDGET_WAIT: not worth holding a worker for
    standin.rates[4242] = RateWindow(remaining=3, reset=reset)
    assert deliver(client, REPO, n, 4242).status_code == 202
    assert drain(jobs) == 1
    [back] = jobs.huey.scheduled()
    wait = (back.eta - dt.datetime.now(dt.UTC).replace(tzinfo=None)).total_seconds()
    assert MAX_BUDGET_WAIT < wait <= 1000 and back.retries == RETRIES  # no try spent
    assert clock.waits == [] and not standin.state.label_names(REPO, n) and jobs.store().dead_letters() == []
    assert table(jobs, "deliveries")[0]["outcome"] == "queued"
    clock.sleep(1000)
    due_now(jobs)
    assert drain(jobs) == 1
    assert standin.state.label_names(REPO, n) and len(jobs.store().audit(REPO, n)) == 1
    assert table(jobs, "deliveries")[0]["outcome"] == "done" and jobs.huey.scheduled() == []


@pytest.mark.skipif(not os.environ.get("ISSUETRIAGE_TEST_REDIS_URL"),
                    reason="ISSUETRIAGE_TEST_REDIS_URL is not set (only Redis locks expire)")
def test_a_wait_for_the_rate_limit_renews_the_issue_lock_past_it(standin, clock, tmp_path):
    client, jobs, resolver = open_service(standin, clock, tmp_path, os.environ["ISSUETRIAGE_TEST_REDIS_URL"])
    n = number_for("label")
    seed(standin, n)
    put_profile(standin)
    standin.rates[4242] = RateWindow(remaining=0, reset=clock.now() + 900)  # the first call gets the 403
    storage = jobs.huey.storage
    key = storage.result_key(IssueLock(jobs.huey, REPO, n).key)
    ttls: list[int] = []
    sleep = clock.sleep
    clock.sleep = lambda seconds: (ttls.append(storage.conn.pttl(key)), sleep(seconds))
    assert deliver(client, REPO, n, 4242).status_code == 202
    assert drain(jobs) == 1
    assert clock.waits == [900]  # retry.py's wait for the reset, longer than the lock lives unrenewed
    assert ttls and ttls[0] > (900 + LOCK_TTL - 10) * 1000
    assert standin.state.label_names(REPO, n) and storage.conn.exists(key) == 0
