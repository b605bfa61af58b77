from more_itertools import interleave_evenly
list(interleave_evenly([]))
