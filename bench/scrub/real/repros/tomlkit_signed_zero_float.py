import json

import tomlkit

PROFILE = """
[calibration]
offset = -1.5
gain = 2.0
enabled = true
"""
RESET_FACTORS = {"offset": 0, "gain": 1}
PRECISION = 3


def load_profile(text):
    return tomlkit.parse(text)


def reset(doc, factors=RESET_FACTORS):
    table = doc["calibration"]
    for key, factor in factors.items():
        table[key] = table[key] * factor
    return doc


def to_json(doc):
    return json.dumps({k: float(v) if isinstance(v, float) else v for k, v in doc["calibration"].items()})


def rounded(doc, digits=PRECISION):
    return {k: round(float(v), digits) for k, v in doc["calibration"].items() if not isinstance(v, bool)}


class Store:
    def __init__(self):
        self.saved = {}

    def save(self, name, doc):
        self.saved[name] = tomlkit.dumps(doc)
        return self.saved[name]

    def load(self, name):
        return tomlkit.parse(self.saved[name])


store = Store()
doc = load_profile(PROFILE)
print("before:", rounded(doc))
reset(doc)
print("after:", rounded(doc), to_json(doc))
text = store.save("device-7", doc)
print(text)
reloaded = store.load("device-7")
print(reloaded["calibration"]["offset"])
