"""Run issuetriage's command line where only what `pip install 'issuetriage[EXTRA]'` installs can be
imported: the base dependencies and the extra's, as pyproject.toml lists them, and theirs in turn
(from the installed metadata). The test venv holds every extra, so without this fence a missing
requirement would go unseen. No network: nothing is installed, the rest is hidden.

    python fenced.py PYPROJECT EXTRA ARGS...      (EXTRA "-": the base dependencies alone)
"""

from __future__ import annotations

import sys
import tomllib
from collections.abc import Sequence
from importlib import metadata
from importlib.abc import MetaPathFinder
from pathlib import Path
from typing import Any

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name


def installed_by(pyproject: Path, extra: str) -> set[str]:
    """The distributions the extra installs, its dependencies' dependencies included."""
    project = tomllib.loads(pyproject.read_text())["project"]

    def listed(names: Sequence[str]) -> list[Requirement]:
        found = []
        for text in names:
            req = Requirement(text)
            own = canonicalize_name(req.name) == canonicalize_name(project["name"])
            found += [r for e in req.extras for r in listed(project["optional-dependencies"][e])] if own else [req]
        return found

    todo = listed(project["dependencies"]) + (listed([f"{project['name']}[{extra}]"]) if extra != "-" else [])
    seen: set[tuple[str, frozenset[str]]] = set()
    while todo:
        req = todo.pop()
        key = (canonicalize_name(req.name), frozenset(req.extras))
        if key in seen:
            continue
        seen.add(key)
        try:
            requires = metadata.distribution(req.name).requires or []
        except metadata.PackageNotFoundError:
            continue  # not for this platform or Python
        for text in requires:
            sub = Requirement(text)
            if sub.marker is None or any(sub.marker.evaluate({"extra": e}) for e in {"", *req.extras}):
                todo.append(sub)
    return {name for name, _ in seen}


class Fence(MetaPathFinder):
    """Every finder, except for top-level modules that only hidden distributions provide."""

    def __init__(self, finders: list[Any], hidden: set[str]) -> None:
        self.finders, self.hidden = finders, hidden

    def find_spec(self, name: str, path: Any = None, target: Any = None) -> Any:
        if name.partition(".")[0] in self.hidden:
            return None
        for finder in self.finders:
            spec = finder.find_spec(name, path, target) if hasattr(finder, "find_spec") else None
            if spec is not None:
                return spec
        return None


def fence(allowed: set[str]) -> None:
    providers = metadata.packages_distributions()
    hidden = {module for module, dists in providers.items()
              if module not in sys.stdlib_module_names and module != "issuetriage"
              and not any(canonicalize_name(d) in allowed for d in dists)}
    sys.meta_path[:] = [Fence(list(sys.meta_path), hidden)]


if __name__ == "__main__":
    fence(installed_by(Path(sys.argv[1]), sys.argv[2]))
    from issuetriage.cli.app import main

    main(sys.argv[3:])
