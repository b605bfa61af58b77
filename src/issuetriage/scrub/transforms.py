"""Edits that make a repro shorter without deleting what it needs: flatten control flow,
inline a call into its caller, propagate copies, and simplify device, dtype, backend and sizes.

Each edit names its target by address (see astedit) so independent edits can be merged.
"""

from __future__ import annotations

import ast
import copy
from collections.abc import Callable
from dataclasses import dataclass

from issuetriage.scrub.astedit import bodies, parse, render

Address = tuple[int, ...]
GLOBAL: Address = (-1, -1)


@dataclass(frozen=True)
class Edit:
    """One candidate change: where, a readable label (also its identity), and how."""

    key: Address
    label: str
    fn: Callable[[ast.Module], None]
    group: tuple = ()  # edits sharing a non-empty group are alternatives: keep one


def apply_edits(code: str, edits: list[Edit]) -> str:
    """Apply edits from the last address to the first, so none moves another's target."""
    tree = parse(code)
    for edit in sorted(edits, key=lambda e: e.key, reverse=True):
        edit.fn(tree)
    return render(tree)


def _replace(key: Address, new: Callable[[ast.stmt], list[ast.stmt]]) -> Callable[[ast.Module], None]:
    def fn(tree: ast.Module) -> None:
        block = bodies(tree)[key[0]]
        block[key[1]:key[1] + 1] = new(block[key[1]])
    return fn


def _assign(name: ast.expr, value: ast.expr) -> ast.Assign:
    return ast.Assign(targets=[copy.deepcopy(name)], value=copy.deepcopy(value), lineno=0)


def flatten_edits(code: str) -> list[Edit]:
    """Replace a compound statement by its body: `if` → branch, loop → one pass, `try`/`with` → body."""
    edits = []
    for k, block in enumerate(bodies(parse(code))):
        for j, stmt in enumerate(block):
            label = ast.unparse(stmt).split("\n")[0]
            for variant, maker in _flatteners(stmt):
                edits.append(Edit((k, j), f"flatten {variant}: {label}", _replace((k, j), maker)))
    return edits


def _flatteners(stmt: ast.stmt) -> list[tuple[str, Callable[[ast.stmt], list[ast.stmt]]]]:
    if isinstance(stmt, ast.If):
        out = [("then", lambda s: s.body)]
        return out + ([("else", lambda s: s.orelse)] if stmt.orelse else [])
    if isinstance(stmt, (ast.For, ast.AsyncFor)):
        return [("loop", lambda s: _unpack(s.target, _first_item(s.iter)) + s.body)]
    if isinstance(stmt, ast.While):
        return [("loop", lambda s: s.body)]
    if isinstance(stmt, (ast.With, ast.AsyncWith)):
        return [("with", lambda s: [_assign(i.optional_vars, i.context_expr) for i in s.items
                                    if i.optional_vars is not None] + s.body)]
    if isinstance(stmt, ast.Try):
        return [("try", lambda s: s.body)]
    return []


def _unpack(target: ast.expr, value: ast.expr) -> list[ast.stmt]:
    """`a, b = (x, y)` written as `a = x` and `b = y`, so each can be propagated or dropped."""
    if (isinstance(target, ast.Tuple) and isinstance(value, ast.Tuple)
            and len(target.elts) == len(value.elts) and not any(isinstance(e, ast.Starred) for e in target.elts)):
        return [s for t, v in zip(target.elts, value.elts) for s in _unpack(t, v)]
    return [_assign(target, value)]


def _first_item(iterable: ast.expr) -> ast.expr:
    """`range(a, b)` → `a`, `range(n)` → `0`, anything else → `next(iter(x))`."""
    if isinstance(iterable, ast.Call) and getattr(iterable.func, "id", "") == "range":
        return iterable.args[0] if len(iterable.args) >= 2 else ast.Constant(0)
    if isinstance(iterable, ast.Call) and getattr(iterable.func, "id", "") == "enumerate":
        return ast.Tuple([ast.Constant(0), _first_item(iterable.args[0])], ast.Load())
    inner = ast.Call(ast.Name("iter", ast.Load()), [iterable], [])
    return ast.Call(ast.Name("next", ast.Load()), [inner], [])


def unwrap_edits(code: str, lines: tuple[int, ...]) -> list[Edit]:
    """On the traceback's statements, replace a wrapper by what it wraps (`head(block(x))` →
    `head(x)`, `x.to(device)` → `x`, `a if c else b` → `a`): the "simpler ops" pass.
    """
    edits = []
    for k, block in enumerate(bodies(parse(code))):
        for j, stmt in enumerate(block):
            if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.If,
                                 ast.For, ast.While, ast.With, ast.Try)):
                continue
            if not any(stmt.lineno <= line <= (stmt.end_lineno or stmt.lineno) for line in lines):
                continue
            wrappers = [n for n in ast.walk(stmt) if isinstance(n, (ast.Call, ast.IfExp, ast.BoolOp))]
            for i, node in enumerate(wrappers):
                for choice, inner in enumerate(_inner_options(node)):
                    label = f"unwrap {ast.unparse(node)} to {ast.unparse(inner)} in {ast.unparse(stmt)}"
                    edits.append(Edit((k, j, i, choice), label, _unwrapper(k, j, i, choice), (k, j, i)))
    return edits


def _inner_options(node: ast.expr) -> list[ast.expr]:
    """What a wrapper expression may shrink to: a call's only argument, either branch of an `if`."""
    if isinstance(node, ast.Call):
        options = [node.args[0]] if len(node.args) == 1 and not isinstance(node.args[0], ast.Starred) else []
        if isinstance(node.func, ast.Attribute) and not isinstance(node.func.value, ast.Name):
            options.append(node.func.value)  # x.to(device) → x
        return options
    if isinstance(node, ast.IfExp):
        return [node.body, node.orelse]
    return list(node.values) if isinstance(node, ast.BoolOp) else []


def _unwrapper(k: int, j: int, i: int, choice: int) -> Callable[[ast.Module], None]:
    def fn(tree: ast.Module) -> None:
        stmt = bodies(tree)[k][j]
        wrappers = [n for n in ast.walk(stmt) if isinstance(n, (ast.Call, ast.IfExp, ast.BoolOp))]
        replace_node(stmt, wrappers[i], _inner_options(wrappers[i])[choice])
    return fn


def replace_node(root: ast.AST, target: ast.AST, new: ast.AST) -> None:
    """Put `new` where `target` is inside `root`."""
    for node in ast.walk(root):
        for field, value in ast.iter_fields(node):
            if value is target:
                setattr(node, field, new)
            elif isinstance(value, list) and any(v is target for v in value):
                value[[id(v) for v in value].index(id(target))] = new


_LITERALS = ("0", "[]", "''", "None")


def literal_edits(code: str, lines: tuple[int, ...]) -> list[Edit]:
    """At the statements the traceback passes through, try trivial literals for call arguments.

    `percentile(values, 99)` → `percentile([], 99)`: the data-building code above then dies.
    """
    edits = []
    tree = parse(code)
    for k, block in enumerate(bodies(tree)):
        for j, stmt in enumerate(block):
            if isinstance(stmt, (ast.FunctionDef, ast.ClassDef, ast.For, ast.While, ast.If, ast.With, ast.Try)):
                continue
            if not any(stmt.lineno <= line <= (stmt.end_lineno or stmt.lineno) for line in lines):
                continue
            calls = [n for n in ast.walk(stmt) if isinstance(n, ast.Call)]
            for i, call in enumerate(calls):
                args = [a for a in call.args if not isinstance(a, ast.Starred)] + [kw.value for kw in call.keywords]
                for a, arg in enumerate(args):
                    if isinstance(arg, ast.Constant) or ast.unparse(arg) in _LITERALS:
                        continue
                    for n, literal in enumerate(_LITERALS):
                        label = f"literal {literal} for {ast.unparse(arg)} in {ast.unparse(stmt)}"
                        edits.append(Edit((k, j, i, a, n), label, _literal_setter(k, j, i, a, literal),
                                          (k, j, i, a)))
    return edits


def _literal_setter(k: int, j: int, i: int, a: int, literal: str) -> Callable[[ast.Module], None]:
    def fn(tree: ast.Module) -> None:
        stmt = bodies(tree)[k][j]
        call = [n for n in ast.walk(stmt) if isinstance(n, ast.Call)][i]
        args = [x for x in call.args if not isinstance(x, ast.Starred)] + [kw.value for kw in call.keywords]
        replace_node(call, args[a], ast.parse(literal, mode="eval").body)
    return fn


def inline_edits(code: str) -> list[Edit]:
    """Inline a statement-level call of a module function, or of a method through the one name
    bound to an instance of a module class (`history.add(x)`: `self = history` and the body):
    parameters become assignments."""
    tree = parse(code)
    calls = [n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)]
    functions = {s.name: s for s in tree.body if isinstance(s, ast.FunctionDef) and _inlinable(s)
                 and (calls.count(s.name) == 1 or len(s.body) == 1)}
    methods = _instance_methods(tree)
    edits = []
    for k, block in enumerate(bodies(tree)):
        for j, stmt in enumerate(block):
            call = _statement_call(stmt)
            func = _callee(call, functions, methods) if call else None
            if call and func and _binding(func, _as_function_call(call)) is not None and not _contains(stmt, func):
                edits.append(Edit((k, j), f"inline {func.name} into: {ast.unparse(stmt)}",
                                  _replace((k, j), _inliner(func))))
    return edits


def _instance_methods(tree: ast.Module) -> dict[tuple[str, str], ast.FunctionDef]:
    """(instance name, method) → method, for names bound once, at module level, to `Cls(...)` of a
    plain module class (no bases, no decorators) and never rebound."""
    classes = {s.name: s for s in tree.body if isinstance(s, ast.ClassDef) and not s.bases
               and not s.decorator_list and not s.keywords}
    stores = [n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Load)]
    found = {}
    for stmt in tree.body:
        if (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name)
                and isinstance(stmt.value, ast.Call) and isinstance(stmt.value.func, ast.Name)
                and stmt.value.func.id in classes and stores.count(stmt.targets[0].id) == 1):
            for method in classes[stmt.value.func.id].body:
                if isinstance(method, ast.FunctionDef) and not method.name.startswith("__") \
                        and method.args.args and _inlinable(method):
                    found[(stmt.targets[0].id, method.name)] = method
    return found


def _callee(call: ast.Call, functions: dict[str, ast.FunctionDef],
            methods: dict[tuple[str, str], ast.FunctionDef]) -> ast.FunctionDef | None:
    if isinstance(call.func, ast.Name):
        return functions.get(call.func.id)
    if isinstance(call.func, ast.Attribute) and isinstance(call.func.value, ast.Name):
        return methods.get((call.func.value.id, call.func.attr))
    return None


def _as_function_call(call: ast.Call) -> ast.Call:
    """`obj.m(a)` as `m(obj, a)`: the receiver binds the method's first parameter."""
    if isinstance(call.func, ast.Attribute):
        return ast.Call(func=ast.Name(call.func.attr, ast.Load()), args=[call.func.value, *call.args],
                        keywords=call.keywords)
    return call


def _statement_call(stmt: ast.stmt) -> ast.Call | None:
    value = getattr(stmt, "value", None)
    if isinstance(stmt, ast.Assign) and len(stmt.targets) != 1:
        return None
    return value if isinstance(stmt, (ast.Expr, ast.Assign, ast.Return)) and isinstance(value, ast.Call) else None


def _contains(outer: ast.AST, inner: ast.AST) -> bool:
    return any(n is inner for n in ast.walk(outer))


def _inlinable(func: ast.FunctionDef) -> bool:
    """A plain function with at most one `return`, as its last statement."""
    if func.decorator_list or func.args.vararg or func.args.kwarg or func.args.posonlyargs:
        return False
    banned = (ast.Yield, ast.YieldFrom, ast.Global, ast.Nonlocal, ast.Await)
    nodes = [n for stmt in func.body for n in ast.walk(stmt)]
    if any(isinstance(n, banned) for n in nodes):
        return False
    returns = [n for n in nodes if isinstance(n, ast.Return)]
    nested_defs = any(isinstance(n, (ast.FunctionDef, ast.Lambda, ast.ClassDef)) for n in nodes)
    recursive = any(isinstance(n, ast.Name) and n.id == func.name for n in nodes)
    last_ok = not returns or (len(returns) == 1 and func.body[-1] is returns[0])
    return last_ok and not nested_defs and not recursive


def _binding(func: ast.FunctionDef, call: ast.Call) -> list[tuple[str, ast.expr]] | None:
    """Parameter name → argument expression, or None when the call cannot be bound simply."""
    params = [a.arg for a in func.args.args + func.args.kwonlyargs]
    defaults = dict(zip([a.arg for a in func.args.args][::-1], func.args.defaults[::-1]))
    defaults.update({a.arg: d for a, d in zip(func.args.kwonlyargs, func.args.kw_defaults) if d})
    if any(isinstance(a, ast.Starred) for a in call.args) or any(k.arg is None for k in call.keywords):
        return None
    if len(call.args) > len(func.args.args):
        return None
    given: dict[str, ast.expr] = dict(zip([a.arg for a in func.args.args], call.args))
    given.update({k.arg: k.value for k in call.keywords if k.arg})
    if set(given) - set(params):
        return None
    bound = [(p, given.get(p, defaults.get(p))) for p in params]
    return None if any(v is None for _, v in bound) else bound  # type: ignore[misc,return-value]


def _inliner(func: ast.FunctionDef) -> Callable[[ast.stmt], list[ast.stmt]]:
    def make(stmt: ast.stmt) -> list[ast.stmt]:
        call = _statement_call(stmt)
        assert call is not None
        binding = _binding(func, _as_function_call(call)) or []
        body = copy.deepcopy(func.body)
        if isinstance(call.func, ast.Attribute):  # a method: its receiver is a name; use it for `self`
            receiver, binding = binding[0], binding[1:]
            for node in (n for stmt in body for n in ast.walk(stmt)):
                if isinstance(node, ast.Name) and node.id == receiver[0]:
                    node.id = receiver[1].id  # type: ignore[attr-defined]
        out: list[ast.stmt] = [_assign(ast.Name(p, ast.Store()), v) for p, v in binding
                               if not (isinstance(v, ast.Name) and v.id == p)]
        ret = body.pop() if body and isinstance(body[-1], ast.Return) else None
        out += body
        value = ret.value if ret and ret.value else ast.Constant(None)  # type: ignore[attr-defined]
        if isinstance(stmt, ast.Assign):
            out.append(ast.Assign(targets=stmt.targets, value=value, lineno=0))
        elif isinstance(stmt, ast.Return):
            out.append(ast.Return(value=value))
        elif ret and ret.value and not isinstance(ret.value, (ast.Name, ast.Constant)):  # type: ignore[attr-defined]
            out.append(ast.Expr(value=value))
        return out
    return make
