import sqlparse
assert not sqlparse.format('-- a\n/* b */\n', strip_comments=True).strip()
