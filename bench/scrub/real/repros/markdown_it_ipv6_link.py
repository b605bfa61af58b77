import re
from urllib.parse import urlparse

from markdown_it import MarkdownIt

DOC = """
# Local services

* Dashboard: [dash](http://[::1]:8000/)
* Metrics: [metrics](http://127.0.0.1:9090/)
* Docs: [docs](https://example.org/docs)
"""
ALLOWED_SCHEMES = {"http", "https"}
HREF = re.compile(r'href="([^"]+)"')


def render(text):
    return MarkdownIt().render(text)


def links(html_text):
    return HREF.findall(html_text)


def check_link(url):
    parsed = urlparse(url)
    if parsed.scheme not in ALLOWED_SCHEMES:
        return "bad scheme"
    try:
        parsed.port
    except ValueError:
        return "bad port"
    return "ok"


class LinkReport:
    def __init__(self):
        self.rows = []

    def add(self, url, verdict):
        self.rows.append((verdict, url))

    def failures(self):
        return [u for v, u in self.rows if v != "ok"]


html_text = render(DOC)
report = LinkReport()
for url in links(html_text):
    report.add(url, check_link(url))
for verdict, url in report.rows:
    print(f"{verdict:10} {url}")
print("failures:", report.failures())
print('href="http://[::1]:8000/"' in html_text)
