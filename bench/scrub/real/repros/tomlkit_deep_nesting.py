"""Validate TOML documents uploaded by users of the config service."""
import hashlib
import time

import tomlkit
from tomlkit.exceptions import ParseError

LIMITS = {"max_bytes": 200_000, "max_keys": 500}
REJECT_LOG = []


def upload_from_user(depth):
    # a fuzzing client sends arrays nested thousands of levels deep
    return "values = " + "[" * depth + "]" * depth + "\n"


def digest(text):
    return hashlib.sha256(text.encode()).hexdigest()[:12]


def count_keys(doc):
    total = 0
    for key, value in doc.items():
        total += 1
        if isinstance(value, dict):
            total += count_keys(value)
    return total


def validate(text):
    if len(text) > LIMITS["max_bytes"]:
        return "too large"
    try:
        doc = tomlkit.parse(text)
    except ParseError as exc:
        REJECT_LOG.append((digest(text), str(exc)))
        return "invalid"
    if count_keys(doc) > LIMITS["max_keys"]:
        return "too many keys"
    return "ok"


class Timer:
    def __enter__(self):
        self.start = time.perf_counter()
        return self

    def __exit__(self, *exc):
        self.took = time.perf_counter() - self.start
        return False


uploads = {
    "simple": 'name = "a"\nport = 80\n',
    "nested-ok": "x = [[1], [2, [3]]]\n",
    "fuzz": upload_from_user(3000),
}
results = {}
for name, text in uploads.items():
    with Timer() as t:
        results[name] = validate(text)
    print(f"{name:10} {results[name]:8} {t.took * 1000:.1f} ms")
print("rejected:", len(REJECT_LOG))
