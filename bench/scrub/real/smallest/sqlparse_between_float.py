import sqlparse
from sqlparse import tokens as T
assert sqlparse.parse('x BETWEEN .03 AND .06')[0].tokens[2].ttype is T.Keyword, 'scrub: wrong result still present'
