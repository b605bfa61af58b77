"""Free a name: take away the one read of a name the script binds in a statement of its own (an
import, a constant, a helper), so that statement becomes dead and pruning drops it.

Around that read the edit removes the element holding it (a dict entry, a list, tuple or set
element, a call argument or keyword, a comprehension's condition, an operand of `and`/`or`),
replaces an enclosing expression by a part of itself without the name (`a in ALLOWED` → `a`,
`b''.join(app(x))` → `app(x)`), or by `0`. This is what pysource-minimize does everywhere; here it
is aimed at reads whose removal can free a line, so it costs a few oracle calls, not hundreds.
Two edits keep a call while dropping what is done with its result: `body = f(x)` where nothing
reads `body` becomes `f(x)`, and an expression statement `g(f(x))` becomes `f(x)`.

Removing or replacing a value changes what the script passes to the package, so the "free name"
edits are input changes (left out when no fixing release guards the minimization).
"""

from __future__ import annotations

import ast
import copy
from collections import Counter
from collections.abc import Callable, Iterator

from issuetriage.scrub.astedit import bodies, parse
from issuetriage.scrub.transforms import Edit

_COMPOUND = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.If, ast.For, ast.AsyncFor,
             ast.While, ast.With, ast.AsyncWith, ast.Try, ast.Match)
_DEPTH = 6  # enclosing expressions tried above a read
Replacement = ast.AST | str | None  # an expression, "remove" (out of its list), None (`return` alone)


def free_edits(code: str) -> list[Edit]:
    """Every freeing edit in the script; alternatives for one statement share a group."""
    tree = parse(code)
    reads = Counter(n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load))
    own = _bound_by_own_statement(tree)
    edits: list[Edit] = []
    for k, block in enumerate(bodies(tree)):
        for j, stmt in enumerate(block):
            if isinstance(stmt, _COMPOUND):
                continue
            before = ast.unparse(stmt)
            seen = {before}
            for label, new in _candidates(stmt, reads, own):
                try:
                    text = ast.unparse(new)
                except ValueError:  # a part of an f-string has no source of its own
                    continue
                if text in seen:
                    continue
                seen.add(text)
                edits.append(Edit((k, j), f"{label}: {before[:80]} → {text[:80]}", _put(k, j, new), group=(k, j)))
    return edits


def _put(k: int, j: int, new: ast.stmt) -> Callable[[ast.Module], None]:
    def fn(tree: ast.Module) -> None:
        bodies(tree)[k][j] = copy.deepcopy(new)
    return fn


def _bound_by_own_statement(tree: ast.Module) -> set[str]:
    """Names an import, a def or class, or a single-name assignment binds: freeing them frees a line."""
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            names |= {(a.asname or a.name).split(".")[0] for a in node.names}
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names |= {t.id for t in targets if isinstance(t, ast.Name)}
    return names


def _candidates(stmt: ast.stmt, reads: Counter[str], own: set[str]) -> Iterator[tuple[str, ast.stmt]]:
    if (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name)
            and reads[stmt.targets[0].id] == 0 and isinstance(stmt.value, ast.Call)):
        yield "keep the call", ast.Expr(stmt.value)  # `body = f(x)`, body never read → `f(x)`
    if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call):
        for arg in stmt.value.args:  # the result is discarded: `g(f(x))` → `f(x)`
            if isinstance(arg, ast.Call):
                yield "drop a discarded wrapper", ast.Expr(arg)
    nodes = list(ast.walk(stmt))
    parents = {id(child): node for node in nodes for child in ast.iter_child_nodes(node)}
    for index, node in enumerate(nodes):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load) and reads[node.id] == 1 \
                and node.id in own:
            for new in _freeing(stmt, index, parents):
                yield f"free name {node.id}", new


def _freeing(stmt: ast.stmt, index: int, parents: dict[int, ast.AST]) -> Iterator[ast.stmt]:
    """Copies of `stmt` without the read at walk position `index`: of each kind of change (take
    out the element holding it, a part of an enclosing expression, `0`, a bare `return`) only the
    innermost, so a read costs at most four oracle calls."""
    name = list(ast.walk(stmt))[index]
    current: ast.AST = name
    done: set[str] = set()
    for _ in range(_DEPTH):
        parent = parents.get(id(current))
        if parent is None or isinstance(parent, ast.stmt):
            if isinstance(parent, ast.Return) and parent.value is current:
                yield _changed(stmt, current, None)
            break
        for kind, target, new in _around(current, parent):
            if kind not in done and not (isinstance(new, ast.AST) and any(n is name for n in ast.walk(new))):
                done.add(kind)
                yield _changed(stmt, target, new)
        current = parent


def _around(node: ast.AST, parent: ast.AST) -> Iterator[tuple[str, ast.AST, Replacement]]:
    """(kind, target, replacement): a node replaced by an expression, or the marker "remove" to
    take the node out of the list that holds it."""
    if isinstance(parent, (ast.Tuple, ast.List, ast.Set)) or \
            (isinstance(parent, ast.Call) and node in parent.args) or \
            (isinstance(parent, ast.comprehension) and node in parent.ifs) or \
            (isinstance(parent, ast.BoolOp) and len(parent.values) > 2):
        yield "remove", node, "remove"
    if isinstance(parent, ast.keyword) or isinstance(parent, ast.Dict):
        yield "remove", parent if isinstance(parent, ast.keyword) else node, "remove"
    if isinstance(parent, ast.expr):
        for child in _parts(parent):
            if child is not node:
                yield "part", parent, child
    called = (isinstance(parent, ast.Call) and node is parent.func) or isinstance(parent, ast.Attribute)
    if isinstance(parent, ast.JoinedStr):  # `{x}` inside an f-string stays a formatted value
        return
    if isinstance(node, ast.expr) and not called and not (isinstance(node, ast.Constant) and node.value == 0):
        yield "zero", node, ast.Constant(0)  # not `0()` nor `0 .f`: those fail every time


def _parts(node: ast.expr) -> list[ast.expr]:
    """The sub-expressions an expression may shrink to."""
    if isinstance(node, ast.Call):
        parts = [a for a in node.args if not isinstance(a, ast.Starred)]
        if isinstance(node.func, ast.Attribute):
            parts.append(node.func.value)  # `x.f(y)` → `x`
        return parts
    if isinstance(node, ast.Compare):
        return [node.left, *node.comparators]
    if isinstance(node, ast.BinOp):
        return [node.left, node.right]
    if isinstance(node, ast.IfExp):
        return [node.body, node.orelse]
    if isinstance(node, ast.BoolOp):
        return list(node.values)
    if isinstance(node, ast.Subscript):
        return [node.value]
    return []


def _changed(stmt: ast.stmt, target: ast.AST, new: Replacement) -> ast.stmt:
    """A copy of `stmt` with `target` replaced by `new` ("remove": taken out of its list)."""
    copied = copy.deepcopy(stmt)
    position = next(i for i, n in enumerate(ast.walk(stmt)) if n is target)
    old = list(ast.walk(copied))[position]
    for node in ast.walk(copied):
        for field, value in ast.iter_fields(node):
            if isinstance(value, list) and any(v is old for v in value):
                at = [id(v) for v in value].index(id(old))
                if new == "remove":
                    if isinstance(node, ast.Dict):  # a key or a value: the pair goes
                        del node.keys[at], node.values[at]
                    else:
                        del value[at]
                else:
                    value[at] = copy.deepcopy(new)
                return copied
            if value is old and new != "remove":
                setattr(node, field, copy.deepcopy(new))
                return copied
    return copied
