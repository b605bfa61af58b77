"""The receiver: signatures, bad input and unhandled events are refused or ignored with nothing
written and nothing enqueued; a handled delivery is recorded once, then enqueued."""

from __future__ import annotations

import json

import pytest
from service_helpers import REPO, deliver, payload, rows, sign

from issuetriage.service.receiver import MAX_BODY


def nothing_happened(jobs) -> None:
    assert len(jobs.huey) == 0
    assert rows(jobs, "deliveries") == [] and rows(jobs, "label_events") == []


def test_signed_delivery_is_recorded_then_enqueued(client, jobs):
    answer = deliver(client, "issues", payload("issues", "opened", 7), delivery="d-1")
    assert answer.status_code == 202 and answer.json()["outcome"] == "enqueued"
    assert len(jobs.huey) == 1
    [row] = rows(jobs, "deliveries")
    assert (row["id"], row["repo"], row["number"], row["job"], row["outcome"]) == ("d-1", REPO, 7, "triage", "queued")


@pytest.mark.parametrize("signature, reason", [
    (None, "missing"),
    ("sha256=" + "0" * 64, "does not match"),
    ("sha1=" + "0" * 40, "sha256=HEX"),
    ("sha256=", "sha256=HEX"),
])
def test_bad_signatures_are_refused_401(client, jobs, signature, reason):
    answer = deliver(client, "issues", payload("issues", "opened"), signature=signature)
    assert answer.status_code == 401 and reason in answer.json()["message"]
    nothing_happened(jobs)


def test_signature_with_another_secret_is_refused(client, jobs):
    body = json.dumps(payload("issues", "opened")).encode()
    answer = deliver(client, "issues", None, body=body, signature=sign(body, b"not the secret"))
    assert answer.status_code == 401
    nothing_happened(jobs)


def test_previous_secret_is_accepted_while_rotating(jobs):
    from starlette.testclient import TestClient

    from issuetriage.service.app import receiver_app
    from issuetriage.service.receiver import Receiver

    rotating = TestClient(receiver_app(Receiver((b"new secret", b"it's a secret to everybody"), jobs)))
    assert deliver(rotating, "issues", payload("issues", "opened")).status_code == 202


def test_replayed_delivery_id_is_a_no_op(client, jobs):
    data = payload("issues", "opened", 3)
    assert deliver(client, "issues", data, delivery="same").status_code == 202
    jobs.huey.dequeue()  # a worker took the job
    again = deliver(client, "issues", data, delivery="same")
    assert again.status_code == 200 and again.json()["outcome"] == "duplicate"
    assert len(jobs.huey) == 0 and len(rows(jobs, "deliveries")) == 1


def test_malformed_json_is_400(client, jobs):
    assert deliver(client, "issues", None, body=b"{not json").status_code == 400
    assert deliver(client, "issues", None, body=b"[1, 2]").status_code == 400
    for number, repo, installation in (("x", REPO, {"id": 1}), (10 ** 23, REPO, {"id": 1}), (1, "no-slash", {"id": 1}),
                                       (1, REPO, {"id": 2 ** 64}), (1, REPO, {"id": True})):
        data = {"action": "opened", "issue": {"number": number}, "repository": {"full_name": repo},
                "installation": installation}
        assert deliver(client, "issues", data).status_code == 400, data
    nothing_happened(jobs)


def test_missing_delivery_id_is_400(client, jobs):
    body = json.dumps(payload("issues", "opened")).encode()
    answer = client.post("/webhook", content=body, headers={"X-GitHub-Event": "issues",
                                                           "X-Hub-Signature-256": sign(body)})
    assert answer.status_code == 400
    nothing_happened(jobs)


def test_body_over_the_limit_is_413_even_without_content_length(client, jobs):
    big = json.dumps(payload("issues", "opened", body="x" * MAX_BODY)).encode()
    assert deliver(client, "issues", None, body=big).status_code == 413

    def chunks():  # chunked: no Content-Length to trust
        for start in range(0, len(big), 65536):
            yield big[start:start + 65536]

    answer = client.post("/webhook", content=chunks(), headers={
        "X-GitHub-Event": "issues", "X-GitHub-Delivery": "big", "X-Hub-Signature-256": sign(big)})
    assert answer.status_code == 413
    nothing_happened(jobs)


def test_repository_not_served_is_refused_with_a_reason(client, jobs):
    answer = deliver(client, "issues", payload("issues", "opened", repo="someone/else"))
    assert answer.status_code == 422 and "someone/else" in answer.json()["message"]
    nothing_happened(jobs)


@pytest.mark.parametrize("event, data", [
    ("ping", {"zen": "Keep it logically awesome.", "hook_id": 1}),
    ("issues", payload("issues", "closed")),
    ("issues", payload("issues", "opened", sender="issuetriage[bot]")),
    ("issues", {**payload("issues", "labeled"), "sender": {"login": "some-app", "type": "Bot"},
                "label": {"name": "triaged"}}),
    ("issue_comment", payload("issue_comment", "created", sender="someone-else")),
    ("push", {"ref": "refs/heads/main"}),
])
def test_unhandled_and_own_events_are_204_and_counted(client, jobs, event, data):
    answer = deliver(client, event, data)
    assert answer.status_code == 204
    nothing_happened(jobs)
    assert 'issuetriage_answers_total{outcome="ignored"} 1' in client.get("/metrics").text


def test_human_label_change_is_recorded_once_as_a_label_event(client, jobs):
    data = {**payload("issues", "labeled", 5, sender="maintainer"), "label": {"name": "module: nn"}}
    assert deliver(client, "issues", data, delivery="lab").status_code == 202
    assert deliver(client, "issues", data, delivery="lab").status_code == 200
    [event] = rows(jobs, "label_events")
    assert (event["number"], event["event"], event["label"], event["actor"]) == (5, "labeled", "module: nn", "maintainer")
    assert len(jobs.huey) == 0  # recorded, not a job


def test_installation_events_go_to_the_resolver(client, jobs, monkeypatch):
    seen = []
    monkeypatch.setattr(jobs.resolver, "installation_changed", lambda e, p: seen.append((e, p["action"])))
    data = {"action": "added", "installation": {"id": 9}, "sender": {"login": "admin"},
            "repositories_added": [{"full_name": "pytorch/vision"}]}
    assert deliver(client, "installation_repositories", data).status_code == 202
    assert seen == [("installation_repositories", "added")]
    assert len(jobs.huey) == 0


def test_healthz_and_metrics(client, jobs):
    deliver(client, "issues", payload("issues", "opened", 2))
    assert client.get("/healthz").text == "ok\n"
    text = client.get("/metrics").text
    assert 'issuetriage_queue_depth{state="ready"} 1' in text
    assert 'issuetriage_deliveries_total{outcome="queued"} 1' in text
    assert "# TYPE issuetriage_triage_latency_seconds summary" in text


def test_serve_refuses_to_start_without_the_secret(tmp_path, monkeypatch, capsys):
    from issuetriage.cli.app import main

    monkeypatch.delenv("GITHUB_WEBHOOK_SECRET", raising=False)
    with pytest.raises(SystemExit) as done:
        main(["serve", "--store", str(tmp_path / "t.db")])
    assert done.value.code == 2
    assert "GITHUB_WEBHOOK_SECRET is not set" in capsys.readouterr().err
    assert not (tmp_path / "t.db").exists()
