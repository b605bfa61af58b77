import logging

import sqlparse
from sqlparse import tokens as T

log = logging.getLogger("linter")
RULES = {"no_select_star": True, "max_statements": 5}


def statements(text):
    parsed = sqlparse.parse(text)
    log.info("%d statements", len(parsed))
    return parsed


def star_selects(stmts):
    found = []
    for stmt in stmts:
        if stmt.get_type() == "SELECT" and any(t.ttype is T.Wildcard for t in stmt.flatten()):
            found.append(str(stmt).strip())
    return found


class Linter:
    def __init__(self, rules):
        self.rules = rules
        self.problems = []

    def lint(self, text):
        stmts = statements(text)
        if len(stmts) > self.rules["max_statements"]:
            self.problems.append("too many statements")
        if self.rules["no_select_star"]:
            self.problems += [f"select *: {s}" for s in star_selects(stmts)]
        return self.problems


linter = Linter(RULES)
print(linter.lint("select * from users; select id from orders;"))
# a user pasted a Windows path into a string literal and never closed it
pasted = "insert into files values ('" + "\\\\" * 40
print(linter.lint(pasted))
