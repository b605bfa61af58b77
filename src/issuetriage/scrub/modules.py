"""The "wrapper classes" pass: a module class whose forward is one expression is written inline.

`Model()(x)` with `__init__` setting `self.head = nn.Linear(32, 4)` and `forward` returning
`self.head(x)` becomes `nn.Linear(32, 4)(x)`, so the class can go.
"""

from __future__ import annotations

import ast
import copy

from issuetriage.scrub.rewrite import _bindings
from issuetriage.scrub.transforms import GLOBAL, Edit


def module_edits(code: str) -> list[Edit]:
    tree = ast.parse(code)
    classes = {s.name: s for s in tree.body if isinstance(s, ast.ClassDef) and _parts(s)}
    edits = []
    for name in classes:
        if any(_site(node, tree, name) for node in ast.walk(tree)):
            edits.append(Edit(GLOBAL, f"inline module {name}", _inliner(name)))
    return edits


def _parts(cls: ast.ClassDef) -> tuple[ast.FunctionDef, ast.FunctionDef] | None:
    """(__init__, forward) when __init__ only assigns self attributes and forward is one return."""
    methods = {m.name: m for m in cls.body if isinstance(m, ast.FunctionDef)}
    init, forward = methods.get("__init__"), methods.get("forward")
    if init is None or forward is None or len(methods) != len(cls.body):
        return None
    if not (len(forward.body) == 1 and isinstance(forward.body[0], ast.Return) and forward.body[0].value):
        return None
    if forward.args.vararg or forward.args.kwarg or init.args.vararg or init.args.kwarg:
        return None
    for stmt in init.body:
        is_super = isinstance(stmt, ast.Expr) and "super()" in ast.unparse(stmt)
        is_attr = (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1
                   and isinstance(stmt.targets[0], ast.Attribute)
                   and getattr(stmt.targets[0].value, "id", "") == "self")
        if not (is_super or is_attr):
            return None
    return init, forward


def _site(node: ast.AST, tree: ast.Module, name: str) -> ast.Call | None:
    """The constructor call for `C(...)(x)`, or for `m(x)` where `m = C(...)` is bound once."""
    if not (isinstance(node, ast.Call) and not node.keywords):
        return None
    func = node.func
    if isinstance(func, ast.Call) and getattr(func.func, "id", None) == name:
        return func
    if isinstance(func, ast.Name) and _bindings(tree)[func.id] == 1:
        for stmt in tree.body:
            if (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1
                    and getattr(stmt.targets[0], "id", None) == func.id and isinstance(stmt.value, ast.Call)
                    and getattr(stmt.value.func, "id", None) == name):
                return stmt.value
    return None


def _inliner(name: str):
    def fn(tree: ast.Module) -> None:
        cls = next((s for s in tree.body if isinstance(s, ast.ClassDef) and s.name == name), None)
        parts = _parts(cls) if cls else None
        if parts is None:
            return
        _Inline(tree, name, *parts).visit(tree)
    return fn


class _Inline(ast.NodeTransformer):
    def __init__(self, tree: ast.Module, name: str, init: ast.FunctionDef, forward: ast.FunctionDef) -> None:
        self.tree, self.name, self.init, self.forward = tree, name, init, forward

    def visit_Call(self, node: ast.Call) -> ast.AST:
        self.generic_visit(node)
        ctor = _site(node, self.tree, self.name)
        if ctor is None:
            return node
        init_args = _bind(self.init, ctor.args, ctor.keywords)
        fwd_args = _bind(self.forward, node.args, [])
        if init_args is None or fwd_args is None:
            return node
        attrs = {}
        for stmt in self.init.body:
            if isinstance(stmt, ast.Assign):
                attrs[stmt.targets[0].attr] = _Substitute(init_args, {}).visit(copy.deepcopy(stmt.value))  # type: ignore[attr-defined]
        expr = copy.deepcopy(self.forward.body[0].value)  # type: ignore[attr-defined]
        return _Substitute(fwd_args, attrs).visit(expr)


def _bind(func: ast.FunctionDef, args: list[ast.expr], keywords: list[ast.keyword]) -> dict[str, ast.expr] | None:
    params = [a.arg for a in func.args.args[1:]]
    defaults = dict(zip(params[::-1], func.args.defaults[::-1]))
    if len(args) > len(params) or any(isinstance(a, ast.Starred) for a in args):
        return None
    bound = {**defaults, **dict(zip(params, args)), **{k.arg: k.value for k in keywords if k.arg}}
    return bound if set(params) <= set(bound) else None


class _Substitute(ast.NodeTransformer):
    def __init__(self, names: dict[str, ast.expr], attrs: dict[str, ast.expr]) -> None:
        self.names, self.attrs = names, attrs

    def visit_Name(self, node: ast.Name) -> ast.AST:
        return copy.deepcopy(self.names[node.id]) if node.id in self.names else node

    def visit_Attribute(self, node: ast.Attribute) -> ast.AST:
        if getattr(node.value, "id", None) == "self" and node.attr in self.attrs:
            return copy.deepcopy(self.attrs[node.attr])
        return self.generic_visit(node)
