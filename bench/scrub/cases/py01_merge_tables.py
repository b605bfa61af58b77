"""Reproduce: merge_tables raises KeyError when the right table misses a key.

Run with: python py01_merge_tables.py
"""
import os
import sys
import json
import time
import random
import logging
import argparse
from dataclasses import dataclass, field

from minilib import merge_tables

logging.basicConfig(level=logging.WARNING, format="%(asctime)s %(levelname)s %(message)s")
logger = logging.getLogger("repro")


@dataclass
class Settings:
    customers: int = 12
    orders_per_customer: int = 3
    seed: int = 1234
    verbose: bool = False
    output: str = "report.json"
    tags: list = field(default_factory=lambda: ["a", "b"])


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description="merge repro")
    parser.add_argument("--customers", type=int, default=12)
    parser.add_argument("--orders", type=int, default=3)
    parser.add_argument("--seed", type=int, default=1234)
    parser.add_argument("--verbose", action="store_true")
    args = parser.parse_args(argv)
    return Settings(customers=args.customers, orders_per_customer=args.orders,
                    seed=args.seed, verbose=args.verbose)


class Timer:
    def __init__(self, name):
        self.name = name
        self.start = None

    def __enter__(self):
        self.start = time.perf_counter()
        return self

    def __exit__(self, *exc):
        elapsed = time.perf_counter() - self.start
        logger.info("%s took %.3fs", self.name, elapsed)
        return False


def make_customers(count, rng):
    customers = []
    for index in range(count):
        customers.append({
            "customer_id": index,
            "name": f"customer-{index}",
            "region": rng.choice(["north", "south", "east", "west"]),
        })
    return customers


def make_orders(customers, per_customer, rng):
    orders = []
    for customer in customers:
        for number in range(per_customer):
            orders.append({
                "order_id": len(orders),
                "customer_id": customer["customer_id"],
                "amount": round(rng.uniform(5, 500), 2),
            })
    return orders


def drop_some_customers(customers, rng):
    # simulate a stale snapshot of the customer table
    kept = [c for c in customers if c["customer_id"] % 5 != 4]
    logger.info("dropped %d customers", len(customers) - len(kept))
    return kept


def summarize(rows):
    totals = {}
    for row in rows:
        totals.setdefault(row["region"], 0.0)
        totals[row["region"]] += row["amount"]
    return totals


def write_report(totals, path):
    if os.environ.get("REPRO_WRITE"):
        with open(path, "w") as handle:
            json.dump(totals, handle, indent=2)


def main(argv=None):
    settings = parse_args(argv if argv is not None else [])
    rng = random.Random(settings.seed)
    if settings.verbose:
        logger.setLevel(logging.DEBUG)
    with Timer("build"):
        customers = make_customers(settings.customers, rng)
        orders = make_orders(customers, settings.orders_per_customer, rng)
    snapshot = drop_some_customers(customers, rng)
    logger.info("orders=%d customers=%d", len(orders), len(snapshot))
    print("python", sys.version.split()[0])
    with Timer("merge"):
        rows = merge_tables(orders, snapshot, key="customer_id")
    totals = summarize(rows)
    write_report(totals, settings.output)
    print(json.dumps(totals, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
