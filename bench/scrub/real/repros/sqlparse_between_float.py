import re

import sqlparse
from sqlparse import tokens as T
from sqlparse.sql import Comparison, Identifier, Where

QUERIES = [
    "SELECT * FROM rates WHERE rate BETWEEN 0.01 AND 0.05",
    "SELECT * FROM rates WHERE rate BETWEEN .03 AND .06",
    "SELECT name FROM funds WHERE fee < 0.5",
]
STRICT = True
_NUMBER = re.compile(r"^-?\d*\.?\d+$")


def numbers_in(statement):
    found = []
    for token in statement.flatten():
        if token.ttype in T.Number:
            found.append(token.value)
    return found


def identifiers_in(statement):
    names = []
    for token in statement.tokens:
        if isinstance(token, Identifier):
            names.append(token.get_real_name())
        if isinstance(token, Where):
            for sub in token.tokens:
                if isinstance(sub, Comparison):
                    names.append(sub.left.value)
    return names


def literal_bounds(text):
    return [w for w in text.replace(",", " ").split() if _NUMBER.match(w)]


class Checker:
    def __init__(self, strict=STRICT):
        self.strict = strict
        self.problems = []

    def check(self, sql):
        statement = sqlparse.parse(sql)[0]
        expected = literal_bounds(sql)
        got = numbers_in(statement)
        if got != expected:
            self.problems.append((sql, expected, got))
        return got == expected


def report(checker):
    for sql, expected, got in checker.problems:
        print("mismatch:", sql)
        print("  literals in text:", expected)
        print("  number tokens:  ", got)


checker = Checker()
verdicts = {}
for sql in QUERIES:
    verdicts[sql] = checker.check(sql)
    ids = identifiers_in(sqlparse.parse(sql)[0])
report(checker)
keyword = [t for t in sqlparse.parse(QUERIES[1])[0].flatten() if t.value.upper() == "BETWEEN"][0]
print(keyword.ttype is T.Keyword)
