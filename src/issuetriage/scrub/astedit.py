"""Addressing and editing statements in a script's AST: bodies, deletion, pruning, slicing.

A statement is addressed as (body index in pre-order, position in that body). Edits applied in
descending address order never move the address of another edit, so independent edits merge.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator

_BODY_FIELDS = ("body", "orelse", "finalbody")


def parse(code: str) -> ast.Module:
    return ast.parse(code)


def bodies(tree: ast.AST) -> list[list[ast.stmt]]:
    """Every statement list in pre-order (module body first)."""
    found: list[list[ast.stmt]] = []

    def visit(node: ast.AST) -> None:
        for name in _BODY_FIELDS:
            block = getattr(node, name, None)
            if isinstance(block, list) and block and isinstance(block[0], ast.stmt):
                found.append(block)
                for stmt in block:
                    visit(stmt)
        for handler in getattr(node, "handlers", []) or []:
            visit(handler)
        for case in getattr(node, "cases", []) or []:
            visit(case)

    visit(tree)
    return found


def render(tree: ast.Module) -> str:
    """Source with a blank line around top-level definitions, like a hand-written script."""
    _fill_empty(tree)
    out: list[str] = []
    for stmt in tree.body:
        text = ast.unparse(ast.fix_missing_locations(stmt))
        is_def = isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
        if out and (is_def or out[-1].startswith(("def ", "class ", "@"))):
            out.append("")
        out.append(text)
    return "\n".join(out) + "\n" if out else ""


def _fill_empty(tree: ast.AST) -> None:
    """A body emptied by an edit gets a `pass` so the code still parses."""
    for node in ast.walk(tree):
        for name in _BODY_FIELDS:
            block = getattr(node, name, None)
            if block == [] and name == "body" and not isinstance(node, ast.Module):
                block.append(ast.Pass())
        if isinstance(node, ast.Try) and not node.handlers and not node.finalbody:
            node.finalbody = [ast.Pass()]


def count_lines(code: str, skip_imports: bool = False) -> int:
    """Non-blank lines (optionally not counting import lines)."""
    lines = [line.strip() for line in code.splitlines() if line.strip()]
    if skip_imports:
        lines = [line for line in lines if not line.startswith(("import ", "from "))]
    return len(lines)


def delete(code: str, body: int, positions: set[int]) -> str:
    """The code without the given statements of one body."""
    tree = parse(code)
    block = bodies(tree)[body]
    block[:] = [s for i, s in enumerate(block) if i not in positions]
    return render(tree)


def loads(node: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}


def binds(stmt: ast.stmt) -> set[str]:
    """Names a top-level statement binds."""
    if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return {stmt.name}
    if isinstance(stmt, (ast.Import, ast.ImportFrom)):
        return {(a.asname or a.name).split(".")[0] for a in stmt.names}
    found = {n.id for n in ast.walk(stmt) if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Load)}
    if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call):
        receiver = stmt.value.func
        while isinstance(receiver, ast.Attribute):
            receiver = receiver.value
        if isinstance(receiver, ast.Name):
            found.add(receiver.id)  # `x.append(...)` changes x
    return found


def statement_at(tree: ast.Module, line: int) -> Iterator[tuple[int, int]]:
    """Addresses of every statement whose span covers `line`, outermost first."""
    for k, block in enumerate(bodies(tree)):
        for j, stmt in enumerate(block):
            if stmt.lineno <= line <= (stmt.end_lineno or stmt.lineno):
                yield k, j


def prune(code: str) -> str:
    """Drop what nothing uses: unused imports and definitions, docstrings, stray `pass`."""
    tree = parse(code)
    changed = True
    while changed:
        changed = False
        used = loads(tree) | _attribute_roots(tree)
        for block in bodies(tree):
            keep = [s for s in block if not _dead(s, used, block is tree.body)]
            if len(keep) != len(block):
                block[:] = keep
                changed = True
    return render(tree)


def _attribute_roots(tree: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}


def _dead(stmt: ast.stmt, used: set[str], top: bool) -> bool:
    if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant):
        return True
    if isinstance(stmt, ast.Pass):
        return True
    if isinstance(stmt, (ast.Import, ast.ImportFrom)):
        names = [(a.asname or a.name).split(".")[0] for a in stmt.names]
        if isinstance(stmt, ast.ImportFrom) and any(n in used for n in names):
            stmt.names = [a for a, n in zip(stmt.names, names) if n in used]  # drop unused aliases
            return False
        return all(n not in used for n in names) and not _side_effect_import(stmt)
    if (isinstance(stmt, ast.Assign) and all(isinstance(t, ast.Name) for t in stmt.targets)
            and not any(isinstance(n, (ast.Call, ast.Await, ast.Yield)) for n in ast.walk(stmt.value))):
        return all(t.id not in used for t in stmt.targets)  # type: ignore[attr-defined]
    if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        decorators = {ast.unparse(d).split("(")[0].split(".")[-1] for d in stmt.decorator_list}
        return top and stmt.name not in used and decorators <= {"dataclass", "staticmethod"}
    return False


def _side_effect_import(stmt: ast.Import | ast.ImportFrom) -> bool:
    """`import torch._dynamo` style imports may register things: keep those."""
    module = stmt.module if isinstance(stmt, ast.ImportFrom) else stmt.names[0].name
    return bool(module) and "." in (module or "") and isinstance(stmt, ast.Import)


def backward_slice(tree: ast.Module, index: int) -> set[int]:
    """Top-level statements the statement at `index` needs, through the names they bind."""
    needed = loads(tree.body[index])
    keep = {index}
    for i in range(index - 1, -1, -1):
        stmt = tree.body[i]
        if binds(stmt) & needed:
            keep.add(i)
            needed |= loads(stmt)
    return keep
