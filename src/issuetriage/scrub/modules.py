"""The "wrapper classes" pass: a method that is one expression is written where it is called.

`Model()(x)` with `__init__` setting `self.head = nn.Linear(32, 4)` and `forward` returning
`self.head(x)` becomes `nn.Linear(32, 4)(x)`; `Command(line).parse()` whose body is
`self.tokens = tokenize(self.raw)` becomes `tokenize(line)`. The class can then go.
"""

from __future__ import annotations

import ast
import copy

from issuetriage.scrub.rewrite import bindings
from issuetriage.scrub.transforms import GLOBAL, Edit


def module_edits(code: str) -> list[Edit]:
    """One edit per class that has at least one call site we can inline."""
    tree = ast.parse(code)
    edits = []
    for cls in tree.body:
        if isinstance(cls, ast.ClassDef) and _init_attrs_ok(cls) and _methods(cls):
            if any(_site(node, tree, cls) for node in ast.walk(tree)):
                edits.append(Edit(GLOBAL, f"inline methods of {cls.name}", _inliner(cls.name)))
    return edits


def _init(cls: ast.ClassDef) -> ast.FunctionDef | None:
    return next((m for m in cls.body if isinstance(m, ast.FunctionDef) and m.name == "__init__"), None)


def _init_attrs_ok(cls: ast.ClassDef) -> bool:
    """__init__ (if any) only calls super().__init__ and assigns self attributes."""
    init = _init(cls)
    if init is None:
        return not cls.bases or all("Module" in ast.unparse(b) or ast.unparse(b) == "object" for b in cls.bases)
    if init.args.vararg or init.args.kwarg:
        return False
    return all((isinstance(s, ast.Expr) and "super()" in ast.unparse(s)) or _self_assign(s)
               or isinstance(s, ast.Pass) for s in init.body)


def _self_assign(stmt: ast.stmt) -> bool:
    return (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1
            and isinstance(stmt.targets[0], ast.Attribute)
            and getattr(stmt.targets[0].value, "id", "") == "self")


def _methods(cls: ast.ClassDef) -> dict[str, ast.expr]:
    """Methods whose body is one expression (returned, evaluated, or stored on self)."""
    found = {}
    for m in cls.body:
        if not isinstance(m, ast.FunctionDef) or m.name == "__init__" or m.decorator_list:
            continue
        if m.args.vararg or m.args.kwarg or len(m.body) != 1:
            continue
        stmt = m.body[0]
        if isinstance(stmt, (ast.Return, ast.Expr)) and stmt.value is not None:
            found[m.name] = stmt.value
        elif _self_assign(stmt) or (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1
                                    and isinstance(stmt.targets[0], ast.Name)):
            found[m.name] = stmt.value  # type: ignore[attr-defined]
    return found


def _constructor(node: ast.expr, tree: ast.Module, cls: ast.ClassDef) -> ast.Call | None:
    """`C(...)` itself, or the `C(...)` a once-bound module-level name holds."""
    if isinstance(node, ast.Call) and getattr(node.func, "id", None) == cls.name:
        return node
    if isinstance(node, ast.Name) and bindings(tree)[node.id] == 1:
        for stmt in tree.body:
            if (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1
                    and getattr(stmt.targets[0], "id", None) == node.id):
                return _constructor(stmt.value, tree, cls) if isinstance(stmt.value, ast.Call) else None
    return None


def _site(node: ast.AST, tree: ast.Module, cls: ast.ClassDef) -> tuple[ast.Call, str] | None:
    """(constructor call, method name) for `obj(x)` (forward) or `obj.method(x)`."""
    if not isinstance(node, ast.Call) or node.keywords:
        return None
    func = node.func
    if isinstance(func, ast.Attribute):
        ctor = _constructor(func.value, tree, cls)
        return (ctor, func.attr) if ctor and func.attr in _methods(cls) else None
    ctor = _constructor(func, tree, cls)
    methods = _methods(cls)
    called = "forward" if "forward" in methods else "__call__"
    return (ctor, called) if ctor and called in methods else None


def _inliner(name: str):
    def fn(tree: ast.Module) -> None:
        cls = next((s for s in tree.body if isinstance(s, ast.ClassDef) and s.name == name), None)
        if cls is not None and _init_attrs_ok(cls):
            _Inline(tree, cls).visit(tree)
    return fn


class _Inline(ast.NodeTransformer):
    def __init__(self, tree: ast.Module, cls: ast.ClassDef) -> None:
        self.tree, self.cls = tree, cls
        self.methods = {m.name: m for m in cls.body if isinstance(m, ast.FunctionDef)}

    def visit_Call(self, node: ast.Call) -> ast.AST:
        self.generic_visit(node)
        site = _site(node, self.tree, self.cls)
        if site is None:
            return node
        ctor, method = site
        init = _init(self.cls)
        init_args = _bind(init, ctor.args, ctor.keywords) if init else {}
        call_args = _bind(self.methods[method], node.args, [])
        if init_args is None or call_args is None:
            return node
        attrs = {s.targets[0].attr: _Substitute(init_args, {}).visit(copy.deepcopy(s.value))  # type: ignore[attr-defined]
                 for s in (init.body if init else []) if isinstance(s, ast.Assign)}
        return _Substitute(call_args, attrs).visit(copy.deepcopy(_methods(self.cls)[method]))


def _bind(func: ast.FunctionDef, args: list[ast.expr], keywords: list[ast.keyword]) -> dict[str, ast.expr] | None:
    params = [a.arg for a in func.args.args[1:]]
    defaults = dict(zip(params[::-1], func.args.defaults[::-1]))
    if len(args) > len(params) or any(isinstance(a, ast.Starred) for a in args):
        return None
    bound = {**defaults, **dict(zip(params, args)), **{k.arg: k.value for k in keywords if k.arg}}
    return bound if set(params) <= set(bound) else None


class _Substitute(ast.NodeTransformer):
    """Parameters become arguments and `self.attr` becomes what __init__ stored."""

    def __init__(self, names: dict[str, ast.expr], attrs: dict[str, ast.expr]) -> None:
        self.names, self.attrs = names, attrs

    def visit_Name(self, node: ast.Name) -> ast.AST:
        return copy.deepcopy(self.names[node.id]) if node.id in self.names else node

    def visit_Attribute(self, node: ast.Attribute) -> ast.AST:
        if getattr(node.value, "id", None) == "self" and node.attr in self.attrs:
            return copy.deepcopy(self.attrs[node.attr])
        return self.generic_visit(node)
