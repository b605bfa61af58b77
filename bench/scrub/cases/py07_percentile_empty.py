"""Reproduce: latency report crashes with ZeroDivisionError when one endpoint has no samples."""
import sys
import json
import math
import random
import logging
import datetime as dt
from collections import defaultdict

from minilib import percentile, parse_duration

log = logging.getLogger("latency")
ENDPOINTS = ["/login", "/search", "/cart", "/checkout", "/health"]
THRESHOLDS = {"/login": "300ms", "/search": "1s", "/cart": "500ms", "/checkout": "2s", "/health": "50ms"}


class Sample:
    __slots__ = ("endpoint", "latency", "status", "when")

    def __init__(self, endpoint, latency, status, when):
        self.endpoint = endpoint
        self.latency = latency
        self.status = status
        self.when = when


def generate(count, rng):
    start = dt.datetime(2024, 1, 1)
    samples = []
    for index in range(count):
        endpoint = rng.choice(ENDPOINTS[:-1])
        latency = abs(rng.gauss(0.2, 0.1))
        status = 200 if rng.random() > 0.05 else 500
        samples.append(Sample(endpoint, latency, status, start + dt.timedelta(seconds=index)))
    return samples


def group(samples):
    grouped = defaultdict(list)
    for endpoint in ENDPOINTS:
        grouped[endpoint] = []
    for sample in samples:
        if sample.status == 200:
            grouped[sample.endpoint].append(sample.latency)
    return grouped


def error_rate(samples):
    errors = sum(1 for s in samples if s.status >= 500)
    return errors / max(1, len(samples))


class Report:
    def __init__(self, grouped):
        self.grouped = grouped
        self.rows = []

    def build(self):
        for endpoint, values in self.grouped.items():
            limit = parse_duration(THRESHOLDS[endpoint])
            p50 = percentile(values, 50)
            p99 = percentile(values, 99)
            self.rows.append({
                "endpoint": endpoint,
                "p50": round(p50, 4),
                "p99": round(p99, 4),
                "ok": p99 <= limit,
                "count": len(values),
            })
        return self

    def render(self):
        return json.dumps(self.rows, indent=2)


def sanity(grouped):
    for endpoint, values in grouped.items():
        if values and any(math.isnan(v) for v in values):
            raise ValueError(endpoint)


def main():
    environment_report()
    rng = random.Random(11)
    samples = generate(200, rng)
    print("error rate", round(error_rate(samples), 3))
    grouped = group(samples)
    sanity(grouped)
    report = Report(grouped).build()
    print(report.render())



def environment_report():
    import platform
    details = {
        "python": platform.python_version(),
        "implementation": platform.python_implementation(),
        "system": platform.system(),
        "machine": platform.machine(),
    }
    for key, value in sorted(details.items()):
        print(f"{key:>16}: {value}")
    flags = []
    if sys.flags.optimize:
        flags.append("optimize")
    if sys.flags.dev_mode:
        flags.append("dev")
    print("flags:", ", ".join(flags) or "none")
    return details


if __name__ == "__main__":
    main()
    sys.exit(0)
