"""Reproduce: RingBuffer overflows although the consumer drains every tick."""
import sys
import time
import queue
import random
import logging
import threading
from dataclasses import dataclass

from minilib import RingBuffer

logging.basicConfig(level=logging.CRITICAL)
log = logging.getLogger("ring")


@dataclass
class Event:
    tick: int
    source: str
    payload: float


class Producer:
    def __init__(self, name, rate, rng):
        self.name = name
        self.rate = rate
        self.rng = rng
        self.sent = 0

    def events(self, tick):
        for _ in range(self.rate):
            self.sent += 1
            yield Event(tick, self.name, self.rng.random())


class Consumer:
    def __init__(self, buffer, every):
        self.buffer = buffer
        self.every = every
        self.received = []

    def maybe_drain(self, tick):
        if tick % self.every == 0:
            batch = self.buffer.drain()
            self.received.extend(batch)
            log.info("tick %d drained %d", tick, len(batch))


class Metrics:
    def __init__(self):
        self.lock = threading.Lock()
        self.counts = {}

    def bump(self, key):
        with self.lock:
            self.counts[key] = self.counts.get(key, 0) + 1


def simulate(ticks, producers, consumer, metrics):
    for tick in range(1, ticks + 1):
        for producer in producers:
            for event in producer.events(tick):
                consumer.buffer.push(event)
                metrics.bump(event.source)
        consumer.maybe_drain(tick)


def background_noise(stop):
    q = queue.Queue()
    while not stop.is_set():
        q.put(time.time())
        time.sleep(0.001)


def main():
    environment_report()
    rng = random.Random(3)
    stop = threading.Event()
    noise = threading.Thread(target=background_noise, args=(stop,), daemon=True)
    noise.start()
    buffer = RingBuffer(capacity=16)
    producers = [Producer("sensor-a", 3, rng), Producer("sensor-b", 4, rng)]
    consumer = Consumer(buffer, every=3)
    metrics = Metrics()
    try:
        simulate(10, producers, consumer, metrics)
    finally:
        stop.set()
    print("received", len(consumer.received))
    print("counts", metrics.counts)



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
