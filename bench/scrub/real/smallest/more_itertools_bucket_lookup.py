from more_itertools import bucket
b = bucket(['a1'], key=lambda s: s[0])
'z' in b
assert sorted(b) == ['a'], 'scrub: wrong result still present'
