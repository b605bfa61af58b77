"""Render user comments for the forum preview pane."""
import html
import re
import time

from markdown_it import MarkdownIt

RENDER_OPTIONS = {"html": False, "linkify": False, "typographer": False}
MAX_PREVIEW = 400
BANNED = re.compile(r"\b(spam|scam)\b", re.I)


def make_renderer():
    md = MarkdownIt("commonmark", RENDER_OPTIONS)
    md.enable("table")
    return md


def sanitize(text):
    return BANNED.sub("***", text)


def excerpt(rendered, limit=MAX_PREVIEW):
    plain = re.sub(r"<[^>]+>", "", rendered)
    plain = html.unescape(plain)
    return plain[:limit]


class Preview:
    def __init__(self):
        self.md = make_renderer()
        self.timings = []

    def render(self, comment):
        start = time.perf_counter()
        out = self.md.render(sanitize(comment))
        self.timings.append(time.perf_counter() - start)
        return out


COMMENTS = [
    "Great **post**, thanks!",
    "| a | b |\n|---|---|\n| 1 | 2 |",
    # a bot pasted a huge run of ampersands into the comment box
    "&" * 600000,
]

preview = Preview()
for comment in COMMENTS:
    rendered = preview.render(comment)
    print(len(comment), "->", len(rendered), repr(excerpt(rendered, 40)))
print("slowest:", max(preview.timings))
