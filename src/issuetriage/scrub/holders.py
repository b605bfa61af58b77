"""Collapse the config holders repros are full of: a constant dict read by key, or a plain class
whose instance only carries values (`cfg.size`), become the values themselves."""

from __future__ import annotations

import ast
import copy

from issuetriage.scrub.rewrite import bindings
from issuetriage.scrub.transforms import GLOBAL, Edit


def holder_edits(code: str) -> list[Edit]:
    """One edit per dict or instance whose every read is a constant key or a known attribute."""
    tree = ast.parse(code)
    binds = bindings(tree)
    classes = {s.name: s for s in tree.body if isinstance(s, ast.ClassDef)}
    edits = []
    for stmt in tree.body:
        if not (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1
                and isinstance(stmt.targets[0], ast.Name) and binds[stmt.targets[0].id] == 1):
            continue
        name = stmt.targets[0].id
        values = (_dict_values(stmt.value) or _instance_values(stmt.value, classes)
                  or _argparse_values(tree, stmt.value))
        if values and _only_reads(tree, stmt, name, values):
            edits.append(Edit(GLOBAL, f"unfold holder {name}", _unfolder(name)))
    if any(_direct(n, classes) is not None for n in ast.walk(tree)):
        edits.append(Edit(GLOBAL, "unfold C(...).attr", _unfold_direct))
    return edits


def _direct(node: ast.AST, classes: dict[str, ast.ClassDef]) -> ast.expr | None:
    """The value of `C(...).attr` when C is a plain holder class."""
    if isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Load) and isinstance(node.value, ast.Call):
        values = _instance_values(node.value, classes)
        if values and node.attr in values:
            return values[node.attr]
    return None


def _unfold_direct(tree: ast.Module) -> None:
    classes = {s.name: s for s in tree.body if isinstance(s, ast.ClassDef)}

    class Swap(ast.NodeTransformer):
        def visit_Attribute(self, node: ast.Attribute) -> ast.AST:
            value = _direct(node, classes)
            return copy.deepcopy(value) if value is not None else self.generic_visit(node)

    Swap().visit(tree)


def _dict_values(value: ast.expr) -> dict[object, ast.expr] | None:
    if not isinstance(value, ast.Dict) or not value.keys:
        return None
    if not all(isinstance(k, ast.Constant) for k in value.keys):
        return None
    return {k.value: v for k, v in zip(value.keys, value.values)}  # type: ignore[union-attr]


def _instance_values(value: ast.expr, classes: dict[str, ast.ClassDef]) -> dict[object, ast.expr] | None:
    """`C(a, b)` where C's __init__ only stores parameters or constants on self; class constants too."""
    if not (isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and value.func.id in classes):
        return None
    cls = classes[value.func.id]
    if any("dataclass" in ast.unparse(d) for d in cls.decorator_list):
        return _dataclass_values(cls, value)
    found: dict[object, ast.expr] = {}
    for item in cls.body:
        if isinstance(item, ast.Assign) and len(item.targets) == 1 and isinstance(item.targets[0], ast.Name):
            found[item.targets[0].id] = item.value
        elif isinstance(item, ast.FunctionDef) and item.name == "__init__":
            init = _init_values(item, value)
            if init is None:
                return None
            found.update(init)
        elif not isinstance(item, (ast.FunctionDef, ast.Expr, ast.Pass)):
            return None
    return found or None


def _dataclass_values(cls: ast.ClassDef, call: ast.Call) -> dict[object, ast.expr] | None:
    fields = [f for f in cls.body if isinstance(f, ast.AnnAssign) and isinstance(f.target, ast.Name)]
    names = [f.target.id for f in fields]  # type: ignore[union-attr]
    if len(call.args) > len(names) or any(k.arg not in names for k in call.keywords):
        return None
    found = {n: f.value for n, f in zip(names, fields) if f.value is not None
             and not isinstance(f.value, ast.Call)}
    found.update(zip(names, call.args))
    found.update({k.arg: k.value for k in call.keywords if k.arg})
    return found or None


def _argparse_values(tree: ast.Module, value: ast.expr) -> dict[object, ast.expr] | None:
    """`args = parser.parse_args([])` (or no argv): each `args.x` is its `--x` default."""
    if not (isinstance(value, ast.Call) and getattr(value.func, "attr", "") == "parse_args"):
        return None
    if value.args and not (isinstance(value.args[0], ast.List) and not value.args[0].elts):
        if not (isinstance(value.args[0], ast.Constant) and value.args[0].value is None):
            return None
    found: dict[object, ast.expr] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and getattr(node.func, "attr", "") == "add_argument" and node.args:
            flag = node.args[-1]
            if not (isinstance(flag, ast.Constant) and str(flag.value).startswith("--")):
                continue
            options = {k.arg: k.value for k in node.keywords}
            action = getattr(options.get("action"), "value", None)
            dest = str(flag.value)[2:].replace("-", "_")
            default = options.get("default", ast.Constant(action == "store_false" if action else None))
            found[getattr(options.get("dest"), "value", dest)] = default
    return found or None


def _init_values(init: ast.FunctionDef, call: ast.Call) -> dict[object, ast.expr] | None:
    params = [a.arg for a in init.args.args[1:]]
    if init.args.vararg or init.args.kwarg or init.args.kwonlyargs or len(call.args) > len(params):
        return None
    defaults = dict(zip(params[::-1], init.args.defaults[::-1]))
    given = {**defaults, **dict(zip(params, call.args)), **{k.arg: k.value for k in call.keywords}}  # type: ignore[misc]
    out: dict[object, ast.expr] = {}
    for stmt in init.body:
        if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant):
            continue
        if not (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1
                and isinstance(stmt.targets[0], ast.Attribute)
                and getattr(stmt.targets[0].value, "id", "") == "self"):
            return None
        value = stmt.value
        if isinstance(value, ast.Name) and value.id in given:
            value = given[value.id]
        elif not isinstance(value, ast.Constant):
            return None
        out[stmt.targets[0].attr] = value
    return out


def _only_reads(tree: ast.AST, assign: ast.Assign, name: str, values: dict[object, ast.expr]) -> bool:
    """Every use of `name` is `name[const]` or `name.attr` for a known key, and only read."""
    uses = [n for n in ast.walk(tree) if isinstance(n, ast.Name) and n.id == name and n is not assign.targets[0]]
    holders = {id(n.value): n for n in ast.walk(tree) if isinstance(n, (ast.Subscript, ast.Attribute))}
    for use in uses:
        holder = holders.get(id(use))
        if holder is None or not isinstance(holder.ctx, ast.Load) or _key(holder) not in values:
            return False
    return bool(uses)


def _key(node: ast.Subscript | ast.Attribute) -> object:
    if isinstance(node, ast.Attribute):
        return node.attr
    return node.slice.value if isinstance(node.slice, ast.Constant) else object()


def _unfolder(name: str):
    def fn(tree: ast.Module) -> None:
        assign = next((s for s in tree.body if isinstance(s, ast.Assign) and len(s.targets) == 1
                       and getattr(s.targets[0], "id", None) == name), None)
        if assign is None:
            return
        classes = {s.name: s for s in tree.body if isinstance(s, ast.ClassDef)}
        values = (_dict_values(assign.value) or _instance_values(assign.value, classes)
                  or _argparse_values(tree, assign.value) or {})
        _Replace(name, values).visit(tree)
        tree.body.remove(assign)
    return fn


class _Replace(ast.NodeTransformer):
    def __init__(self, name: str, values: dict[object, ast.expr]) -> None:
        self.name, self.values = name, values

    def _swap(self, node: ast.Subscript | ast.Attribute) -> ast.AST:
        if getattr(node.value, "id", None) == self.name and _key(node) in self.values:
            return copy.deepcopy(self.values[_key(node)])
        return self.generic_visit(node)

    visit_Subscript = _swap
    visit_Attribute = _swap
