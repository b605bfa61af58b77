"""Graceful stop: the worker finishes the job in hand; the rest stays queued for the next one."""

from __future__ import annotations

import signal
import threading

from ghtest import number_for, seed
from service_helpers import REPO, deliver, payload, rows


def test_a_graceful_stop_finishes_the_job_in_hand_and_leaves_the_rest_queued(sqlite_jobs, standin):
    jobs = sqlite_jobs
    from starlette.testclient import TestClient

    from issuetriage.service.app import receiver_app
    from issuetriage.service.receiver import Receiver

    client = TestClient(receiver_app(Receiver((b"it's a secret to everybody",), jobs)))
    first, *rest = [number_for("label"), number_for("close_question"), number_for("request_reproduction")]
    for n in (first, *rest):
        seed(standin, n)
        deliver(client, "issues", payload("issues", "opened", n))
    started, release = threading.Event(), threading.Event()
    real = jobs.resolver.client

    def slow_client(repo, installation):  # the first job is in hand when the stop comes
        started.set()
        assert release.wait(30)
        return real(repo, installation)

    jobs.resolver.client = slow_client  # type: ignore[method-assign]
    saved = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)}
    consumer = jobs.huey.create_consumer(workers=1, worker_type="thread", initial_delay=0.01, max_delay=0.05)
    try:
        consumer.start()
        assert started.wait(30)
        stopper = threading.Thread(target=consumer.stop, kwargs={"graceful": True})
        stopper.start()
        while not consumer.stop_flag.is_set():  # the stop is asked for while the job runs
            stopper.join(0.001)
        release.set()
        stopper.join(30)
    finally:
        for s, handler in saved.items():
            signal.signal(s, handler)
    assert not stopper.is_alive()
    done = {r["number"] for r in rows(jobs, "deliveries") if r["outcome"] == "done"}
    assert done == {first}
    assert len(jobs.store().audit(REPO, first)) == 1
    assert sorted(t.args[2] for t in jobs.huey.pending()) == sorted(rest)
