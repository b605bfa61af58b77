import random
import sys

from more_itertools import chunked, interleave_evenly

SEED = 1234
QUEUES = {
    "high": ["h1", "h2", "h3"],
    "low": ["l1", "l2", "l3", "l4", "l5", "l6"],
}
BATCH = 2


def fair_order(queues):
    lists = [q for q in queues.values() if q is not None]
    return list(interleave_evenly(lists))


class Scheduler:
    def __init__(self, seed=SEED):
        self.rng = random.Random(seed)
        self.log = []

    def plan(self, queues):
        order = fair_order(queues)
        self.log.append(len(order))
        return order

    def jitter(self, order):
        copy = list(order)
        self.rng.shuffle(copy)
        return copy


def batches(order, size=BATCH):
    return [list(b) for b in chunked(order, size)]


scheduler = Scheduler()
order = scheduler.plan(QUEUES)
print("order:", order)
print("batches:", batches(order))
print("jittered:", scheduler.jitter(order))
# at night every queue is drained and the dispatcher has nothing to interleave
night = {}
print("night:", scheduler.plan(night))
print("plans:", scheduler.log)


def describe(queues):
    parts = []
    for name, items in sorted(queues.items()):
        parts.append(f"{name}={len(items)}")
    return " ".join(parts) or "(empty)"


print(describe(QUEUES), describe(night))
sys.exit(0)
