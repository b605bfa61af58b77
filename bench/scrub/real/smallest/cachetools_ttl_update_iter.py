from cachetools import TTLCache
cache = TTLCache(maxsize=8, ttl=300)
cache.update({'alice': 0, 'bob': 0})
touched = []
for user in cache:
    touched.append(user)
    cache[user] = 1
print('touched:', touched)
