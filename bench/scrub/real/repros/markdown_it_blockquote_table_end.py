import textwrap

from markdown_it import MarkdownIt

EMAIL = textwrap.dedent("""\
    Hi team,

    see the numbers below.

    > | region | total |
    > | ------ | ----- |
    > | eu     | 12    |
    >""")
SIGNATURE = "-- \nops bot"
WRAP = 72


def quote_depth(line):
    depth = 0
    for ch in line:
        if ch == ">":
            depth += 1
        elif ch != " ":
            break
    return depth


def strip_signature(text):
    return text.split(SIGNATURE)[0]


class Mailer:
    def __init__(self):
        self.md = MarkdownIt().enable("table")
        self.outbox = []

    def compose(self, body):
        html_body = self.md.render(strip_signature(body))
        self.outbox.append(html_body)
        return html_body


def wrapped(text, width=WRAP):
    return "\n".join(textwrap.fill(p, width) for p in text.split("\n\n"))


depths = [quote_depth(line) for line in EMAIL.splitlines()]
print("quote depths:", depths)
print(wrapped("a " * 50))
mailer = Mailer()
html_body = mailer.compose(EMAIL)
print(html_body)
print(len(mailer.outbox))
