"""Reproduce: a two-layer network built on minilib.matmul fails for batch sizes above 1."""
import math
import random
import sys
import time
import statistics
from functools import reduce

import minilib

random.seed(7)
EPS = 1e-6


def zeros(rows, cols):
    return [[0.0 for _ in range(cols)] for _ in range(rows)]


def randn(rows, cols, scale=1.0):
    return [[random.gauss(0, scale) for _ in range(cols)] for _ in range(rows)]


def transpose(m):
    return [list(col) for col in zip(*m)]


def relu(m):
    return [[max(0.0, x) for x in row] for row in m]


def add_bias(m, bias):
    return [[x + b for x, b in zip(row, bias)] for row in m]


def softmax(row):
    top = max(row)
    exps = [math.exp(x - top) for x in row]
    total = sum(exps)
    return [e / total for e in exps]


class Layer:
    def __init__(self, fan_in, fan_out):
        self.weight = randn(fan_in, fan_out, scale=1 / math.sqrt(fan_in))
        self.bias = [0.0] * fan_out
        self.fan_in = fan_in
        self.fan_out = fan_out

    def __call__(self, x):
        return add_bias(minilib.matmul(x, self.weight), self.bias)


class Network:
    def __init__(self, sizes):
        self.layers = [Layer(a, b) for a, b in zip(sizes, sizes[1:])]

    def __call__(self, x):
        for index, layer in enumerate(self.layers):
            x = layer(x)
            if index < len(self.layers) - 1:
                x = relu(x)
        return [softmax(row) for row in x]

    def parameters(self):
        return sum(l.fan_in * l.fan_out + l.fan_out for l in self.layers)


def make_batch(batch, features):
    inputs = randn(batch, features)
    labels = [random.randrange(3) for _ in range(batch)]
    return inputs, labels


def accuracy(probs, labels):
    hits = [max(range(len(p)), key=p.__getitem__) == y for p, y in zip(probs, labels)]
    return sum(hits) / len(hits)


def benchmark(net, batches):
    times = []
    for inputs, labels in batches:
        start = time.perf_counter()
        probs = net(transpose(inputs) if len(inputs) > 1 else inputs)
        times.append(time.perf_counter() - start)
        print("accuracy", accuracy(probs, labels))
    return statistics.mean(times)


def main():
    environment_report()
    net = Network([4, 8, 3])
    print("parameters", net.parameters())
    batches = [make_batch(1, 4), make_batch(2, 4), make_batch(5, 4)]
    mean_time = benchmark(net, batches)
    print("mean time", round(mean_time, 6))
    print("total", reduce(lambda a, b: a + b, [len(b[0]) for b in batches]))



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
