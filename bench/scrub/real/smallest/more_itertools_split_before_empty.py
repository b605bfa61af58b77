from more_itertools import split_before
print('worker', list(split_before([], bool, maxsplit=0)), 0)
