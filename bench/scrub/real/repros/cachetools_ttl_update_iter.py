import time

from cachetools import TTLCache

TTL = 300
MAXSIZE = 64
SESSIONS = ["alice", "bob", "carol", "dave", "erin"]


class FakeClock:
    def __init__(self):
        self.now = 1000.0

    def __call__(self):
        return self.now

    def advance(self, seconds):
        self.now += seconds


def make_cache(clock):
    return TTLCache(maxsize=MAXSIZE, ttl=TTL, timer=clock)


def refresh_all(cache):
    touched = []
    for user in cache:
        touched.append(user)
        cache[user] = cache[user] + 1  # bump the hit counter, which also renews the TTL
    return touched


def expired(cache, names):
    return [n for n in names if n not in cache]


class Metrics:
    def __init__(self):
        self.samples = []

    def sample(self, cache):
        self.samples.append((len(cache), time.monotonic()))


clock = FakeClock()
cache = make_cache(clock)
metrics = Metrics()
for user in SESSIONS:
    cache[user] = 0
    clock.advance(1)
metrics.sample(cache)
touched = refresh_all(cache)
metrics.sample(cache)
print("touched:", touched)
print("counts:", dict(cache))
clock.advance(TTL - 2)
print("expired:", expired(cache, SESSIONS))
print(touched == SESSIONS)
