"""Whole-script rewrites: copy propagation, and device/dtype/backend/size simplification."""

from __future__ import annotations

import ast
import copy
from collections import Counter

from issuetriage.scrub.astedit import bodies
from issuetriage.scrub.transforms import GLOBAL, Edit, replace_node

_REPEATING = (ast.For, ast.AsyncFor, ast.While, ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda,
              ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp, ast.ClassDef)


def bindings(tree: ast.AST) -> Counter[str]:
    """How often each name is bound anywhere in the tree (assignments, parameters, imports)."""
    return _bindings_in(list(ast.walk(tree)))


def _parents(tree: ast.AST) -> dict[int, ast.AST]:
    return {id(child): node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}


def _root(node: ast.expr) -> ast.Name | None:
    while isinstance(node, (ast.Attribute, ast.Subscript)):
        node = node.value
    return node if isinstance(node, ast.Name) else None


_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)


def _scope_nodes(scope: ast.AST):
    """Nodes of one scope, not descending into nested functions, lambdas or classes."""
    todo = list(ast.iter_child_nodes(scope))
    while todo:
        node = todo.pop()
        yield node
        if not isinstance(node, _SCOPES):
            todo.extend(ast.iter_child_nodes(node))


def _scopes(tree: ast.Module) -> list[ast.AST]:
    return [tree] + [n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]


def copy_edits(code: str) -> list[Edit]:
    """`a = b` (or a single-use `a = expr`) is dropped and its value written where `a` is read.

    Counted per scope, so the same local name in two functions does not block either.
    """
    tree = ast.parse(code)
    parents = _parents(tree)
    classes = {s.name for s in tree.body if isinstance(s, ast.ClassDef)}
    edits = []
    for scope in _scopes(tree):
        nodes = list(_scope_nodes(scope))
        binds = _bindings_in(nodes)
        uses = Counter(n.id for n in nodes if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load))
        nested = set().union(*(_free_names(inner) for inner in nodes if isinstance(inner, _SCOPES)))
        for node in nodes:
            if not (isinstance(node, ast.Assign) and len(node.targets) == 1
                    and isinstance(node.targets[0], ast.Name)):
                continue
            name = node.targets[0].id
            if binds[name] != 1 or uses[name] == 0 or name in nested:
                continue
            root = _root(node.value)
            simple = isinstance(node.value, ast.Constant) or (
                root is not None and binds[root.id] <= 1 and root.id not in nested
                and isinstance(node.value, (ast.Name, ast.Attribute)))
            if simple or (uses[name] == 1 and not _holder_like(node.value, classes)
                          and _single_use_ok(nodes, parents, node, name)):
                where = getattr(scope, "name", "<module>")
                edits.append(Edit(GLOBAL, f"propagate {ast.unparse(node)} in {where}",
                                  _propagator(where, ast.unparse(node))))
    return edits


def _holder_like(value: ast.expr, classes: set[str]) -> bool:
    """Values the holder pass unfolds better than copy propagation would inline them."""
    if isinstance(value, ast.Dict):
        return True
    func = value.func if isinstance(value, ast.Call) else None
    return getattr(func, "attr", "") == "parse_args"


def _bindings_in(nodes: list[ast.AST]) -> Counter[str]:
    counts: Counter[str] = Counter()
    for node in nodes:
        if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
            counts[node.id] += 1
        elif isinstance(node, ast.arg):
            counts[node.arg] += 1
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            counts[node.name] += 1
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            counts.update((a.asname or a.name).split(".")[0] for a in node.names)
        elif isinstance(node, (ast.Global, ast.Nonlocal)):
            counts.update({n: 99 for n in node.names})
    return counts


def _single_use_ok(nodes: list[ast.AST], parents: dict[int, ast.AST], assign: ast.Assign, name: str) -> bool:
    """The one read is later in the same body and not inside a loop, function or comprehension."""
    use = next(n for n in nodes if isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Load))
    owner = parents.get(id(assign))
    node: ast.AST = use
    while True:
        parent = parents.get(id(node))
        if parent is None or isinstance(node, _REPEATING):
            return False
        if parent is owner:
            return getattr(node, "lineno", 0) > assign.lineno
        node = parent


def _free_names(scope: ast.AST) -> set[str]:
    """Names a nested function, lambda or class reads without binding them itself."""
    nodes = list(ast.walk(scope))
    bound = set(_bindings_in(nodes)) - {getattr(scope, "name", "")}
    return {n.id for n in nodes if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)} - bound


def _propagator(where: str, source: str):
    def fn(tree: ast.Module) -> None:
        scope, target = next(((sc, n) for sc in _scopes(tree) if getattr(sc, "name", "<module>") == where
                              for n in _scope_nodes(sc)
                              if isinstance(n, ast.Assign) and ast.unparse(n) == source), (None, None))
        if target is None:
            return
        name = target.targets[0].id  # type: ignore[attr-defined]
        value = target.value
        for node in list(_scope_nodes(scope)):  # type: ignore[arg-type]
            for field, old in ast.iter_fields(node):
                if isinstance(old, list):
                    for i, item in enumerate(old):
                        if _is_load(item, name):
                            old[i] = copy.deepcopy(value)
                elif _is_load(old, name):
                    setattr(node, field, copy.deepcopy(value))
        for node in ast.walk(tree):
            for field in ("body", "orelse", "finalbody"):
                block = getattr(node, field, None)
                if isinstance(block, list) and target in block:
                    block.remove(target)
    return fn


def _is_load(node: object, name: str) -> bool:
    return isinstance(node, ast.Name) and node.id == name and isinstance(node.ctx, ast.Load)


class _Simplify(ast.NodeTransformer):
    """CUDA → CPU, half/bfloat16 → float32, inductor → aot_eager (when asked)."""

    def __init__(self, kind: str) -> None:
        self.kind = kind
        self.changed = False

    def visit_Constant(self, node: ast.Constant) -> ast.AST:
        value = node.value
        if self.kind == "device" and isinstance(value, str) and value.split(":")[0] in {"cuda", "mps", "xpu"}:
            self.changed = True
            return ast.Constant("cpu")
        if self.kind == "backend" and value == "inductor":
            self.changed = True
            return ast.Constant("aot_eager")
        return node

    def visit_Attribute(self, node: ast.Attribute) -> ast.AST:
        if self.kind == "device" and node.attr in {"float16", "half", "bfloat16", "float64", "double"} \
                and isinstance(node.value, ast.Name) and node.value.id == "torch":
            self.changed = True
            return ast.Attribute(node.value, "float32", node.ctx)
        return self.generic_visit(node)

    def visit_IfExp(self, node: ast.IfExp) -> ast.AST:
        self.generic_visit(node)
        if self.kind == "device" and "is_available" in ast.unparse(node.test):
            self.changed = True
            return node.orelse
        return node

    def visit_Call(self, node: ast.Call) -> ast.AST:
        self.generic_visit(node)
        func = node.func
        if self.kind == "device" and _is_cpu_move(node):
            self.changed = True
            return func.value  # type: ignore[attr-defined]
        if self.kind == "device":
            kept = [k for k in node.keywords if not (k.arg == "device" and _is_cpu(k.value))]
            self.changed |= len(kept) != len(node.keywords)
            node.keywords = kept
        if self.kind == "device" and isinstance(func, ast.Attribute) and not node.args \
                and func.attr in {"cuda", "half", "bfloat16", "double"} and not node.keywords:
            self.changed = True
            return func.value
        if self.kind == "backend" and isinstance(func, ast.Attribute) and func.attr == "compile" \
                and getattr(func.value, "id", "") == "torch" and not any(k.arg == "backend" for k in node.keywords):
            self.changed = True
            node.keywords.append(ast.keyword("backend", ast.Constant("aot_eager")))
        if self.kind == "sizes":
            node.args = [_shrink(a, self) for a in node.args]
            node.keywords = [ast.keyword(k.arg, _shrink(k.value, self)) for k in node.keywords]
        return node


def _is_cpu(node: ast.expr) -> bool:
    return isinstance(node, ast.Constant) and node.value == "cpu"


def _is_cpu_move(call: ast.Call) -> bool:
    """`x.to('cpu')` and `x.cpu()`: no-ops once everything runs on the CPU."""
    func = call.func
    if not isinstance(func, ast.Attribute) or call.keywords:
        return False
    return (func.attr == "cpu" and not call.args) or (
        func.attr == "to" and len(call.args) == 1 and _is_cpu(call.args[0]))


def _shrink(node: ast.expr, state: _Simplify) -> ast.expr:
    if isinstance(node, ast.Constant) and type(node.value) is int and node.value > 4:
        state.changed = True
        return ast.Constant(4 if node.value % 2 == 0 else 3)
    if isinstance(node, (ast.Tuple, ast.List)):
        node.elts = [_shrink(e, state) for e in node.elts]
    return node


def simplify_edits(code: str) -> list[Edit]:
    """One whole-script edit per kind that changes something: device/dtype, backend, sizes."""
    edits = []
    for kind in ("device", "backend", "sizes"):
        probe = _Simplify(kind)
        probe.visit(ast.parse(code))
        if probe.changed:
            edits.append(Edit(GLOBAL, f"simplify {kind}", lambda tree, k=kind: _Simplify(k).visit(tree)))  # type: ignore[misc]
    return edits


def zero_edits(code: str) -> list[Edit]:
    """Per setup statement, integer call arguments set to 0 or 1 (capacity 0 fails at once)."""

    edits = []
    tree = ast.parse(code)
    setup = [tree.body] + [m.body for c in tree.body if isinstance(c, ast.ClassDef)
                           for m in c.body if isinstance(m, ast.FunctionDef) and m.name == "__init__"]
    for k, block in enumerate(bodies(tree)):
        if not any(block is b for b in setup):
            continue  # sizes live at module level and in constructors
        for j, stmt in enumerate(block):
            if isinstance(stmt, (ast.FunctionDef, ast.ClassDef, ast.For, ast.While, ast.If, ast.With, ast.Try)):
                continue
            if not _int_args(stmt):
                continue
            for value in (0, 1):
                def fn(tree: ast.Module, k: int = k, j: int = j, value: int = value) -> None:
                    target = bodies(tree)[k][j]
                    for const in _int_args(target):
                        replace_node(target, const, ast.Constant(value))
                edits.append(Edit((k, j, value), f"ints to {value} in {ast.unparse(stmt)}", fn, (k, j)))
    return edits


def _int_args(stmt: ast.stmt) -> list[ast.Constant]:
    found = []
    for call in (n for n in ast.walk(stmt) if isinstance(n, ast.Call)):
        for arg in [*call.args, *(k.value for k in call.keywords)]:
            if isinstance(arg, ast.Constant) and type(arg.value) is int and arg.value > 1:
                found.append(arg)
    return found
