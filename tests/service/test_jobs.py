"""The queue and its job: coalescing, one job per issue at a time, retries into the dead-letter
list and back, recovery of lost work, and the end-to-end promise: a webhook reaches exactly the
state `issuetriage triage OWNER/REPO#N --apply` reaches."""

from __future__ import annotations

import json

import pytest
from ghtest import number_for, seed
from service_helpers import REPO, deliver, drain, payload, rows
from standin import StandIn

from issuetriage.service.queue import IssueLock, pending_key


def labels(standin: StandIn, number: int, repo: str = REPO) -> list[str]:
    return sorted(standin.state.label_names(repo, number))


def test_a_burst_of_edits_coalesces_into_one_triage(client, jobs, standin):
    n = number_for("label")
    seed(standin, n)
    answers = [deliver(client, "issues", payload("issues", "opened" if i == 0 else "edited", n)).json()["outcome"]
               for i in range(6)]
    assert answers == ["enqueued"] + ["coalesced"] * 5
    assert drain(jobs) == 1
    assert len(jobs.store().audit(REPO, n)) == 1
    assert {r["outcome"] for r in rows(jobs, "deliveries")} == {"done"}
    assert labels(standin, n)  # it was triaged
    assert deliver(client, "issues", payload("issues", "edited", n)).json()["outcome"] == "enqueued"  # not stuck


def test_an_event_during_a_run_queues_one_more_run(client, jobs, standin):
    n = number_for("label")
    seed(standin, n)
    deliver(client, "issues", payload("issues", "opened", n))
    task = jobs.huey.dequeue()
    jobs.huey.delete(pending_key("triage", REPO, n))  # what the job does before it reads the issue
    assert deliver(client, "issues", payload("issues", "edited", n)).json()["outcome"] == "enqueued"
    jobs.huey.execute(task)
    assert drain(jobs) == 1  # the second run finds the issue done: no second audit row, no write
    assert len(jobs.store().audit(REPO, n)) == 1
    assert {r["outcome"] for r in rows(jobs, "deliveries")} == {"done"}


def test_jobs_for_one_issue_never_run_at_once(client, jobs, standin):
    n = number_for("label")
    seed(standin, n)
    deliver(client, "issues", payload("issues", "opened", n))
    task = jobs.huey.dequeue()
    with IssueLock(jobs.huey, REPO, n) as held:  # another worker is on this issue
        assert held
        jobs.huey.execute(task)
        assert standin.log == [] and jobs.huey.scheduled_count() == 1  # put back, nothing read
        with IssueLock(jobs.huey, REPO, n) as second:
            assert not second
    assert drain(jobs) == 1
    assert len(jobs.store().audit(REPO, n)) == 1


def test_a_lock_whose_holder_died_is_taken_over(sqlite_jobs):
    import socket

    huey = sqlite_jobs.huey
    dead = 2 ** 22 + 12345  # above the default pid_max: no such process
    key = IssueLock(huey, REPO, 1).key
    huey.storage.put_if_empty(key, huey.serializer.serialize(f"{socket.gethostname()}:{dead}:1"))
    with IssueLock(huey, REPO, 1) as held:
        assert held
    assert not huey.storage.has_data_for_key(key)


def test_failures_retry_with_back_off_then_land_in_dead_letters_and_can_be_retried(client, jobs, standin,
                                                                                   monkeypatch, tmp_path, capsys):
    from issuetriage.cli.app import main
    from issuetriage.service.queue import RETRIES, RETRY_DELAY

    n = number_for("label")
    seed(standin, n)
    real = jobs.resolver.client
    monkeypatch.setattr(jobs.resolver, "client", lambda repo, inst: (_ for _ in ()).throw(RuntimeError("GitHub is down")))
    deliver(client, "issues", payload("issues", "opened", n))
    delays = []
    for _ in range(RETRIES + 1):
        jobs.huey.execute(jobs.huey.dequeue())
        for task in jobs.huey.read_schedule(__import__("datetime").datetime(9999, 1, 1)):
            delays.append(task.retry_delay)
            task.eta = None
            jobs.huey.enqueue(task)
    # exponential back-off: huey doubles the delay each time it schedules a retry (waits 2, 4, 8, 16 s)
    assert delays == [RETRY_DELAY * 2 ** (i + 1) for i in range(RETRIES)]
    assert len(jobs.huey) == 0
    [dead] = jobs.store().dead_letters()
    assert (dead["repo"], dead["number"], dead["kind"], dead["tries"]) == (REPO, n, "triage", RETRIES + 1)
    assert "GitHub is down" in dead["error"]
    assert {r["outcome"] for r in rows(jobs, "deliveries")} == {"dead"}
    assert standin.writes == []

    monkeypatch.setattr(jobs.resolver, "client", real)
    store = str(tmp_path / "t.db")
    queue = [] if not jobs.huey.__class__.__name__.startswith("Redis") else [
        "--queue", _redis_url(jobs)]
    assert _run(main, ["queue", "list", "--store", store, *queue]) == 0
    assert f"dead     triage {REPO}#{n} after {RETRIES + 1} tries" in capsys.readouterr().out
    assert _run(main, ["queue", "retry", f"{REPO}#{n}", "--store", store, *queue]) == 0
    assert jobs.store().dead_letters() == [] and len(jobs.huey) == 1
    assert drain(jobs) == 1
    assert len(jobs.store().audit(REPO, n)) == 1 and labels(standin, n)
    assert {r["outcome"] for r in rows(jobs, "deliveries")} == {"done"}
    assert _run(main, ["queue", "drop", f"{REPO}#{n}", "--store", store, *queue]) == 2
    assert "not in the dead-letter list" in capsys.readouterr().err


def _run(main, argv: list[str]) -> int:
    try:
        main(argv)
    except SystemExit as done:
        return int(done.code or 0)
    return 0


def _redis_url(jobs) -> str:
    import os
    return os.environ["ISSUETRIAGE_TEST_REDIS_URL"]


def test_recover_requeues_work_recorded_but_never_done(client, jobs, standin):
    n = number_for("label")
    seed(standin, n)
    deliver(client, "issues", payload("issues", "opened", n))
    jobs.huey.dequeue()  # the worker holding it was SIGKILLed: the job is gone, the marker too
    jobs.huey.delete(pending_key("triage", REPO, n))
    assert drain(jobs) == 0
    assert jobs.recover(force=False) == 1
    assert drain(jobs) == 1
    assert len(jobs.store().audit(REPO, n)) == 1 and {r["outcome"] for r in rows(jobs, "deliveries")} == {"done"}
    assert jobs.recover(force=True) == 0  # nothing left to do


def test_queue_messages_are_json_not_pickles(client, jobs):
    deliver(client, "issues", payload("issues", "opened", 4))
    [raw] = jobs.huey.storage.enqueued_items()
    message = json.loads(raw)["message"]
    assert message["name"].endswith("triage") and message["args"] == ["triage", REPO, 4, 4242]


def test_webhook_reaches_the_state_the_triage_command_reaches(client, jobs, standin, monkeypatch, tmp_path):
    """The same issue and profile: `issuetriage triage REPO#N --apply` on one stand-in, a signed
    issues.opened delivery and a worker on another; labels, comments and state are the same."""
    from issuetriage.cli.app import main

    for decision in ("label", "close_question", "request_reproduction", "redirect_oncall"):
        n = number_for(decision)
        seed(standin, n)
        assert deliver(client, "issues", payload("issues", "opened", n)).status_code == 202
        assert drain(jobs) == 1
        with StandIn() as other:
            seed(other, n)
            for key, value in other.env().items():
                monkeypatch.setenv(key, value)
            monkeypatch.delenv("GITHUB_APP_ID", raising=False)
            assert _run(main, ["triage", f"{REPO}#{n}", "--apply", "--judge", "heuristic"]) == 0
            assert labels(standin, n) == labels(other, n), decision
            ours = standin.state.issues[(REPO, n)]
            theirs = other.state.issues[(REPO, n)]
            assert (ours["state"], ours.get("state_reason")) == (theirs["state"], theirs.get("state_reason"))
            assert [c["body"] for c in standin.state.comments[(REPO, n)]] == \
                [c["body"] for c in other.state.comments[(REPO, n)]]
        assert len(jobs.store().audit(REPO, n)) == 1


def test_reporter_reply_re_triages_an_issue_waiting_for_information(client, jobs, standin, policy):
    from issuetriage.evidence.followup import waiting_since

    n = number_for("request_info")
    seed(standin, n)
    deliver(client, "issues", payload("issues", "opened", n))
    drain(jobs)
    waiting = jobs.store().get_issue(REPO, n)
    assert waiting_since(waiting, policy) is not None
    standin.state.add_comment(REPO, n, "here is the full traceback you asked for", "reporter")
    answer = deliver(client, "issue_comment", payload("issue_comment", "created", n))
    assert answer.json()["outcome"] == "enqueued"
    assert drain(jobs) == 1
    assert len(jobs.store().audit(REPO, n)) == 2  # triaged again despite the done marker
    mirrored = jobs.store().get_issue(REPO, n)
    assert mirrored.comments[-1].author == "reporter"  # the stale clock sees the reply
    assert deliver(client, "issue_comment", payload("issue_comment", "created", n,
                                                    sender="someone")).status_code == 204


@pytest.mark.parametrize("bad", ["mysql://x", "redis-ish"])
def test_a_queue_url_we_cannot_use_is_a_one_line_error(tmp_path, bad):
    from issuetriage.errors import UserError
    from issuetriage.service.queue import open_huey

    with pytest.raises(UserError, match="ISSUETRIAGE_QUEUE"):
        open_huey(bad, tmp_path / "t.db")


def test_a_worker_killed_between_its_writes_and_the_audit_leaves_one_audit_row_and_no_second_write(
        client, jobs, standin, policy):
    from issuetriage.act.flow import act, engine
    from issuetriage.act.hold import Mode
    from issuetriage.github.apply import GitHubApplier

    n = number_for("label")
    seed(standin, n)
    deliver(client, "issues", payload("issues", "opened", n))
    jobs.huey.dequeue()  # the worker took the job, cleared the marker, started, wrote to GitHub, died
    jobs.huey.delete(pending_key("triage", REPO, n))
    jobs.store().start_attempt(REPO, n, "triage", __import__("time").time())
    act(GitHubApplier(jobs.resolver.client(REPO, None)), REPO, n, policy, engine(), Mode(apply=True))
    written = len(standin.writes)
    assert written and jobs.store().audit(REPO, n) == []

    assert jobs.recover(force=False) == 1  # the restarted worker
    assert drain(jobs) == 1
    [row] = jobs.store().audit(REPO, n)
    assert row["extra"]["resumed_after_interruption"] is True
    assert len(standin.writes) == written  # apply by difference: nothing written twice
    assert {r["outcome"] for r in rows(jobs, "deliveries")} == {"done"}
    deliver(client, "issues", payload("issues", "edited", n))
    drain(jobs)
    assert len(jobs.store().audit(REPO, n)) == 1 and len(standin.writes) == written


@pytest.mark.parametrize("engine", ["sqlite", "postgresql"])
def test_the_store_says_whether_an_issue_had_a_delivery_on_either_engine(engine, tmp_path):
    """What `reconcile` asks before it sweeps an issue in (Store.has_delivery)."""
    from issuetriage.store.sqlite import Store
    from store.stores import store_url

    with store_url(engine, tmp_path) as url, Store(url) as store:
        assert not store.has_delivery("pytorch/pytorch", 7)
        store.add_delivery("d-1", "issues", "opened", "pytorch/pytorch", 7, 4242, "triage", 1.0)
        store.add_delivery("d-2", "issues", "opened", "pytorch/vision", 8, 4242, "triage", 1.0)
        assert store.has_delivery("pytorch/pytorch", 7) and not store.has_delivery("pytorch/pytorch", 8)
