"""Reproduce: validate_options rejects an option that the docs say is valid."""
import sys
import copy
import json
import logging
import itertools
from collections import OrderedDict

import minilib

log = logging.getLogger(__name__)
DEBUG = False

SCHEMA = {
    "learning_rate": float,
    "batch_size": int,
    "epochs": int,
    "optimizer": str,
    "momentum": float,
    "weight_decay": float,
    "scheduler": str,
    "warmup_steps": int,
}

DEFAULTS = OrderedDict(
    learning_rate=0.01,
    batch_size=32,
    epochs=10,
    optimizer="sgd",
    momentum=0.9,
    weight_decay=0.0,
    scheduler="cosine",
    warmup_steps=100,
)


class ConfigError(Exception):
    pass


class Config:
    def __init__(self, values=None):
        self.values = copy.deepcopy(DEFAULTS)
        if values:
            self.values.update(values)

    def override(self, **changes):
        updated = copy.deepcopy(self.values)
        updated.update(changes)
        return Config(updated)

    def as_dict(self):
        return dict(self.values)

    def __repr__(self):
        return f"Config({json.dumps(self.values)})"


def load_profile(name):
    profiles = {
        "small": {"batch_size": 8, "epochs": 2},
        "large": {"batch_size": 256, "epochs": 90, "warmup_steps": 2000},
        "finetune": {"learning_rate": 0.0001, "label_smoothing": 0.1},
    }
    if name not in profiles:
        raise ConfigError(f"no profile {name}")
    return profiles[name]


def expand_grid(base, grid):
    keys = sorted(grid)
    for combo in itertools.product(*(grid[k] for k in keys)):
        yield base.override(**dict(zip(keys, combo)))


def check(config):
    try:
        return minilib.validate_options(config.as_dict(), SCHEMA)
    except TypeError as exc:
        log.warning("type problem: %s", exc)
        return None


def describe(configs):
    for config in configs:
        if DEBUG:
            print(config)
    return len(configs)


def run():
    base = Config()
    grid = {"learning_rate": [0.1, 0.01], "batch_size": [16, 32]}
    configs = list(expand_grid(base, grid))
    print("grid size", describe(configs))
    for config in configs:
        check(config)
    for profile in ["small", "large", "finetune"]:
        config = base.override(**load_profile(profile))
        result = check(config)
        print(profile, "ok" if result else "skipped")


if __name__ == "__main__":
    run()
    print("all profiles validated")
    sys.exit(0)
