"""Run pysource-minimize on one case with the bench oracle (called by bench_minimize.py)."""

import json
import sys

from oracle import interesting, record
from pysource_minimize import minimize

spec = json.load(open(sys.argv[1]))
source = open(sys.argv[2]).read()


def checker(code: str) -> bool:
    ok = interesting(code, spec)
    record(code, ok, spec)
    return ok


minimize(source, checker)  # the smallest interesting candidate is kept in spec["best"]
