"""Reproduce: topo_order reports a cycle for a pipeline built from a YAML-like spec."""
import re
import sys
import time
import textwrap
import logging
from collections import defaultdict

from minilib import topo_order

logging.basicConfig(level=logging.ERROR)

SPEC = textwrap.dedent("""
    stage fetch:
    stage clean: fetch
    stage features: clean
    stage split: features
    stage train: split
    stage evaluate: train split
    stage report: evaluate
    stage publish: report
    stage audit: publish report
    stage fetch_more: audit
""")


class Stage:
    def __init__(self, name, deps):
        self.name = name
        self.deps = list(deps)
        self.created = time.time()

    def __repr__(self):
        return f"Stage({self.name!r}, deps={self.deps})"


class Pipeline:
    def __init__(self):
        self.stages = {}

    def add(self, stage):
        if stage.name in self.stages:
            raise ValueError(f"duplicate stage {stage.name}")
        self.stages[stage.name] = stage

    def graph(self):
        return {name: stage.deps for name, stage in self.stages.items()}

    def describe(self):
        lines = []
        for name, stage in sorted(self.stages.items()):
            lines.append(f"{name} <- {', '.join(stage.deps) or '-'}")
        return "\n".join(lines)


def parse_spec(text):
    pattern = re.compile(r"stage (\w+):\s*(.*)")
    stages = []
    for line in text.strip().splitlines():
        match = pattern.match(line.strip())
        if not match:
            continue
        name, deps = match.group(1), match.group(2).split()
        stages.append(Stage(name, deps))
    return stages


def add_feedback_edges(pipeline, edges):
    # a retraining loop: fetch depends on the audit of the previous run
    for source, target in edges:
        pipeline.stages[source].deps.append(target)


def count_fanout(graph):
    fanout = defaultdict(int)
    for deps in graph.values():
        for dep in deps:
            fanout[dep] += 1
    return dict(fanout)


def build():
    pipeline = Pipeline()
    for stage in parse_spec(SPEC):
        pipeline.add(stage)
    add_feedback_edges(pipeline, [("fetch", "fetch_more")])
    return pipeline


def main():
    pipeline = build()
    print(pipeline.describe())
    graph = pipeline.graph()
    fanout = count_fanout(graph)
    print("max fanout", max(fanout.values()))
    started = time.time()
    order = topo_order(graph)
    print("order:", " -> ".join(order))
    print("took", round(time.time() - started, 4))


if __name__ == "__main__":
    try:
        main()
    finally:
        sys.stdout.flush()
