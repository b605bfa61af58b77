"""When to retry a GitHub call and how long to wait: pure decisions, an injectable clock.

Primary and secondary rate limits are waited out (`Retry-After`, then `x-ratelimit-reset`);
5xx answers and connection errors are retried with exponential backoff; 4xx never are.
https://docs.github.com/en/rest/using-the-rest-api/rate-limits-for-the-rest-api#exceeding-the-rate-limit
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field


@dataclass(frozen=True)
class RetryPolicy:
    """How hard to try: attempts per call, backoff base and the longest wait we accept."""

    attempts: int = 5
    backoff: float = 1.0
    max_backoff: float = 60.0
    max_rate_limit_wait: float = 3600.0


@dataclass(frozen=True)
class Failure:
    """What one failed attempt looked like: an HTTP status (0 = no answer) and its headers."""

    status: int
    headers: Mapping[str, str] = field(default_factory=dict)
    message: str = ""


def is_rate_limited(failure: Failure) -> bool:
    """403/429 that GitHub marks as a rate limit (primary or secondary)."""
    if failure.status not in (403, 429):
        return False
    headers = {k.lower(): v for k, v in failure.headers.items()}
    return (
        "retry-after" in headers
        or headers.get("x-ratelimit-remaining") == "0"
        or "rate limit" in failure.message.lower()
        or failure.status == 429
    )


def wait_for(failure: Failure, attempt: int, now: float, policy: RetryPolicy) -> float | None:
    """Seconds to wait before retrying after `failure` on attempt `attempt` (1-based), or None."""
    if attempt >= policy.attempts:
        return None
    headers = {k.lower(): v for k, v in failure.headers.items()}
    if is_rate_limited(failure):
        if "retry-after" in headers:
            wait = _number(headers["retry-after"], 60.0)
        elif "x-ratelimit-reset" in headers:
            wait = max(0.0, _number(headers["x-ratelimit-reset"], now + 60.0) - now)
        else:
            wait = 60.0  # GitHub: wait at least a minute when it gives no hint
        return wait if wait <= policy.max_rate_limit_wait else None
    if failure.status == 0 or failure.status >= 500:
        return min(policy.max_backoff, policy.backoff * 2 ** (attempt - 1))
    return None


def _number(text: str, default: float) -> float:
    try:
        return float(text)
    except ValueError:
        return default


@dataclass
class Clock:
    """The only place that sleeps or reads the time; tests pass a fake that records waits."""

    sleep: Callable[[float], None] = time.sleep
    now: Callable[[], float] = time.time


@dataclass
class FakeClock(Clock):
    """A clock for tests: sleeping advances `now` and records the wait."""

    start: float = 1_700_000_000.0
    waits: list[float] = field(default_factory=list)

    def __post_init__(self) -> None:
        self._t = self.start
        self.sleep = self._sleep
        self.now = lambda: self._t

    def _sleep(self, seconds: float) -> None:
        self.waits.append(seconds)
        self._t += seconds
