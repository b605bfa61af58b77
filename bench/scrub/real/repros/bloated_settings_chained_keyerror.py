"""Service settings loader: merges the shipped defaults with the operator's overrides."""
import argparse
import copy
import json
import logging
import os
import sys
from dataclasses import dataclass, field

import tomlkit

log = logging.getLogger("settings")
SHIPPED = """
[server]
host = "0.0.0.0"
port = 8080

[cache]
backend = "redis"
ttl = 300

[metrics]
enabled = true
"""
FALLBACKS = {"server": {"host": "127.0.0.1", "port": 8000}, "metrics": {"enabled": False}}
REQUIRED = ("server", "cache", "metrics")


@dataclass
class Settings:
    values: dict
    source: str = "shipped"
    warnings: list = field(default_factory=list)

    def section(self, name):
        try:
            return self.values[name]
        except KeyError:
            self.warnings.append(f"{name} missing, using fallback")
            return FALLBACKS[name]


def parse_args(argv):
    parser = argparse.ArgumentParser(prog="svc")
    parser.add_argument("--disable", action="append", default=["cache"])
    parser.add_argument("--verbose", action="store_true")
    return parser.parse_args(argv)


def apply_overrides(doc, disabled):
    for name in disabled:
        doc[name] = False
    return doc


def reload_text(doc):
    text = tomlkit.dumps(doc)
    log.debug("rendered %d bytes", len(text))
    return tomlkit.parse(text)


def summarize(settings):
    rows = []
    for name in REQUIRED:
        value = settings.section(name)
        rows.append((name, json.dumps(value, default=str)[:40]))
    return rows


def main(argv):
    args = parse_args(argv)
    logging.basicConfig(level=logging.DEBUG if args.verbose else logging.WARNING)
    doc = tomlkit.parse(SHIPPED)
    snapshot = copy.deepcopy(doc.unwrap())
    apply_overrides(doc, args.disable)
    settings = Settings(reload_text(doc).unwrap())
    print("pid", os.getpid() > 0, "python", sys.version_info[0])
    for name, value in summarize(settings):
        print(f"{name:8} {value}")
    print("changed:", sorted(k for k in snapshot if snapshot[k] != settings.values.get(k)))
    return 0


if __name__ == "__main__":
    main([])
