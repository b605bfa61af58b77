"""The package's floors, read from its own imports: lower rooms never import upper ones (type-only
imports included), and an import of the package inside a function, outside `cli/`, says why."""

from __future__ import annotations

import ast
import functools
from pathlib import Path

import pytest

import issuetriage

SRC = Path(issuetriage.__file__).parent
# Each floor may import the floors below it and its own; rooms on one floor do not import each other
# in a loop (checked below).
FLOORS = [
    ("errors", "models", "text"),
    ("policy", "records"),
    ("evidence",),
    ("judges",),
    ("engine",),
    ("evaluate", "store"),
    ("live", "github", "scrub", "report", "history"),
    ("act",),
    ("cli", "service", "agents", "web", "__main__"),
]
FLOOR = {room: i for i, rooms in enumerate(FLOORS) for room in rooms}


def _room(module: str) -> str:
    return module.split(".")[1] if "." in module else "__init__"


@functools.cache
def _imports(src: Path = SRC) -> tuple[tuple[Path, ast.stmt, str, bool], ...]:
    """(file, statement, imported module, inside a function) for every import of the package."""
    found = []
    for path in sorted(src.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        inside = {id(n) for f in ast.walk(tree) if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef))
                  for n in ast.walk(f)}
        for node in ast.walk(tree):
            names = ([node.module or ""] if isinstance(node, ast.ImportFrom)
                     else [a.name for a in node.names] if isinstance(node, ast.Import) else [])
            for name in names:
                if name.startswith("issuetriage."):
                    found.append((path.relative_to(src), node, name, id(node) in inside))
    return tuple(found)


def test_every_room_has_a_floor():
    rooms = {p.name.removesuffix(".py") for p in SRC.iterdir()
             if (p.suffix == ".py" or (p.is_dir() and (p / "__init__.py").exists()))} - {"__init__"}
    assert rooms <= set(FLOOR), f"rooms without a floor in this test: {sorted(rooms - set(FLOOR))}"


def test_no_import_runs_back_up(src: Path = SRC):
    up = [f"{path}:{node.lineno} -> {name}" for path, node, name, _ in _imports(src)
          if path.parts[0].removesuffix(".py") in FLOOR and _room(name) in FLOOR
          and FLOOR[_room(name)] > FLOOR[path.parts[0].removesuffix(".py")]]
    assert not up, "imports from a lower floor to a higher one:\n" + "\n".join(up)


def test_rooms_import_each_other_in_no_loop():
    arrows: dict[str, set[str]] = {}
    for path, _, name, _ in _imports(SRC):
        me, other = path.parts[0].removesuffix(".py"), _room(name)
        if me != other:
            arrows.setdefault(me, set()).add(other)
    state: dict[str, int] = {}

    def visit(room: str, trail: list[str]) -> None:
        state[room] = 1
        for nxt in sorted(arrows.get(room, ())):
            assert state.get(nxt) != 1, "import loop: " + " -> ".join([*trail, room, nxt])
            if nxt not in state:
                visit(nxt, [*trail, room])
        state[room] = 2

    for room in sorted(arrows):
        if room not in state:
            visit(room, [])


def test_an_import_inside_a_function_outside_cli_says_why(src: Path = SRC):
    lines = {p: (src / p).read_text(encoding="utf-8").splitlines() for p, *_ in _imports(src)}
    bare = [f"{path}:{node.lineno}" for path, node, _, inside in _imports(src)
            if inside and path.parts[0] != "cli"
            and "# lazy:" not in " ".join(lines[path][node.lineno - 1:node.end_lineno])]
    assert not bare, "imports inside functions without a `# lazy: why`:\n" + "\n".join(bare)


def test_the_checks_see_an_upward_import(tmp_path):
    """The checks read what they claim to: an evidence module importing the store is caught."""
    fake = tmp_path / "issuetriage"
    (fake / "evidence").mkdir(parents=True)
    (fake / "store").mkdir()
    (fake / "evidence" / "__init__.py").write_text("")
    (fake / "store" / "__init__.py").write_text("")
    (fake / "evidence" / "x.py").write_text("def f():\n    from issuetriage.store import y\n")
    assert [name for path, _, name, inside in _imports(fake) if inside] == ["issuetriage.store"]
    with pytest.raises(AssertionError, match="evidence/x.py:2 -> issuetriage.store"):
        test_no_import_runs_back_up(fake)
    with pytest.raises(AssertionError, match="evidence/x.py:2"):
        test_an_import_inside_a_function_outside_cli_says_why(fake)
