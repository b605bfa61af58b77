"""Parse Content-Type headers of incoming uploads before handing them to the form parser."""
import collections
import time

from multipart.multipart import parse_options_header

HEADERS = [
    "multipart/form-data; boundary=----abc",
    "application/x-www-form-urlencoded; charset=utf-8",
    # a scanner sent this header to our upload endpoint; the worker never came back
    'application/x-www-form-urlencoded; !="' + "\\" * 50,
]
SLOW_MS = 50
stats = collections.Counter()


class Request:
    def __init__(self, content_type):
        self.content_type = content_type
        self.started = time.monotonic()

    def kind(self):
        ctype, options = parse_options_header(self.content_type)
        return ctype.decode(), {k.decode(): v.decode() for k, v in options.items()}


def route(kind):
    if kind.startswith("multipart/"):
        return "multipart"
    if kind == "application/x-www-form-urlencoded":
        return "form"
    return "raw"


def elapsed_ms(request):
    return (time.monotonic() - request.started) * 1000


for header in HEADERS:
    request = Request(header)
    kind, options = request.kind()
    stats[route(kind)] += 1
    took = elapsed_ms(request)
    if took > SLOW_MS:
        print("slow header:", took)
    print(kind, options)

def summarize(counter):
    total = sum(counter.values())
    return {k: f"{v / total:.0%}" for k, v in counter.items()} if total else {}


print(dict(stats))
