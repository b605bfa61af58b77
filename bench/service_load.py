"""Benchmark: service mode under load, on loopback against the GitHub stand-in.

Signed webhook deliveries over issues in three repositories (real issue text from ../shared/data,
reused across numbers) go to `issuetriage serve --workers 0` (the receiver) while two
`issuetriage worker` processes drain the queue: first the embedded SQLite queue, then Redis.
The stream carries 5% duplicate deliveries (the same delivery id again), bursts of edits on one
issue, 1% bad signatures, and a few oversized and malformed bodies; the bad ones target issues no
valid delivery names, so anything done for them shows. Mid-run one worker is SIGKILLed and
restarted, and mid-burst the receiver is SIGKILLed and restarted (deliveries it did not answer are
redelivered with the same id, as `reconcile` or a person would).

It reports whether every valid issue was triaged exactly once (audit rows), that labels were never
written twice, the GitHub writes, that bad deliveries were refused with nothing recorded or
enqueued, the receiver's p50/p99 answer time, end-to-end issues/s, and GitHub calls per issue.
Baseline, same process: the one flow run once per valid delivery, in order, with no receiver and
no queue (what a workflow run per event does).

    python bench/service_load.py [--deliveries 10000] [--issues 2000] [--redis redis://127.0.0.1:6391/0]
"""

from __future__ import annotations

import argparse
import hashlib
import hmac
import http.client
import json
import os
import random
import re
import signal
import socket
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "github"))

from standin import StandIn  # noqa: E402

DATA = ROOT.parent / "shared" / "data" / "pytorch-issues-dev.jsonl"
REPOS = ("pytorch/pytorch", "pytorch/vision", "pytorch/audio")
SECRET = b"bench webhook secret"
BAD_BASE = 900000  # issue numbers only bad deliveries name


@dataclass
class Delivery:
    id: str
    event: str
    body: bytes
    signature: str
    kind: str  # valid, duplicate, bad_signature, oversized, malformed
    issue: tuple[str, int]


def sign(body: bytes, secret: bytes = SECRET) -> str:
    return "sha256=" + hmac.new(secret, body, hashlib.sha256).hexdigest()


def webhook(action: str, repo: str, number: int) -> bytes:
    return json.dumps({"action": action, "issue": {"number": number, "user": {"login": "reporter"}},
                       "repository": {"full_name": repo}, "sender": {"login": "reporter", "type": "User"}}).encode()


def make_stream(total: int, n_issues: int, rng: random.Random) -> tuple[list[Delivery], list[tuple[str, int]]]:
    """The deliveries in sending order, and the issues valid deliveries name."""
    issues = [(REPOS[i % 3], 1 + i // 3) for i in range(n_issues)]
    duplicates, bad_signatures = total * 5 // 100, total // 100
    oversized = malformed = max(1, total // 2000)
    valid = total - duplicates - bad_signatures - oversized - malformed
    edits = valid - n_issues
    hot = rng.sample(issues, max(1, n_issues // 20))
    per_issue: dict[tuple[str, int], list[str]] = {key: ["opened"] for key in issues}
    for i in range(edits):
        key = hot[i % len(hot)] if i < edits // 2 else rng.choice(issues)  # half the edits in bursts
        per_issue[key].append("edited")
    # an issue's events in order, issues interleaved; a hot issue's edits come in one burst
    queues = {key: list(actions) for key, actions in per_issue.items()}
    live, stream = list(issues), []
    while live:
        key = rng.choice(live)
        take = len(queues[key]) if key in hot and queues[key][0] == "edited" else 1
        for action in queues[key][:take]:
            body = webhook(action, *key)
            stream.append(Delivery(str(uuid.uuid4()), "issues", body, sign(body), "valid", key))
        del queues[key][:take]
        if not queues[key]:
            live.remove(key)
    for _ in range(duplicates):  # the same delivery again, later
        at = rng.randrange(len(stream) // 2, len(stream))
        first = stream[rng.randrange(0, at)]
        stream.insert(at, Delivery(first.id, first.event, first.body, first.signature, "duplicate", first.issue))
    bad: list[Delivery] = []
    for i in range(bad_signatures):
        key = (REPOS[i % 3], BAD_BASE + i)
        body = webhook("opened", *key)
        bad.append(Delivery(str(uuid.uuid4()), "issues", body, sign(body, b"wrong secret"), "bad_signature", key))
    for i in range(oversized):
        key = (REPOS[0], BAD_BASE + bad_signatures + i)
        body = json.dumps({**json.loads(webhook("opened", *key)), "padding": "x" * (1024 * 1024)}).encode()
        bad.append(Delivery(str(uuid.uuid4()), "issues", body, sign(body), "oversized", key))
    for i in range(malformed):
        key = (REPOS[0], BAD_BASE + bad_signatures + oversized + i)
        body = webhook("opened", *key)[:-7]
        bad.append(Delivery(str(uuid.uuid4()), "issues", body, sign(body), "malformed", key))
    for item in bad:
        stream.insert(rng.randrange(len(stream)), item)
    return stream, issues


def seed(standin: StandIn, issues: list[tuple[str, int]], records: list[dict], bad: int) -> None:
    for i, (repo, number) in enumerate(issues):
        r = records[i % len(records)]
        standin.state.add_issue(repo, number, r["title"], r.get("body") or "")
    for i in range(bad):
        standin.state.add_issue(REPOS[i % 3], BAD_BASE + i, "never to be triaged", "no valid delivery names me")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Processes:
    """The receiver and two workers as the user runs them."""

    def __init__(self, env: dict[str, str], store: Path, port: int, log: Path) -> None:
        self.env, self.store, self.port, self.log = env, store, port, log.open("ab")
        repos = [arg for repo in REPOS for arg in ("--repo", repo)]
        cli = [sys.executable, "-m", "issuetriage"]
        common = ["--store", str(store), "--judge", "heuristic", *repos]
        self.receiver_cmd = [*cli, "serve", *common, "--port", str(port), "--workers", "0"]
        self.worker_cmd = [*cli, "worker", *common, "--workers", "1"]
        self.receiver = self.start(self.receiver_cmd)
        self.wait_for_receiver()
        self.workers = [self.start(self.worker_cmd) for _ in range(2)]

    def start(self, cmd: list[str]) -> subprocess.Popen[bytes]:
        return subprocess.Popen(cmd, env=self.env, stdout=self.log, stderr=self.log, start_new_session=True)

    def wait_for_receiver(self) -> None:
        for _ in range(400):
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=0.2).close()
                return
            except OSError:
                time.sleep(0.05)
        raise RuntimeError("the receiver did not start (see the log)")

    def kill(self, proc: subprocess.Popen[bytes]) -> None:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()

    def restart_worker(self) -> None:
        self.kill(self.workers[0])
        time.sleep(0.5)
        self.workers[0] = self.start(self.worker_cmd)

    def restart_receiver(self) -> None:
        self.kill(self.receiver)
        time.sleep(0.3)
        self.receiver = self.start(self.receiver_cmd)
        self.wait_for_receiver()

    def stop(self) -> None:
        for proc in [self.receiver, *self.workers]:
            os.killpg(proc.pid, signal.SIGTERM)  # graceful: each worker finishes its job in hand
        for proc in [self.receiver, *self.workers]:
            proc.wait(timeout=60)


def send_all(stream: list[Delivery], port: int, chaos: dict[int, object], senders: int) -> tuple[
        list[tuple[str, int, float]], int]:
    """Send every delivery (re-sending the same id when the receiver is down); returns
    (kind, status, seconds) per answered delivery and the number of re-sends."""
    results: list[tuple[str, int, float]] = []
    resent = 0
    lock = threading.Lock()
    position = iter(range(len(stream)))

    def connect() -> http.client.HTTPConnection:
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        conn.connect()  # headers and body go in two writes: without NODELAY each waits for a delayed ACK
        assert conn.sock is not None
        conn.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        return conn

    def sender() -> None:
        nonlocal resent
        conn: http.client.HTTPConnection | None = None
        while True:
            with lock:
                i = next(position, None)
                action = chaos.pop(i, None) if i is not None else None
            if i is None:
                return
            if callable(action):
                action()
            d = stream[i]
            headers = {"X-GitHub-Event": d.event, "X-GitHub-Delivery": d.id, "X-Hub-Signature-256": d.signature,
                       "Content-Type": "application/json"}
            while True:
                try:
                    conn = conn or connect()
                    start = time.perf_counter()
                    conn.request("POST", "/webhook", body=d.body, headers=headers)
                    answer = conn.getresponse()
                    answer.read()
                    seconds = time.perf_counter() - start
                    break
                except (OSError, http.client.HTTPException):
                    if conn is not None:
                        conn.close()
                    conn = None
                    with lock:
                        resent += 1
                    time.sleep(0.05)
            with lock:
                results.append((d.kind, answer.status, seconds))

    threads = [threading.Thread(target=sender) for _ in range(senders)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return results, resent


def wait_done(store: Path, queue_url: str | None, timeout: float) -> None:
    from issuetriage.service.queue import open_huey

    huey = open_huey(queue_url, store)
    deadline = time.monotonic() + timeout
    with sqlite3.connect(store, timeout=30) as db:
        while time.monotonic() < deadline:
            queued = db.execute("SELECT COUNT(*) FROM deliveries WHERE outcome='queued'").fetchone()[0]
            if not queued and not len(huey) and not huey.scheduled_count():
                return
            time.sleep(0.25)
    raise RuntimeError(f"work left after {timeout:.0f} s")


def run_service(stream: list[Delivery], issues: list[tuple[str, int]], records: list[dict], queue_url: str | None,
                workdir: Path, senders: int) -> dict[str, object]:
    n_bad = sum(d.kind == "bad_signature" for d in stream) + sum(d.kind in {"oversized", "malformed"} for d in stream)
    with StandIn() as gh:
        seed(gh, issues, records, n_bad)
        store = workdir / "service.db"
        env = {**{k: v for k, v in os.environ.items() if k not in {"GITHUB_APP_ID", "GH_TOKEN"}}, **gh.env(),
               "GITHUB_WEBHOOK_SECRET": SECRET.decode(), "PYTHONPATH": str(ROOT / "src")}
        if queue_url:
            env["ISSUETRIAGE_QUEUE"] = queue_url
            from issuetriage.service.queue import open_huey
            open_huey(queue_url, store).flush()
        port = free_port()
        procs = Processes(env, store, port, workdir / "processes.log")
        # chaos: a worker SIGKILLed at 30% and restarted; the receiver killed inside a burst at 60%
        burst = next(i for i in range(len(stream) * 6 // 10, len(stream) - 1)
                     if stream[i].issue == stream[i + 1].issue and stream[i].kind == "valid")
        chaos: dict[int, object] = {len(stream) * 3 // 10: procs.restart_worker, burst: procs.restart_receiver}
        start = time.perf_counter()
        try:
            answers, resent = send_all(stream, port, chaos, senders)
            sent = time.perf_counter() - start
            wait_done(store, queue_url, timeout=1800)
            elapsed = time.perf_counter() - start
        finally:
            procs.stop()
        return check(gh, store, stream, issues, answers, resent, sent, elapsed)


def check(gh: StandIn, store: Path, stream: list[Delivery], issues: list[tuple[str, int]],
          answers: list[tuple[str, int, float]], resent: int, sent: float, elapsed: float) -> dict[str, object]:
    with sqlite3.connect(store) as db:
        audit = Counter({(r, n): c for r, n, c in db.execute("SELECT repo, number, COUNT(*) FROM audit GROUP BY repo, number")})
        recorded = {row[0] for row in db.execute("SELECT id FROM deliveries")}
        outcomes = dict(db.execute("SELECT outcome, COUNT(*) FROM deliveries GROUP BY outcome").fetchall())
        resumed = sum("resumed_after_interruption" in json.loads(extra) for (extra,) in db.execute("SELECT extra FROM audit"))
    label_posts = Counter(r.path for r in gh.log if r.method == "POST" and r.path.endswith("/labels"))
    labeled = Counter((key, e.get("label", {}).get("name")) for key, events in gh.state.events.items()
                      for e in events if e["event"] == "labeled")
    bad = [d for d in stream if d.kind in {"bad_signature", "oversized", "malformed"}]
    bad_issues = {d.issue for d in bad}
    bad_numbers = {n for _, n in bad_issues}
    touched_bad = [r.path for r in gh.log if _number(r) in bad_numbers]
    statuses = Counter((kind, status) for kind, status, _ in answers)
    times = sorted(s for _, _, s in answers)
    valid_ids = {d.id for d in stream if d.kind == "valid"}
    return {
        "issues": len(issues), "deliveries": len(stream),
        "triaged_once": sum(audit[key] == 1 for key in issues), "triaged_more": sum(audit[key] > 1 for key in issues),
        "not_triaged": sum(audit[key] == 0 for key in issues),
        "bad_issues_audited": sum(audit[key] for key in bad_issues), "resumed": resumed,
        "label_posts_max": max(label_posts.values(), default=0), "labels_added_twice": sum(c > 1 for c in labeled.values()),
        "writes": len(gh.writes), "calls": len(gh.log), "calls_per_issue": len(gh.log) / len(issues),
        "bad_recorded": sum(d.id in recorded for d in bad), "bad_github_calls": len(touched_bad),
        "valid_recorded": len(valid_ids & recorded), "valid_unique": len(valid_ids), "outcomes": outcomes,
        "statuses": {f"{k} {s}": c for (k, s), c in sorted(statuses.items())}, "resent": resent,
        "p50_ms": 1000 * statistics.median(times), "p99_ms": 1000 * times[int(0.99 * (len(times) - 1))],
        "send_s": sent, "received_per_s": len(stream) / sent, "elapsed_s": elapsed, "issues_per_s": len(issues) / elapsed,
    }


def _number(request: object) -> int | None:
    """The issue number a stand-in request is about (REST path or GraphQL variables)."""
    match = re.search(r"/issues/(\d+)", getattr(request, "path", ""))
    body = getattr(request, "body", None)
    variables = body.get("variables") if isinstance(body, dict) else None
    number = match.group(1) if match else (variables or {}).get("number")
    return int(number) if number is not None else None


def baseline(stream: list[Delivery], issues: list[tuple[str, int]], records: list[dict]) -> dict[str, object]:
    """The one flow once per valid delivery, in order, in this process: no dedupe, no coalescing."""
    from issuetriage.act.flow import act, engine
    from issuetriage.github.apply import GitHubApplier
    from issuetriage.github.client import GitHubClient
    from issuetriage.judges.factory import get_judge
    from issuetriage.policy import load_profile

    policy, judge = load_profile("pytorch"), get_judge("heuristic")
    with StandIn() as gh:
        seed(gh, issues, records, 0)
        client = GitHubClient.from_env(gh.env())
        client.connect()
        start = time.perf_counter()
        runs = [d for d in stream if d.kind in {"valid", "duplicate"}]
        for d in runs:
            act(GitHubApplier(client), d.issue[0], d.issue[1], policy, engine(judge), apply=True)
        elapsed = time.perf_counter() - start
        return {"calls": len(gh.log), "writes": len(gh.writes), "calls_per_issue": len(gh.log) / len(issues),
                "elapsed_s": elapsed, "issues_per_s": len(issues) / elapsed, "runs": len(runs)}


def show(name: str, r: dict[str, object]) -> None:
    print(f"\n== {name}: {r['deliveries']} deliveries over {r['issues']} issues in {len(REPOS)} repositories")
    print(f"triaged exactly once: {r['triaged_once']}/{r['issues']} (more than once: {r['triaged_more']}, "
          f"never: {r['not_triaged']}; resumed after a worker died mid-job: {r['resumed']})")
    print(f"label writes per issue, max: {r['label_posts_max']}; labels added twice: {r['labels_added_twice']}")
    print(f"GitHub: {r['writes']} writes, {r['calls']} calls, {r['calls_per_issue']:.2f} calls per issue")
    print(f"bad deliveries: recorded {r['bad_recorded']}, GitHub calls for their issues {r['bad_github_calls']}, "
          f"audit rows for them {r['bad_issues_audited']}")
    print(f"valid deliveries recorded: {r['valid_recorded']}/{r['valid_unique']}; outcomes {r['outcomes']}")
    print(f"answers: {r['statuses']}; re-sent after the receiver went away: {r['resent']}")
    print(f"receiver answer time: p50 {r['p50_ms']:.1f} ms, p99 {r['p99_ms']:.1f} ms (target p99 < 50 ms)")
    print(f"end to end: {r['elapsed_s']:.1f} s ({r['send_s']:.1f} s sending, {r['received_per_s']:.0f} deliveries/s), "
          f"{r['issues_per_s']:.1f} issues/s")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--deliveries", type=int, default=10000)
    parser.add_argument("--issues", type=int, default=2000)
    parser.add_argument("--redis", default=os.environ.get("ISSUETRIAGE_TEST_REDIS_URL"),
                        help="Redis URL for the second run (default: $ISSUETRIAGE_TEST_REDIS_URL; none: skipped)")
    parser.add_argument("--seed", type=int, default=19)
    parser.add_argument("--senders", type=int, default=2, help="Deliveries in flight at once (GitHub's senders)")
    parser.add_argument("--no-baseline", action="store_true")
    parser.add_argument("--keep", help="Keep the store, queue and process logs in this folder")
    args = parser.parse_args()
    if not DATA.exists():
        print(f"skipped: {DATA} not found")
        return
    records = [json.loads(line) for line in DATA.read_text().splitlines() if line.strip()]
    stream, issues = make_stream(args.deliveries, args.issues, random.Random(args.seed))
    print(f"{len(stream)} deliveries: {dict(Counter(d.kind for d in stream))}; issue text from {DATA.name}")
    results = {}
    for name, url in (("embedded SQLite queue", None), ("Redis queue", args.redis)):
        if name.startswith("Redis") and not url:
            print("\n== Redis queue: skipped (no --redis URL and ISSUETRIAGE_TEST_REDIS_URL unset)")
            continue
        with tempfile.TemporaryDirectory() as tmp:
            workdir = Path(args.keep or tmp) / ("redis" if url else "sqlite")
            workdir.mkdir(parents=True, exist_ok=True)
            results[name] = run_service(stream, issues, records, url, workdir, args.senders)
        show(name, results[name])
    if not args.no_baseline:
        base = baseline(stream, issues, records)
        print(f"\n== baseline (same process): the one flow once per valid or duplicate delivery, "
              f"{base['runs']} runs, no receiver or queue")
        print(f"GitHub: {base['writes']} writes, {base['calls']} calls, {base['calls_per_issue']:.2f} calls per issue; "
              f"{base['issues_per_s']:.1f} issues/s")
        for name, r in results.items():
            print(f"{name}: calls per issue ratio ours/baseline {float(r['calls_per_issue']) / float(base['calls_per_issue']):.2f}, "  # type: ignore[arg-type]
                  f"issues/s ratio {float(r['issues_per_s']) / float(base['issues_per_s']):.2f}")  # type: ignore[arg-type]


if __name__ == "__main__":
    main()
