import sqlparse
assert sqlparse.parse('SELECT x FROM a.b.c')[0].tokens[-1].get_real_name() == 'c', 'scrub: wrong result still present'
