import collections
import logging

import sqlparse
from sqlparse.sql import Identifier, IdentifierList
from sqlparse.tokens import Keyword

logging.basicConfig(level=logging.ERROR)
logger = logging.getLogger(__name__)

CATALOG = {
    "warehouse.sales.orders": ["id", "amount"],
    "warehouse.sales.customers": ["id", "name"],
    "staging.tmp": ["x"],
}
OPTIONS = {"case_sensitive": False, "allow_unknown": True, "max_tables": 20}


def from_tables(statement):
    seen_from = False
    for token in statement.tokens:
        if seen_from:
            if isinstance(token, IdentifierList):
                yield from token.get_identifiers()
            elif isinstance(token, Identifier):
                yield token
        if token.ttype is Keyword and token.value.upper() == "FROM":
            seen_from = True


def table_names(sql):
    statement = sqlparse.parse(sql)[0]
    return [ident.get_real_name() for ident in from_tables(statement)]


def lineage(queries):
    graph = collections.defaultdict(set)
    for target, sql in queries.items():
        for name in table_names(sql):
            graph[target].add(name)
    return graph


def short_names(catalog):
    return {full.split(".")[-1]: full for full in catalog}


QUERIES = {
    "daily_revenue": "SELECT sum(amount) FROM warehouse.sales.orders",
    "customer_list": "SELECT name FROM warehouse.sales.customers",
    "scratch": "SELECT x FROM staging.tmp",
}

graph = lineage(QUERIES)
known = short_names(CATALOG)
for target in sorted(graph):
    sources = sorted(graph[target])
    logger.info("%s <- %s", target, sources)
    resolved = [known.get(s, "?") for s in sources]
    print(target, "reads", sources, "->", resolved)

print(table_names("SELECT sum(amount) FROM warehouse.sales.orders") == ["orders"])
