import collections
import string

from more_itertools import bucket, first

EVENTS = ["a:login", "b:logout", "a:view", "c:login", "a:logout"]
KNOWN_USERS = {"a", "b", "c"}
PROBE = ["a", "z", "q"]


def user_of(event):
    return event.split(":", 1)[0]


def action_of(event):
    return event.split(":", 1)[1]


class Report:
    def __init__(self):
        self.rows = []

    def add(self, user, actions):
        self.rows.append((user, len(actions), ",".join(actions)))

    def render(self):
        return "\n".join(f"{u:3} {n:2} {a}" for u, n, a in self.rows)


def letters_seen(events):
    return sorted({ch for e in events for ch in e if ch in string.ascii_lowercase})


by_user = bucket(EVENTS, key=user_of)
# checking who is present is what our health endpoint does on every request
present = {name: (name in by_user) for name in PROBE}
report = Report()
for user in sorted(by_user):
    actions = [action_of(e) for e in by_user[user]]
    report.add(user, actions)
print(report.render())
print("present:", present)
counts = collections.Counter(action_of(e) for e in EVENTS)
print(counts.most_common(2), first(letters_seen(EVENTS)))


def histogram(events, width=20):
    counts = collections.Counter(user_of(e) for e in events)
    top = max(counts.values())
    for user, n in sorted(counts.items()):
        print(user, "#" * (n * width // top))


histogram(EVENTS)
print(sorted(by_user) == ["a", "b", "c"])
