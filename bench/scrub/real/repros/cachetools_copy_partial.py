import copy
import functools
import logging

from cachetools import LRUCache, cached

logging.basicConfig(level=logging.WARNING)
log = logging.getLogger("pricing")
TAX = {"de": 0.19, "fr": 0.2, "us": 0.0}
CACHE_SIZE = 128


def price_with_tax(country, amount):
    log.debug("computing %s %s", country, amount)
    return round(amount * (1 + TAX[country]), 2)


class PriceService:
    def __init__(self):
        self.lookups = {}

    def register(self, country):
        fn = functools.partial(price_with_tax, country)
        self.lookups[country] = cached(LRUCache(CACHE_SIZE))(fn)
        return self.lookups[country]

    def quote(self, country, amount):
        return self.lookups[country](amount)

    def snapshot(self):
        # the request handler gets its own copy of the service for each worker thread
        return {k: copy.copy(v) for k, v in self.lookups.items()}


def totals(service, basket):
    return {c: sum(service.quote(c, a) for a in basket) for c in service.lookups}


service = PriceService()
for country in TAX:
    service.register(country)
basket = [10.0, 25.5, 3.2]
print(totals(service, basket))
workers = [service.snapshot() for _ in range(2)]
print(len(workers), "worker copies")


def format_quote(country, amount):
    value = price_with_tax(country, amount)
    symbol = {"us": "$"}.get(country, "EUR ")
    return f"{symbol}{value:.2f}"


for country in sorted(TAX):
    log.info(format_quote(country, 99.0))
print(workers[0]["de"](10.0))
