"""The dead-code pass: stores nothing reads, overwritten assignments, unreachable statements.

Run after the structural passes, which leave such junk behind: a config dict still filled
(`cfg["lr"] = 0.1`, `cfg.update(...)`) after its only reader was inlined, `x = 0` right before
`x = f()`, code after a `raise`, an `if False:` branch. Each is one edit the oracle must accept.
"""

from __future__ import annotations

import ast

from issuetriage.scrub.astedit import bodies, parse
from issuetriage.scrub.transforms import GLOBAL, Edit

_SIMPLE_STORE = (ast.Assign, ast.AugAssign, ast.AnnAssign)
_ENDS_BLOCK = (ast.Return, ast.Raise, ast.Continue, ast.Break)


def dead_edits(code: str) -> list[Edit]:
    """Every dead-code edit found in the script (each tested alone, then merged)."""
    tree = parse(code)
    edits = [Edit(GLOBAL, f"drop write-only {name}", _drop_writes(name)) for name in _write_only(tree)]
    for k, block in enumerate(bodies(tree)):
        for j, stmt in enumerate(block):
            if _overwritten(block, j):
                edits.append(Edit((k, j), f"drop overwritten: {ast.unparse(stmt)[:60]}", _empty(k, j)))
            if isinstance(stmt, _ENDS_BLOCK) and j + 1 < len(block):
                edits.append(Edit((k, j + 1), f"drop unreachable after line {stmt.lineno}", _cut_after(k, j)))
            if isinstance(stmt, (ast.If, ast.While)) and _is_false(stmt.test):
                edits.append(Edit((k, j), f"drop never-taken: {ast.unparse(stmt.test)}", _else_of(k, j)))
    return edits


def _root(node: ast.expr) -> str | None:
    while isinstance(node, (ast.Attribute, ast.Subscript)):
        node = node.value
    return node.id if isinstance(node, ast.Name) else None


def _writes_to(stmt: ast.stmt) -> str | None:
    """The one name a simple statement only stores into or mutates (`n = ..`, `n[k] = ..`, `n.f(..)`)."""
    if isinstance(stmt, _SIMPLE_STORE):
        targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
        roots = {_root(t) for t in targets}
        return roots.pop() if len(roots) == 1 and None not in roots else None
    if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call) and isinstance(stmt.value.func, ast.Attribute):
        return _root(stmt.value.func)
    return None


def _write_only(tree: ast.Module) -> list[str]:
    """Names read only by statements that write to them: nothing else ever sees their value."""
    writers: dict[str, list[ast.stmt]] = {}
    for block in bodies(tree):
        for stmt in block:
            name = _writes_to(stmt)
            if name is not None:
                writers.setdefault(name, []).append(stmt)
    inside = {id(n) for stmts in writers.values() for s in stmts for n in ast.walk(s)}
    read_elsewhere = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)
                      and isinstance(n.ctx, ast.Load) and id(n) not in inside}
    defined = {s.name for s in ast.walk(tree) if isinstance(s, (ast.FunctionDef, ast.ClassDef, ast.AsyncFunctionDef))}
    defined |= {(a.asname or a.name).split(".")[0] for s in ast.walk(tree)
                if isinstance(s, (ast.Import, ast.ImportFrom)) for a in s.names}
    return sorted(n for n in writers if n not in read_elsewhere and n not in defined
                  and any(not isinstance(s, ast.Expr) for s in writers[n]))


def _drop_writes(name: str):
    def fn(tree: ast.Module) -> None:
        for block in bodies(tree):
            block[:] = [s for s in block if _writes_to(s) != name]
    return fn


def _overwritten(block: list[ast.stmt], j: int) -> bool:
    """`x = a` whose value is replaced by a later `x = b` in the same body before anything reads x."""
    stmt = block[j]
    if not (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name)):
        return False
    name = stmt.targets[0].id
    for later in block[j + 1:]:
        reads = {n.id for n in ast.walk(later) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}
        if name in reads:
            return False
        if (isinstance(later, ast.Assign) and len(later.targets) == 1
                and isinstance(later.targets[0], ast.Name) and later.targets[0].id == name):
            return True
        if not isinstance(later, (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Expr)):
            return False  # a loop or branch between: leave it to the oracle-driven deletion pass
    return False


def _is_false(test: ast.expr) -> bool:
    return isinstance(test, ast.Constant) and not test.value


def _empty(k: int, j: int):
    def fn(tree: ast.Module) -> None:
        bodies(tree)[k][j] = ast.Pass()
    return fn


def _cut_after(k: int, j: int):
    def fn(tree: ast.Module) -> None:
        del bodies(tree)[k][j + 1:]
    return fn


def _else_of(k: int, j: int):
    def fn(tree: ast.Module) -> None:
        block = bodies(tree)[k]
        block[j:j + 1] = block[j].orelse or [ast.Pass()]  # type: ignore[attr-defined]
    return fn
