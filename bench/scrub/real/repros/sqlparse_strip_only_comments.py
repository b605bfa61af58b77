import io

import sqlparse

MIGRATIONS = {
    "0001_init.sql": "CREATE TABLE t (id int);\n-- seed data follows\nINSERT INTO t VALUES (1);\n",
    "0002_noop.sql": "-- this migration was reverted\n/* kept so numbering stays stable */\n",
    "0003_index.sql": "CREATE INDEX ix ON t (id); -- speeds up lookups\n",
}
DRY_RUN = True
CHUNK = 4096


class Runner:
    def __init__(self, dry_run=DRY_RUN):
        self.dry_run = dry_run
        self.executed = []
        self.skipped = []

    def clean(self, sql):
        return sqlparse.format(sql, strip_comments=True).strip()

    def run(self, name, sql):
        body = self.clean(sql)
        if not body:
            self.skipped.append(name)
            return
        for statement in sqlparse.split(body):
            if self.dry_run:
                self.executed.append((name, statement))


def read_chunks(text, size=CHUNK):
    stream = io.StringIO(text)
    while True:
        block = stream.read(size)
        if not block:
            return
        yield block


def checksum(text):
    total = 0
    for block in read_chunks(text):
        for ch in block:
            total = (total * 31 + ord(ch)) % 1_000_003
    return total


runner = Runner()
sums = {}
for name in sorted(MIGRATIONS):
    sums[name] = checksum(MIGRATIONS[name])
    runner.run(name, MIGRATIONS[name])

print("checksums:", sums)
print("executed:", len(runner.executed), "skipped:", runner.skipped)
for name, statement in runner.executed:
    print(f"{name}: {statement}")
assert runner.skipped == ["0002_noop.sql"], runner.skipped
