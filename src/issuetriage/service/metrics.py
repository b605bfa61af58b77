"""`/metrics` in Prometheus' text format, read at scrape time from the durable state (the store
and the queue), so every receiver and worker process reports the same figures; only the
receiver's own answer counts (refused deliveries, which write nothing) live in its memory.
https://prometheus.io/docs/instrumenting/exposition_formats/"""

from __future__ import annotations

import time
from collections import Counter
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from issuetriage.service.jobs import Jobs


def render(jobs: Jobs, answers: Counter[str], cut: Counter[str] | None = None) -> str:
    stats = jobs.store().delivery_stats()
    oldest = stats["oldest_queued"]
    lines: list[str] = []

    def metric(name: str, kind: str, doc: str, samples: list[tuple[str, float]]) -> None:
        lines.extend([f"# HELP issuetriage_{name} {doc}", f"# TYPE issuetriage_{name} {kind}"])
        lines.extend(f"issuetriage_{name}{labels} {value:g}" for labels, value in samples)

    metric("queue_depth", "gauge", "Jobs waiting in the queue (ready, and scheduled for a retry).",
           [('{state="ready"}', jobs.huey.pending_count()), ('{state="retrying"}', jobs.huey.scheduled_count())])
    metric("oldest_job_age_seconds", "gauge", "Age of the oldest delivery whose work is not done.",
           [("", time.time() - oldest if oldest else 0.0)])
    metric("deliveries_total", "counter", "Recorded deliveries by outcome (the store).",
           [(f'{{outcome="{k}"}}', v) for k, v in sorted(stats["outcomes"].items())])
    metric("answers_total", "counter", "This receiver's answers by outcome since it started.",
           [(f'{{outcome="{k}"}}', v) for k, v in sorted(answers.items())])
    metric("connections_cut_total", "counter", "Connections the server closed by reason: timeout (the "
           "request did not arrive in time), evicted (the longest waiting, for a new one), refused.",
           [(f'{{reason="{k}"}}', v) for k, v in sorted((cut or Counter()).items())])
    metric("dead_letters", "gauge", "Jobs in the dead-letter list.", [("", len(jobs.store().dead_letters()))])
    metric("github_calls_total", "counter", "GitHub API calls spent by jobs, per installation.",
           [(f'{{installation="{k if k is not None else "token"}"}}', v)
            for k, v in sorted(stats["calls"].items(), key=lambda kv: str(kv[0]))])
    metric("triage_latency_seconds", "summary", "Delivery received → its triage done.",
           [("_count", stats["latency_count"]), ("_sum", stats["latency_sum"])])
    for row in jobs.resolver.metrics() if jobs.resolver is not None else []:
        metric(*row)
    return "\n".join(lines) + "\n"
