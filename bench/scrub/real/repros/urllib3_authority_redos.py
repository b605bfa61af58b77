import string
import time

from urllib3.exceptions import LocationParseError
from urllib3.util import parse_url

ALLOWED_SCHEMES = {"http", "https"}
SEEN = []


def looks_safe(url):
    return all(ch in string.printable for ch in url) and len(url) < 200_000


def check(url):
    started = time.monotonic()
    try:
        parsed = parse_url(url)
    except LocationParseError:
        SEEN.append(("rejected", url[:30]))
        return False
    SEEN.append(("parsed", parsed.host, round(time.monotonic() - started, 3)))
    return parsed.scheme in ALLOWED_SCHEMES


class Crawler:
    def __init__(self, seeds):
        self.queue = list(seeds)
        self.accepted = []

    def run(self):
        while self.queue:
            url = self.queue.pop(0)
            if looks_safe(url) and check(url):
                self.accepted.append(url)
        return self.accepted


# a link scraped from a spam page: userinfo made of tens of thousands of `a@`
SPAM = "http://" + "a@" * 40_000 + "b:c"
crawler = Crawler(["https://example.org/", "http://user@example.com:8080/x", SPAM])
print(crawler.run())
print(SEEN)
