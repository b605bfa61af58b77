import json
import sys
import textwrap

import sqlparse

FORMAT_OPTIONS = dict(reindent=True, keyword_case="upper", identifier_case=None, indent_width=2)
BANNER = "-- formatted by qfmt"
HISTORY_FILE = "history.json"


class QueryHistory:
    def __init__(self):
        self.entries = []
        self.by_user = {}

    def add(self, user, sql):
        self.entries.append({"user": user, "sql": sql})
        self.by_user.setdefault(user, []).append(sql)

    def dump(self):
        return json.dumps(self.entries, indent=1)


def pretty(sql, options=FORMAT_OPTIONS):
    out = sqlparse.format(sql, **options)
    return BANNER + "\n" + out


def preview(sql, width=60):
    flat = " ".join(sql.split())
    return textwrap.shorten(flat, width=width, placeholder=" ...")


def render_table(rows):
    widths = [max(len(str(r[i])) for r in rows) for i in range(len(rows[0]))]
    lines = []
    for row in rows:
        lines.append(" | ".join(str(c).ljust(w) for c, w in zip(row, widths)))
    return "\n".join(lines)


history = QueryHistory()
history.add("ana", "select id, name from users where active = 1")
history.add("ben", "select count(*) from orders group by day")
# a user typed an alias with nothing to alias; the editor formats on every keystroke
history.add("ana", "select ( as ) from users")
history.add("cai", "update users set active = 0 where id = 7")

rows = [("user", "chars", "preview")]
for entry in history.entries:
    rows.append((entry["user"], len(entry["sql"]), preview(entry["sql"], 30)))
print(render_table(rows))

formatted = []
for entry in history.entries:
    formatted.append(pretty(entry["sql"]))
    sys.stdout.write(".")
print()
print(len(formatted), "queries formatted")
for text in formatted:
    print(text)
