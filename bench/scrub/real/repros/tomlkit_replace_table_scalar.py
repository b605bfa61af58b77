import copy

import tomlkit

SETTINGS = """
[server]
host = "0.0.0.0"
port = 8080

[cache]
backend = "redis"
ttl = 300

[logging]
level = "info"
"""
OVERRIDES = {"cache": False}


def apply(doc, overrides):
    for key, value in overrides.items():
        doc[key] = value
    return doc


class History:
    def __init__(self):
        self.snapshots = []

    def keep(self, doc):
        self.snapshots.append(copy.deepcopy(doc.unwrap()))


history = History()
doc = tomlkit.parse(SETTINGS)
history.keep(doc)
apply(doc, OVERRIDES)
history.keep(doc)
text = tomlkit.dumps(doc)
print(text)
print(len(history.snapshots), "snapshots")
reread = tomlkit.parse(text).unwrap()
assert reread == history.snapshots[-1]
