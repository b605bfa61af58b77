"""A small stand-in library for the pure-Python bench cases: each function fails inside itself."""

from __future__ import annotations


def merge_tables(left: list[dict], right: list[dict], key: str) -> list[dict]:
    index = {row[key]: row for row in right if key in row}
    merged = []
    for row in left:
        if row[key] not in index:
            raise KeyError(f"join key {row[key]!r} not found in right table ({len(right)} rows)")
        merged.append({**row, **index[row[key]]})
    return merged


def validate_options(options: dict, schema: dict) -> dict:
    for name, value in options.items():
        if name not in schema:
            raise ValueError(f"unknown option {name!r}: valid options are {sorted(schema)}")
        if not isinstance(value, schema[name]):
            raise TypeError(f"option {name!r} expects {schema[name].__name__}")
    return options


def topo_order(graph: dict[str, list[str]]) -> list[str]:
    seen, done, order = set(), set(), []

    def visit(node: str) -> None:
        if node in done:
            return
        if node in seen:
            raise RuntimeError(f"cycle detected in pipeline graph at stage {node!r}")
        seen.add(node)
        for dep in graph.get(node, []):
            visit(dep)
        done.add(node)
        order.append(node)

    for node in graph:
        visit(node)
    return order


def tokenize(text: str) -> list[str]:
    tokens, current, quote = [], "", None
    for _pos, ch in enumerate(text):
        if quote:
            if ch == quote:
                tokens.append(current)
                current, quote = "", None
            else:
                current += ch
        elif ch in "'\"":
            quote = ch
        elif ch.isspace():
            if current:
                tokens.append(current)
            current = ""
        else:
            current += ch
    if quote:
        raise SyntaxError(f"unterminated quote opened before position {len(text)}")
    return tokens + ([current] if current else [])


def matmul(a: list[list[float]], b: list[list[float]]) -> list[list[float]]:
    if len(a[0]) != len(b):
        raise ValueError(f"incompatible shapes for matmul: ({len(a)}, {len(a[0])}) @ ({len(b)}, {len(b[0])})")
    return [[sum(x * y for x, y in zip(row, col)) for col in zip(*b)] for row in a]


class RingBuffer:
    def __init__(self, capacity: int) -> None:
        self.capacity = capacity
        self.items: list = []

    def push(self, item) -> None:
        if len(self.items) >= self.capacity:
            raise OverflowError(f"ring buffer is full: capacity {self.capacity} reached without drain")
        self.items.append(item)

    def drain(self) -> list:
        out, self.items = self.items, []
        return out


def percentile(values: list[float], q: float) -> float:
    if not values:
        raise ZeroDivisionError("percentile of an empty sample is undefined")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q / 100 * len(ordered)))]


def parse_duration(text: str) -> float:
    units = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0}
    for suffix in sorted(units, key=len, reverse=True):
        if text.endswith(suffix):
            return float(text[: -len(suffix)]) * units[suffix]
    raise ValueError(f"duration {text!r} has no recognised unit suffix")
