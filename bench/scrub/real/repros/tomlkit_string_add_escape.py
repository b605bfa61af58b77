import os

import tomlkit

TEMPLATE = """
[tool.greeter]
message = "Hello"
signature = "ops"
"""
SUFFIXES = [", world", ' (say "hi")', "!"]
OUTPUT = "pyproject.generated.toml"
BACKUP = True


class Settings:
    def __init__(self, text):
        self.doc = tomlkit.parse(text)
        self.history = []

    @property
    def section(self):
        return self.doc["tool"]["greeter"]

    def append(self, key, suffix):
        before = str(self.section[key])
        self.section[key] = self.section[key] + suffix
        self.history.append((key, before, str(self.section[key])))

    def text(self):
        return tomlkit.dumps(self.doc)


def roundtrip(text):
    return tomlkit.parse(text)


def backup_name(path):
    root, ext = os.path.splitext(path)
    return root + ".bak" + ext


def show_history(history):
    for key, before, after in history:
        print(f"{key}: {before!r} -> {after!r}")


settings = Settings(TEMPLATE)
for suffix in SUFFIXES:
    settings.append("message", suffix)
show_history(settings.history)
text = settings.text()
if BACKUP:
    print("would back up to", backup_name(OUTPUT))
print(text)
again = roundtrip(text)
print(again["tool"]["greeter"]["message"])
