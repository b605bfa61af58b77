"""Load the physics constants table that the simulation reads at start-up."""
import math
import sys
from dataclasses import dataclass

import tomlkit

CONFIG = """
[simulation]
name = "cooling"
steps = 1000
dt = 1e-3

[constants]
zero_point = 0E2
boltzmann = 1.380649e-23
planck = 6.62607015e-34
"""
UNITS = {"boltzmann": "J/K", "planck": "J*s", "zero_point": "K"}
VERBOSE = False


@dataclass
class Constant:
    name: str
    value: float
    unit: str

    def scaled(self, factor):
        return Constant(self.name, self.value * factor, self.unit)


def load(text):
    doc = tomlkit.parse(text)
    constants = []
    for name, value in doc["constants"].items():
        constants.append(Constant(name, float(value), UNITS.get(name, "")))
    return doc, constants


def check(constants):
    bad = [c.name for c in constants if math.isnan(c.value)]
    if bad:
        raise ValueError(f"nan constants: {bad}")
    return True


def describe(doc):
    sim = doc["simulation"]
    return f"{sim['name']}: {sim['steps']} steps of {sim['dt']}"


def table(constants):
    width = max(len(c.name) for c in constants)
    for c in constants:
        print(c.name.ljust(width), f"{c.value:.3e}", c.unit)


if VERBOSE:
    print("parsing", len(CONFIG), "chars")
doc, constants = load(CONFIG)
print(describe(doc))
check(constants)
table(constants)
scaled = [c.scaled(1e3) for c in constants]
print("scaled:", [round(c.value, 30) for c in scaled])
sys.exit(0)
