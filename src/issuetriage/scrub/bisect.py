"""Find the version whose outcome changes to the newest one's, probing 2-3 interpreters per round in parallel."""

from __future__ import annotations

import re
import subprocess
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from issuetriage.errors import UserError
from issuetriage.scrub.model import BisectResult, Interpreter, Outcome

_CONDA_ROOTS = ("~/miniconda3/envs", "~/anaconda3/envs", "~/miniforge3/envs", "/opt/conda/envs")
_ENV_NAME = re.compile(r"^(pytorch|torch)-(\d+(\.\d+)*)$")
_PROBE = ("import importlib.metadata as m, platform\n"
          "try:\n    print('torch-' + m.version('torch'))\n"
          "except Exception:\n    print('python-' + platform.python_version())")


def version_key(label: str) -> tuple[int, ...]:
    """Numbers in a label, so `pytorch-2.10` sorts after `pytorch-2.9`."""
    return tuple(int(n) for n in re.findall(r"\d+", label))


def probe_label(python: Path) -> str:
    """`torch-X.Y.Z` when the interpreter has torch, else `python-X.Y.Z`."""
    try:
        out = subprocess.run([str(python), "-I", "-c", _PROBE], capture_output=True, text=True,
                             timeout=60, env={"PATH": "/usr/bin:/bin"})
    except OSError as exc:
        raise UserError(f"cannot run interpreter {python}: {exc}") from exc
    if out.returncode != 0 or not out.stdout.strip():
        raise UserError(f"interpreter {python} does not run: {out.stderr.strip()[-200:]}")
    return out.stdout.strip().splitlines()[-1]


def parse_interpreters(specs: Sequence[str]) -> list[Interpreter]:
    """`PATH` or `LABEL=PATH` per --python, sorted oldest first."""
    found = []
    for spec in specs:
        label, _, path = spec.rpartition("=") if "=" in spec else ("", "", spec)
        python = Path(path).expanduser()
        if not python.exists():
            raise UserError(f"no interpreter at {python}")
        found.append(Interpreter(label or probe_label(python), python))
    return sorted(found, key=lambda i: version_key(i.label))


def conda_interpreters(roots: Sequence[str] = _CONDA_ROOTS) -> list[Interpreter]:
    """Conda environments named like `pytorch-2.8`, oldest first."""
    found = []
    for root in roots:
        base = Path(root).expanduser()
        if not base.is_dir():
            continue
        for env in base.iterdir():
            python = env / "bin" / "python"
            if _ENV_NAME.match(env.name) and python.exists():
                found.append(Interpreter(env.name, python))
    return sorted(found, key=lambda i: version_key(i.label))


def bisect(interps: Sequence[Interpreter], outcome_of: Callable[[Interpreter], Outcome],
           parallel: int = 3) -> BisectResult:
    """The change nearest the newest outcome: the first interpreter (in version order) whose outcome
    differs from the oldest one's, then, while that is not yet the newest's outcome, the first that
    differs from it. A repro that needs an API newer than the range's start errors differently
    there, fails from the release that added the API and passes from the fix: the fix is the
    boundary that says whether the issue is fixed, and the release that passes next to it is the
    differential oracle's control."""
    seen: dict[str, Outcome] = {}
    with ThreadPoolExecutor(max_workers=parallel) as pool:
        def probe(batch: list[Interpreter]) -> None:
            todo = [i for i in batch if i.label not in seen]
            for interp, outcome in zip(todo, pool.map(outcome_of, todo)):
                seen[interp.label] = outcome

        start = 0
        while True:
            hi, lo = _first_change(interps[start:], seen, probe, parallel)
            if hi is None or seen[interps[start + hi].label] == seen[interps[-1].label]:
                break
            start += hi
    return _result(interps, seen, None if hi is None else start + hi, start + lo)


def _first_change(interps: Sequence[Interpreter], seen: dict[str, Outcome],
                  probe: Callable[[list[Interpreter]], None], parallel: int) -> tuple[int | None, int]:
    """(first index whose outcome differs from the first one's, the index before it)."""
    probe([interps[0], interps[-1]])
    lo, hi = 0, len(interps) - 1
    base = seen[interps[0].label]
    if seen[interps[-1].label] == base:
        probe(list(interps[1:-1])[:parallel])
        changed = [k for k in range(1, hi) if interps[k].label in seen and seen[interps[k].label] != base]
        if not changed:
            return None, hi
        hi = changed[0]
    while hi - lo > 1:
        points = sorted({lo + (hi - lo) * i // (parallel + 1) for i in range(1, parallel + 1)} - {lo, hi})
        probe([interps[k] for k in points])
        first = next((k for k in points if seen[interps[k].label] != base), hi)
        lo = max([lo] + [k for k in points if k < first])
        hi = first
    return hi, lo


def _result(interps: Sequence[Interpreter], seen: dict[str, Outcome], hi: int | None,
            lo: int) -> BisectResult:
    order = [(i.label, str(seen[i.label])) for i in interps if i.label in seen]
    return BisectResult(tuple(order), interps[hi].label if hi is not None else None,
                        interps[lo].label)
