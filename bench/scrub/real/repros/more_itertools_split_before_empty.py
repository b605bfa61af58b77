import itertools
import operator

from more_itertools import split_before

HEADER = "#"
LOGS = {
    "web": ["# start", "GET /", "GET /a", "# start", "GET /b"],
    "worker": [],
    "cron": ["# start", "tick"],
}
MAXSPLIT = 0


def is_header(line):
    return line.startswith(HEADER)


def sessions(lines, maxsplit=MAXSPLIT):
    return list(split_before(lines, is_header, maxsplit=maxsplit))


def requests_in(session):
    return [line for line in session if not is_header(line)]


def flatten(groups):
    return list(itertools.chain.from_iterable(groups))


class Summary:
    def __init__(self):
        self.per_source = {}

    def add(self, source, groups):
        self.per_source[source] = len(groups)

    def busiest(self):
        return max(self.per_source.items(), key=operator.itemgetter(1))


summary = Summary()
for source, lines in LOGS.items():
    groups = sessions(lines)
    summary.add(source, groups)
    print(source, groups, len(flatten(groups)))
print("busiest:", summary.busiest())
print(summary.per_source)


def longest_session(groups):
    best = []
    for group in groups:
        if len(group) > len(best):
            best = group
    return best


print(longest_session(sessions(LOGS["web"])))
print(sessions(LOGS["worker"]) == [])
