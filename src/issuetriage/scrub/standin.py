"""The stand-in check: does a script still fail the same way with the package replaced by an
empty stand-in? Then its failure is not the package's, and a minimizer must not keep it.

The stand-in is an interpreter like the real one with one more folder first on its path: a
`sitecustomize.py` that puts a finder in front of `sys.meta_path`, so `import pkg`, `import
pkg.sub` and `from pkg import name` all succeed, in cold runs and in fork servers alike (the
server pre-imports through it). Values from the stand-in are lazy: calls, attribute access,
subscripts, arithmetic, comparisons, `with` and iteration (one stand-in) give more stand-ins,
and only forcing one into a concrete value raises `StandInUsed` (a BaseException, so `except
Exception` in a script does not swallow it): truth (so `assert x == y`, `if`, `in`), hashing,
length, `str`/`repr`, numbers, `isinstance`, and identity (`x.kind is Keyword`, which no method
can intercept: `forcing_identity` rewrites the script run with the stand-in). A script whose
failure depends on a value the package computed therefore fails differently; one whose failing computation never forces such a value
(a stub returning a constant, a helper that ignores its argument) fails the same way.
"""

from __future__ import annotations

import ast
import sys
import tempfile
from collections.abc import Iterable
from dataclasses import replace
from pathlib import Path

from issuetriage.scrub.model import Failure, Interpreter
from issuetriage.scrub.warm import imported_modules

# Runs inside the sandbox under the repro's Python (3.8+): standalone, stdlib only.
_SITECUSTOMIZE = '''"""issuetriage scrub: {names} replaced by an empty stand-in (see issuetriage/scrub/standin.py)."""
import builtins
import importlib.abc
import importlib.machinery
import sys

NAMES = {names!r}


class StandInUsed(BaseException):
    """A value of a package replaced by a stand-in was looked at."""


def _refuse(self, *args, **kwargs):
    raise StandInUsed("a value of a package replaced by an empty stand-in was used")


def _absorb(self, *args, **kwargs):
    return StandIn()


class StandIn:
    def __init__(self, *args, **kwargs):
        pass

    def __getattr__(self, name):
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(name)
        return StandIn()

    @property
    def __class__(self):
        raise StandInUsed("isinstance() on a value of a package replaced by an empty stand-in")

    def __setitem__(self, key, value):
        pass

    def __delitem__(self, key):
        pass

    def __exit__(self, *args):
        return False

    def __iter__(self):  # one item: comparing what it yields forces it (a length would not)
        return iter((StandIn(),))

    __reversed__ = __iter__
    __call__ = __getitem__ = __enter__ = __neg__ = __pos__ = __invert__ = __next__ = _absorb
    __eq__ = __ne__ = __lt__ = __le__ = __gt__ = __ge__ = __contains__ = __abs__ = _absorb
    __add__ = __radd__ = __sub__ = __rsub__ = __mul__ = __rmul__ = __matmul__ = __rmatmul__ = _absorb
    __truediv__ = __rtruediv__ = __floordiv__ = __rfloordiv__ = __mod__ = __rmod__ = _absorb
    __pow__ = __rpow__ = __and__ = __rand__ = __or__ = __ror__ = __xor__ = __rxor__ = _absorb
    __lshift__ = __rlshift__ = __rshift__ = __rrshift__ = _absorb
    __bool__ = __hash__ = __len__ = __str__ = __repr__ = __format__ = __bytes__ = _refuse
    __int__ = __float__ = __complex__ = __index__ = __round__ = __fspath__ = _refuse
    __instancecheck__ = __subclasscheck__ = __await__ = __aiter__ = _refuse


def _scrub_same(a, b):
    """`a is b` of the script (see forcing_identity): identity cannot be intercepted otherwise."""
    if type(a) is StandIn or type(b) is StandIn:
        raise StandInUsed("`is` on a value of a package replaced by an empty stand-in")
    return a is b


builtins._scrub_same = _scrub_same


class _Loader(importlib.abc.Loader):
    def create_module(self, spec):
        return None

    def exec_module(self, module):
        module.__path__ = []
        module.__all__ = []
        module.__getattr__ = lambda name: StandIn()


class _Finder(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in NAMES:
            return importlib.machinery.ModuleSpec(name, _Loader(), is_package=True)
        return None


sys.meta_path.insert(0, _Finder())
'''


def stand_in(interp: Interpreter, names: Iterable[str], folder: Path) -> Interpreter:
    """`interp` with `names` (top-level packages) replaced by the stand-in; writes into `folder`."""
    names = tuple(sorted(set(names)))
    folder.mkdir(parents=True, exist_ok=True)
    folder.chmod(0o755)  # read by the sandbox's uid
    module = folder / "sitecustomize.py"
    module.write_text(_SITECUSTOMIZE.format(names=names))
    module.chmod(0o644)
    return replace(interp, label=f"{interp.label} with {', '.join(names)} stood in",
                   pythonpath=(folder, *interp.pythonpath))


def forcing_identity(code: str) -> str:
    """`a is b` / `a is not b` as a call the stand-in answers by raising when either side is one of
    its values: two stand-ins are never the same object, so `tok.ttype is T.Keyword` would be
    False and an assertion on it would fail the same way without the package."""
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return code
    found = False

    class Identity(ast.NodeTransformer):
        def visit_Compare(self, node: ast.Compare) -> ast.expr:
            nonlocal found
            self.generic_visit(node)
            if len(node.ops) != 1 or not isinstance(node.ops[0], (ast.Is, ast.IsNot)):
                return node
            found = True
            same = ast.Call(ast.Name("_scrub_same", ast.Load()), [node.left, node.comparators[0]], [])
            return same if isinstance(node.ops[0], ast.Is) else ast.UnaryOp(ast.Not(), same)

    tree = Identity().visit(tree)
    return ast.unparse(ast.fix_missing_locations(tree)) if found else code


def stand_in_folder() -> Path:
    """A fresh folder for one scrub's stand-in (the caller removes it)."""
    return Path(tempfile.mkdtemp(prefix="scrub-standin-"))


def third_party_imports(code: str) -> tuple[str, ...]:
    """Top-level packages the script imports that are not in the standard library, in order."""
    return tuple(n for n in imported_modules(code) if n not in sys.stdlib_module_names)


def package_under_test(code: str, failure: Failure | None, distribution: str | None = None) -> tuple[str, ...]:
    """The packages a report is about: the script's third-party imports, narrowed to the one its
    traceback ends in, else to the distribution being bisected when an import has its name."""
    imported = third_party_imports(code)
    inner = _top_package(failure.innermost_file) if failure and failure.innermost_file else None
    wanted = {inner} if inner in imported else {_module_name(distribution)} if distribution else set()
    return tuple(n for n in imported if n in wanted) or imported


def _module_name(distribution: str) -> str:
    return distribution.split("==")[0].strip().lower().replace("-", "_").replace(".", "_")


def _top_package(path: str) -> str | None:
    """`tomlkit` for `/venv/lib/python3.11/site-packages/tomlkit/parser.py`."""
    parts = path.replace("\\", "/").split("/")
    for marker in ("site-packages", "dist-packages"):
        if marker in parts:
            rest = parts[parts.index(marker) + 1:]
            return rest[0].removesuffix(".py") if rest else None
    return None


def independent_of(code: str, names: Iterable[str]) -> bool:
    """True when the script imports nothing outside the standard library: with any package
    replaced it runs exactly as it does now (no run is needed to know it fails the same way)."""
    return bool(set(names)) and not third_party_imports(code)


def asserts_package_value(code: str, packages: Iterable[str], message: str | None = None) -> bool:
    """The asserted value is still computed by a call into the package: some `assert` (with
    `message`, when given) tests an expression whose values flow from a name imported from one of
    `packages`. Flow- and scope-insensitive, so it errs towards yes: a name depends on everything
    ever assigned to it, appended to it or iterated into it, a parameter on every argument given
    for it, and a call of a local function on what that function returns (nothing, when it has no
    `return`: a helper that ignores what it was given computes nothing from the package)."""
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return False
    wanted = set(packages)
    roots = {(a.asname or a.name).split(".")[0] for n in ast.walk(tree) if isinstance(n, (ast.Import, ast.ImportFrom))
             for a in n.names if ((n.module or "") if isinstance(n, ast.ImportFrom) else a.name).split(".")[0] in wanted}
    flow = _Flow(tree, roots)
    tests = [n.test for n in ast.walk(tree) if isinstance(n, ast.Assert)
             and (message is None or (isinstance(n.msg, ast.Constant) and n.msg.value == message))]
    return not tests or any(flow.reaches(t) for t in tests)


class _Flow:
    """Which names and calls of a script carry values from the package's imported names."""

    def __init__(self, tree: ast.Module, roots: set[str]) -> None:
        self.roots = roots
        self.sources: dict[str, list[ast.AST]] = {}
        self.functions = {n.name: n for n in tree.body if isinstance(n, (ast.FunctionDef, ast.ClassDef))}
        for node in ast.walk(tree):
            for name, source in _flows(node):
                self.sources.setdefault(name, []).append(source)
        for call in (n for n in ast.walk(tree) if isinstance(n, ast.Call)):
            func = self.functions.get(call.func.id) if isinstance(call.func, ast.Name) else None
            if isinstance(func, ast.FunctionDef):
                for param, arg in zip([a.arg for a in func.args.args], call.args):
                    self.sources.setdefault(param, []).append(arg)
                for keyword in call.keywords:
                    self.sources.setdefault(keyword.arg or "", []).append(keyword.value)
        self.seen: set[int] = set()

    def reaches(self, node: ast.AST) -> bool:
        if id(node) in self.seen:
            return False
        self.seen.add(id(node))
        if isinstance(node, ast.Name):
            return node.id in self.roots or any(self.reaches(s) for s in self.sources.get(node.id, ()))
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in self.functions \
                and node.func.id not in self.roots:
            defined = self.functions[node.func.id]  # its arguments count only through what it returns
            if isinstance(defined, ast.ClassDef):
                return self.reaches(defined) or any(self.reaches(a) for a in [*node.args, *node.keywords])
            return any(self.reaches(n.value) for n in ast.walk(defined) if isinstance(n, ast.Return) and n.value)
        return any(self.reaches(child) for child in ast.iter_child_nodes(node))


def _flows(node: ast.AST) -> list[tuple[str, ast.AST]]:
    """(name, expression) pairs: the name takes values from the expression."""
    pairs: list[tuple[ast.expr, ast.AST]] = []
    if isinstance(node, ast.Assign):
        pairs = [(t, node.value) for t in node.targets]
    elif isinstance(node, (ast.AugAssign, ast.AnnAssign, ast.NamedExpr)) and node.value is not None:
        pairs = [(node.target, node.value)]
    elif isinstance(node, (ast.For, ast.comprehension)):
        pairs = [(node.target, node.iter)]
    elif isinstance(node, ast.withitem) and node.optional_vars is not None:
        pairs = [(node.optional_vars, node.context_expr)]
    elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):  # x.append(v), x.update(v)
        pairs = [(node.func.value, arg) for arg in [*node.args, *(k.value for k in node.keywords)]]
    found = []
    for target, source in pairs:
        for name in ast.walk(target):
            if isinstance(name, ast.Name):
                found.append((name.id, source))
            elif isinstance(name, (ast.Subscript, ast.Attribute)):
                base = _base(name)
                if isinstance(base, ast.Name):
                    found.append((base.id, source))
    return found


def _base(node: ast.expr) -> ast.expr:
    while isinstance(node, (ast.Subscript, ast.Attribute)):
        node = node.value
    return node
