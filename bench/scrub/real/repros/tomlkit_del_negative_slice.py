import tomlkit

MANIFEST = """
[release]
name = "tool"
channels = ["stable", "beta", "nightly", "canary", "dev"]
keep = 2
"""
DRY_RUN = False
AUDIT = []


def load():
    return tomlkit.parse(MANIFEST)


def prune_channels(doc):
    release = doc["release"]
    keep = int(release["keep"])
    before = list(release["channels"])
    del release["channels"][keep - len(before):]
    AUDIT.append(("prune", before, list(release["channels"])))
    return doc


def render(doc):
    return tomlkit.dumps(doc)


def parse_back(text):
    return tomlkit.parse(text)["release"]["channels"]


def show_audit():
    for action, before, after in AUDIT:
        print(action, before, "->", after)


class Publisher:
    def __init__(self, dry_run=DRY_RUN):
        self.dry_run = dry_run
        self.sent = []

    def publish(self, text):
        if self.dry_run:
            return False
        self.sent.append(text)
        return True


doc = prune_channels(load())
show_audit()
text = render(doc)
publisher = Publisher()
publisher.publish(text)
print(text)
print("published:", len(publisher.sent))
print(parse_back(text) == ["stable", "beta"])
