import sqlparse
sqlparse.parse("'" + '\\\\' * 40)
