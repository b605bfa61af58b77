import sqlparse
sqlparse.format('select ( as ) from users', reindent=True)
