import sqlparse
sql = 'CREATE TRIGGER t BEGIN SELECT CASE WHEN a THEN 1 END; SELECT CASE WHEN b THEN 2 END; END; SELECT 1;'
assert len(sqlparse.split(sql)) == 2, 'scrub: wrong result still present'
