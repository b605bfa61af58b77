from pathlib import Path

import tomlkit
from tomlkit.exceptions import ParseError

CATALOG = """
[[fruit]]
apple.color = "red"

[potato]
season = "autumn"

[fruit.apple.texture]
smooth = true
"""


class CatalogError(Exception):
    pass


def load(text, source="catalog.toml"):
    try:
        return tomlkit.parse(text)
    except ParseError as exc:
        raise CatalogError(f"cannot read {source}") from exc


def colors(doc):
    return {name: item.get("color") for entry in doc["fruit"] for name, item in entry.items()}


class Report:
    def __init__(self, doc):
        self.doc = doc

    def lines(self):
        return [f"{name}: {color}" for name, color in sorted(colors(self.doc).items())]


print(Path("catalog.toml").suffix)
doc = load(CATALOG)
print("\n".join(Report(doc).lines()))
