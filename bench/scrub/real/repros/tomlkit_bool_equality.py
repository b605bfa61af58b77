import copy
import difflib

import tomlkit

BASE = """
[features]
dark_mode = true
beta = false
telemetry = true
"""
OVERRIDE = """
[features]
dark_mode = true
beta = true
telemetry = true
"""
IGNORED = {"telemetry"}
COLOR = False


def flags(text):
    doc = tomlkit.parse(text)
    return doc, doc["features"]


def changed_keys(base, override):
    changed = []
    for key in override:
        if key in IGNORED:
            continue
        if base.item(key) != override.item(key):
            changed.append(key)
    return changed


def unified(base_text, override_text):
    return "".join(difflib.unified_diff(base_text.splitlines(True), override_text.splitlines(True),
                                        "base.toml", "override.toml"))


class Audit:
    def __init__(self):
        self.events = []

    def record(self, key, old, new):
        self.events.append((key, old, new))

    def summary(self):
        return ", ".join(f"{k}: {o} -> {n}" for k, o, n in self.events)


base_doc, base = flags(BASE)
over_doc, override = flags(OVERRIDE)
audit = Audit()
for key in changed_keys(base, override):
    audit.record(key, base[key], override[key])
print(audit.summary())
if COLOR:
    print("\033[1m" + unified(BASE, OVERRIDE) + "\033[0m")
snapshot = copy.deepcopy(dict(override))
print(snapshot)
print(changed_keys(base, override) == ["beta"])
