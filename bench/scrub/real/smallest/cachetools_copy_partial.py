import copy, functools
from cachetools import LRUCache, cached
copy.copy(cached(LRUCache(8))(functools.partial(max, 1)))
