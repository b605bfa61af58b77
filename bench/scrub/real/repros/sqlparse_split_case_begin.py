import hashlib

import sqlparse

SCRIPT = """
CREATE TRIGGER audit_totals BEGIN
  SELECT CASE WHEN amount > 0 THEN 'credit' END;
  SELECT CASE WHEN amount < 0 THEN 'debit' END;
END;
SELECT count(*) FROM ledger;
"""
ENCODING = "utf-8"
EXPECTED_STATEMENTS = 2


def fingerprint(statement):
    return hashlib.sha1(statement.encode(ENCODING)).hexdigest()[:8]


class Batch:
    def __init__(self, text):
        self.text = text
        self.parts = []
        self.ids = []

    def split(self):
        self.parts = [p.strip() for p in sqlparse.split(self.text) if p.strip()]
        self.ids = [fingerprint(p) for p in self.parts]
        return self.parts

    def describe(self):
        lines = []
        for ident, part in zip(self.ids, self.parts):
            first = part.splitlines()[0]
            lines.append(f"{ident}  {first}")
        return "\n".join(lines)


def kinds(parts):
    return [sqlparse.parse(p)[0].get_type() for p in parts]


batch = Batch(SCRIPT)
parts = batch.split()
print(batch.describe())
print("types:", kinds(parts))
if len(parts) != EXPECTED_STATEMENTS:
    print("the trigger body was cut in the middle")
print(len(parts) == EXPECTED_STATEMENTS)


def stats(parts):
    return {"statements": len(parts), "chars": sum(len(p) for p in parts)}


print(stats(parts))
