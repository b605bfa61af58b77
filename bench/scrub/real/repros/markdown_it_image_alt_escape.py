import json
import re

from markdown_it import MarkdownIt

GALLERY = [
    {"file": "/img/stars.png", "caption": "a \\* b"},
    {"file": "/img/plain.png", "caption": "plain caption"},
]
ALT = re.compile(r'alt="([^"]*)"')
INDENT = 2


def to_markdown(item):
    return f"![{item['caption']}]({item['file']})"


def render(markdown_text):
    return MarkdownIt().render(markdown_text)


def alt_texts(html_text):
    return ALT.findall(html_text)


class Accessibility:
    def __init__(self):
        self.missing = []
        self.checked = 0

    def check(self, item, alt):
        self.checked += 1
        if not alt.strip():
            self.missing.append(item["file"])


def export(items):
    return json.dumps(items, indent=INDENT)


audit = Accessibility()
results = {}
for item in GALLERY:
    html_text = render(to_markdown(item))
    alts = alt_texts(html_text)
    results[item["file"]] = alts
    audit.check(item, alts[0] if alts else "")
print(export(GALLERY))
print("checked:", audit.checked, "missing:", audit.missing)
print(results)
print(results["/img/stars.png"] == ["a * b"])
