"""Static safety review of a repro script (AST): every finding names its rule, line and code.

Nothing runs while a finding stands, unless a human allowed that rule (`--allow RULE`). The
review is advisory: a determined script can hide from any static reading, so the sandbox is the
boundary. It still resolves the usual disguises to the names they hide: rebound names
(`run = subprocess.run`, `def f(m=os)`), `getattr`, `__getattribute__`, `operator.attrgetter` /
`methodcaller`, `X.__dict__[...]`, `sys.modules[...]`, star imports of risky modules; dangerous
functions passed around without a call (a metaclass, a class attribute, `map(os.system, ...)`)
count as calls.
"""

from __future__ import annotations

import ast
import urllib.parse
from collections.abc import Iterator

import re2

from issuetriage.scrub.model import Finding

RULES = ("network", "file_write", "subprocess", "dynamic_code", "deserialization",
         "obfuscation", "package_install", "environment", "syntax")

_NETWORK_MODULES = ("socket", "urllib", "urllib3", "requests", "http", "httpx", "aiohttp",
                    "ftplib", "smtplib", "telnetlib", "paramiko", "websocket", "websockets",
                    "xmlrpc", "pycurl", "wget")
# Parts of network packages that only compute (parsing and quoting URLs): importing them is not
# network access, but every use must stay inside them (`urllib.request` through the same name is).
_PURE = {"urllib.parse": frozenset(urllib.parse.__all__)}
_PURE_ROOTS = {name.split(".")[0] for name in _PURE}
_NETWORK_CALLS = ("torch.hub.", "huggingface_hub.", "datasets.load_dataset", "transformers.",
                  "torchvision.datasets.", "torchvision.models.")
_NETWORK_METHODS = {"from_pretrained", "hf_hub_download", "snapshot_download", "load_state_dict_from_url",
                    "download_url_to_file", "urlopen", "urlretrieve"}
_SHELL = {"os.system", "os.popen", "os.fork", "os.forkpty", "pty.spawn", "os.posix_spawn",
          "os.posix_spawnp"}
_SHELL_PREFIXES = ("subprocess.", "os.exec", "os.spawn", "asyncio.create_subprocess", "commands.")
_LAUNCHERS = ("torchrun", "torch.distributed.run", "torch.distributed.launch")
_DYNAMIC = {"eval", "exec", "compile", "__import__", "importlib.import_module",
            "importlib.__import__", "types.FunctionType", "types.CodeType", "globals", "vars",
            "builtins.eval", "builtins.exec", "ctypes.CDLL", "ctypes.cdll.LoadLibrary"}
_DESERIALIZE = {"torch.load", "torch.jit.load", "pickle.load", "pickle.loads", "pickle.Unpickler",
                "_pickle.load", "_pickle.loads", "cPickle.load", "dill.load", "dill.loads",
                "cloudpickle.load", "cloudpickle.loads", "joblib.load", "pandas.read_pickle",
                "shelve.open", "torch.package.PackageImporter", "yaml.unsafe_load"}
_DECODERS = {"bytes.fromhex", "codecs.decode"}
_DECODER_MODULES = {"base64", "binascii", "zlib", "marshal", "lzma", "bz2", "gzip", "quopri", "uu"}
_DECODER_NAME = re2.compile(r"decod|decompress|a2b|unhexlify|^loads?$")
_FS_WRITERS = {"os.remove", "os.unlink", "os.rmdir", "os.removedirs", "os.rename", "os.replace",
               "os.makedirs", "os.mkdir", "os.chmod", "os.chown", "os.symlink", "os.link",
               "os.truncate", "shutil.rmtree", "shutil.copy", "shutil.copy2", "shutil.copyfile",
               "shutil.copytree", "shutil.move", "torch.save", "numpy.save", "pathlib.Path"}
_PATH_WRITES = {"write_text", "write_bytes", "unlink", "mkdir", "touch", "rmdir", "rename",
                "symlink_to", "chmod"}
_ENV_OK = re2.compile(r"^(MASTER_ADDR|MASTER_PORT|RANK|WORLD_SIZE|LOCAL_RANK|LOCAL_WORLD_SIZE|"
                     r"GROUP_RANK|CUDA_[A-Z_]+|TORCH_[A-Z_0-9]+|TORCHINDUCTOR_[A-Z_0-9]+|"
                     r"TORCHDYNAMO_[A-Z_0-9]+|PYTORCH_[A-Z_0-9]+|NCCL_[A-Z_]+|GLOO_[A-Z_]+|"
                     r"OMP_NUM_THREADS|MKL_NUM_THREADS|CUBLAS_WORKSPACE_CONFIG|"
                     r"TORCH_LOGS|PYTHONHASHSEED|KMP_[A-Z_]+)$")
_BLOB = re2.compile(r"^[A-Za-z0-9+/=\s]{120,}$|^[0-9a-fA-F\s]{120,}$")
_OPENERS = {"open", "io.open", "_io.open", "os.open", "builtins.open", "io.FileIO", "_io.FileIO",
            "codecs.open"}
_SUBPROCESS_CALLS = {f"subprocess.{n}" for n in ("run", "Popen", "call", "check_call",
                                                 "check_output", "getoutput", "getstatusoutput")}
_REFERENCED = ({**dict.fromkeys(_SHELL | _SUBPROCESS_CALLS, "subprocess"),
                **dict.fromkeys(_DYNAMIC - {"types.FunctionType", "types.CodeType"}, "dynamic_code"),
                **dict.fromkeys(_DESERIALIZE, "deserialization")})
_RISKY_STAR = {n.split(".")[0] for n in (*_SHELL, *_SUBPROCESS_CALLS, *_DYNAMIC, *_DESERIALIZE,
                                         *_FS_WRITERS, *_OPENERS)} | _DECODER_MODULES | {
    "sys", "builtins", "importlib", "ctypes", "operator", "asyncio", "pty", "shelve", *_NETWORK_MODULES}
_BUILTIN_VALUES = {"exec", "eval", "compile", "__import__", "getattr", "open", "globals", "vars",
                   "breakpoint"}
_TEMP_FACTORIES = ("tempfile.",)
_WORKING_FOLDER = {"os.getcwd", "os.getcwdb", "pathlib.Path.cwd", "Path.cwd"}
_INSTALL = re2.compile(r"\bpip3? install\b|\bconda install\b|\bapt(-get)? install\b")
_ESCAPES = re2.compile(r"\\x[0-9a-fA-F]{2}|\\u[0-9a-fA-F]{4}|\\[0-7]{3}|\\N\{")


def review(code: str) -> list[Finding]:
    """All findings for a script, sorted by line; a script that does not parse is a finding."""
    try:
        tree = ast.parse(code)
    except SyntaxError as exc:
        return [Finding("syntax", exc.lineno or 0, (exc.text or "").strip())]
    aliases = _aliases(tree)
    lines = code.splitlines()
    found = set(_scan(tree, aliases, lines, _temp_names(tree, aliases)))
    return [Finding(*f) for f in sorted(found, key=lambda f: (f[1], f[0]))]


def _aliases(tree: ast.Module) -> dict[str, str]:
    """Local name → dotted origin, from every import (so `import subprocess as sp` is seen) and
    every rebinding of an imported or dangerous builtin name (`run = sp.run`, `def f(m=os)`)."""
    names: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                names[a.asname or a.name.split(".")[0]] = a.name if a.asname else a.name.split(".")[0]
        elif isinstance(node, ast.ImportFrom) and node.module:
            for a in node.names:
                names[a.asname or a.name] = f"{node.module}.{a.name}"
    names.setdefault("np", "numpy")
    imported = set(names)
    for _ in range(3):  # chains: a = os; b = a
        for target, value in _bindings(tree):
            origin = qualname(value, names)
            root = origin.split(".")[0]
            if origin and target != origin and (root in _BUILTIN_VALUES or _root_name(value) in imported
                                                or root in names.values()):
                names[target] = origin
                imported.add(target)
    return names


def _bindings(tree: ast.Module) -> Iterator[tuple[str, ast.expr]]:
    """(name, value) for plain assignments, walrus, annotated assignments and argument defaults."""
    for node in ast.walk(tree):
        pairs: list[tuple[ast.expr, ast.expr]] = []
        if isinstance(node, ast.Assign):
            pairs = [(t, node.value) for t in node.targets]
        elif isinstance(node, (ast.AnnAssign, ast.NamedExpr)) and node.value is not None:
            pairs = [(node.target, node.value)]
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            args = node.args
            positional = [*args.posonlyargs, *args.args]
            pairs = [(ast.Name(a.arg), d) for a, d in zip(positional[len(positional) - len(args.defaults):],
                                                          args.defaults)]
            pairs += [(ast.Name(a.arg), d) for a, d in zip(args.kwonlyargs, args.kw_defaults) if d]
        for target, value in pairs:
            if isinstance(target, (ast.Tuple, ast.List)) and isinstance(value, (ast.Tuple, ast.List)):
                pairs += list(zip(target.elts, value.elts))
            elif isinstance(target, ast.Name):
                yield target.id, value


def _root_name(node: ast.AST) -> str:
    while isinstance(node, (ast.Attribute, ast.Subscript, ast.Call)):
        node = node.func if isinstance(node, ast.Call) else node.value
    return node.id if isinstance(node, ast.Name) else ""


def qualname(node: ast.AST, aliases: dict[str, str]) -> str:
    """`sp.run` → `subprocess.run` through the import aliases, and through the spellings that hide
    an attribute: getattr(X, 'a'), X.__getattribute__('a'), operator.attrgetter('a')(X),
    X.__dict__['a'] / .get('a'), sys.modules['m']; '' when not a dotted name."""
    parts: list[str] = []
    while True:
        if isinstance(node, ast.Attribute):
            parts.append(node.attr)
            node = node.value
            continue
        hidden = _hidden_attribute(node, aliases)
        if hidden is None:
            break
        node, attr = hidden  # type: ignore[assignment]
        if node is None:
            return ".".join([attr, *reversed(parts)])
        parts.append(attr)
    if not isinstance(node, ast.Name):
        return ""
    parts.append(aliases.get(node.id, node.id))
    return ".".join(reversed(parts))


def _hidden_attribute(node: ast.AST, aliases: dict[str, str]) -> tuple[ast.AST | None, str] | None:
    """(object, attribute name) that a getattr-like spelling with a constant name reaches;
    (None, module) for sys.modules['module']."""
    key = _constant_key(node)
    if isinstance(node, ast.Subscript) or _is_get(node):
        holder = node.value if isinstance(node, ast.Subscript) else node.func.value  # type: ignore[attr-defined]
        if key is None:
            return None
        if isinstance(holder, ast.Attribute) and holder.attr == "__dict__":
            return holder.value, key
        if qualname(holder, aliases) == "sys.modules":
            return None, key
        return None
    if not isinstance(node, ast.Call):
        return None
    func = node.func
    name = qualname(func, aliases) if not isinstance(func, ast.Call) else ""
    if name in {"getattr", "builtins.getattr", "object.__getattribute__"} and len(node.args) >= 2:
        attr = node.args[1]
        if isinstance(attr, ast.Constant) and isinstance(attr.value, str):
            return node.args[0], attr.value
    if isinstance(func, ast.Attribute) and func.attr == "__getattribute__" and node.args:
        if isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str):
            return func.value, node.args[0].value
    if (isinstance(func, ast.Call) and qualname(func.func, aliases) == "operator.attrgetter"
            and node.args and func.args and isinstance(func.args[0], ast.Constant)):
        return node.args[0], str(func.args[0].value)
    return None


def _is_get(node: ast.AST) -> bool:
    return (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
            and node.func.attr == "get" and bool(node.args))


def _constant_key(node: ast.AST) -> str | None:
    key = node.slice if isinstance(node, ast.Subscript) else (node.args[0] if _is_get(node) else None)  # type: ignore[attr-defined]
    return key.value if isinstance(key, ast.Constant) and isinstance(key.value, str) else None


def _snippet(node: ast.AST, lines: list[str]) -> str:
    line = lines[node.lineno - 1] if 0 < getattr(node, "lineno", 0) <= len(lines) else ""  # type: ignore[attr-defined]
    return line.strip()[:160]


def _scan(tree: ast.Module, aliases: dict[str, str], lines: list[str],
          temps: set[str]) -> Iterator[tuple[str, int, str]]:
    called = {id(n.func) for n in ast.walk(tree) if isinstance(n, ast.Call)}
    for node in ast.walk(tree):
        rule = _rule_for(node, aliases, temps) or (None if id(node) in called else _reference_rule(node, aliases))
        if rule:
            yield rule, node.lineno, _snippet(node, lines)  # type: ignore[attr-defined]
    yield from _exotic_escapes(tree, lines)
    yield from _impure_uses(tree, aliases, lines)


def _impure_uses(tree: ast.Module, aliases: dict[str, str], lines: list[str]) -> Iterator[tuple[str, int, str]]:
    """Names bound into a package with a pure part (`import urllib.parse as p`) may only reach
    that part's functions (`p.quote(...)`, `urllib.parse.urlsplit(u).netloc`); anything else
    (`urllib.request...`, `p.sys`, the module passed around as a value) is network."""
    parents = {id(child): parent for parent in ast.walk(tree) for child in ast.iter_child_nodes(parent)}
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load)
                and aliases.get(node.id, "").split(".")[0] in _PURE_ROOTS):
            continue
        top: ast.expr = node
        while isinstance(up := parents.get(id(top)), ast.Attribute) and up.value is top:
            top = up
        if not _pure(qualname(top, aliases)):
            yield "network", node.lineno, _snippet(node, lines)


def _pure(name: str) -> bool:
    """`urllib.parse.quote...`: a name inside a pure part of a network package."""
    parts = name.split(".")
    return len(parts) > 2 and parts[2] in _PURE.get(".".join(parts[:2]), ())


def _reference_rule(node: ast.AST, aliases: dict[str, str]) -> str | None:
    """A dangerous function used as a value (passed, stored, a metaclass) counts as called; so
    does hiding any name behind sys.modules, __dict__, attrgetter or __getattribute__."""
    if not isinstance(node, (ast.Name, ast.Attribute, ast.Subscript, ast.Call)):
        return None
    if isinstance(node, (ast.Name, ast.Attribute)) and not isinstance(node.ctx, ast.Load):
        return None
    name = qualname(node, aliases)
    if name in _REFERENCED or name.startswith(("os.exec", "os.spawn", "asyncio.create_subprocess")):
        return _REFERENCED.get(name, "subprocess")
    return None


def _rule_for(node: ast.AST, aliases: dict[str, str], temps: set[str]) -> str | None:
    if isinstance(node, (ast.Import, ast.ImportFrom)):
        return _import_rule(node)
    if isinstance(node, ast.Call):
        return _call_rule(node, aliases, temps)
    if isinstance(node, ast.Subscript) and _dynamic_lookup(node, aliases):
        return "dynamic_code"
    if isinstance(node, (ast.Assign, ast.AugAssign, ast.Delete)):
        return _env_write_rule(node, aliases)
    if isinstance(node, ast.Name) and node.id in {"__builtins__", "__loader__"}:
        return "dynamic_code"
    if isinstance(node, ast.Attribute) and node.attr in {"__globals__", "__code__", "__subclasses__",
                                                         "__self__", "__builtins__"}:
        return "dynamic_code"
    if isinstance(node, ast.Constant) and isinstance(node.value, (str, bytes)):
        text = node.value.decode("latin-1") if isinstance(node.value, bytes) else node.value
        if _BLOB.match(text):
            return "obfuscation"
        if _INSTALL.search(text):
            return "package_install"
    return None


def _dynamic_lookup(node: ast.Subscript | ast.Call, aliases: dict[str, str]) -> bool:
    """sys.modules[...] or X.__dict__[...] with a name computed at run time, or written to."""
    holder = node.value if isinstance(node, ast.Subscript) else node.func.value  # type: ignore[attr-defined]
    hides = (isinstance(holder, ast.Attribute) and holder.attr == "__dict__") or \
        qualname(holder, aliases) == "sys.modules"
    stored = isinstance(node, ast.Subscript) and not isinstance(node.ctx, ast.Load)
    return hides and (stored or _constant_key(node) is None)


def _import_rule(node: ast.Import | ast.ImportFrom) -> str | None:
    names = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module or ""]
    if isinstance(node, ast.ImportFrom) and any(a.name == "*" for a in node.names):
        if (node.module or "").split(".")[0] in _RISKY_STAR:
            return "dynamic_code"  # every name it brings in is hidden from the review
    for name in names:
        root = name.split(".")[0]
        if root in _NETWORK_MODULES and not _pure_import(node, name):
            return "network"
        if root in {"pip", "ensurepip"}:
            return "package_install"
        if root in {"marshal"}:
            return "obfuscation"
        if root in {"pickle", "_pickle", "cPickle", "dill", "cloudpickle", "shelve"}:
            return "deserialization"
    return None


def _pure_import(node: ast.Import | ast.ImportFrom, name: str) -> bool:
    """`import urllib.parse [as p]`, `from urllib.parse import ...`, `from urllib import parse`
    (what the imported names then reach is checked where they are used: `_impure_uses`)."""
    if isinstance(node, ast.Import):
        return name in _PURE
    return name in _PURE or all(f"{name}.{a.name}" in _PURE for a in node.names)


def _call_rule(call: ast.Call, aliases: dict[str, str], temps: set[str]) -> str | None:
    name = _called_name(call, aliases)
    method = call.func.attr if isinstance(call.func, ast.Attribute) else name
    if name in _DYNAMIC or (name == "getattr" and _suspicious_getattr(call)) or method == "exec" or \
            _hidden_by_name(call, aliases) or (_is_get(call) and _dynamic_lookup(call, aliases)):
        return "dynamic_code"
    if name in _SHELL or name.startswith(_SHELL_PREFIXES):
        return None if _is_launcher(call) else "subprocess"
    if name in _DESERIALIZE or (name.endswith("numpy.load") and _kw_true(call, "allow_pickle")):
        return "deserialization"
    if name in _DECODERS or method == "fromhex" or (method == "decode" and _codec_arg(call)) or (
            name.split(".")[0] in _DECODER_MODULES and _DECODER_NAME.search(name.rsplit(".", 1)[-1])):
        return "obfuscation"
    if name.startswith(_NETWORK_CALLS) or method in _NETWORK_METHODS or _kw_true(call, "download") or (
            name.split(".")[0] in _NETWORK_MODULES and not _pure(name)):  # sys.modules['socket'].socket()
        return "network"
    if name in _OPENERS:
        return "file_write" if _open_writes_outside(call, temps) else None
    if name in _FS_WRITERS:
        return "file_write" if name != "pathlib.Path" and _path_outside(call, name, temps) else None
    if method in _PATH_WRITES and _receiver_outside(call, temps):
        return "file_write"
    if method == "open" and isinstance(call.func, ast.Attribute) and _mode_writes(call.args[:1], call) \
            and _receiver_outside(call, temps):
        return "file_write"
    if name in {"os.putenv", "os.unsetenv", "os.environ.update", "os.environ.clear", "os.chdir",
                "os.environ.pop", "os.environ.setdefault", "os.environ.__setitem__",
                "sys.path.append", "sys.path.insert", "site.addsitedir"}:
        return _env_call_rule(call, name)
    return None


def _called_name(call: ast.Call, aliases: dict[str, str]) -> str:
    """The dotted name a call reaches, operator.methodcaller('a', ...)(X) included."""
    func = call.func
    if (isinstance(func, ast.Call) and qualname(func.func, aliases) == "operator.methodcaller"
            and func.args and isinstance(func.args[0], ast.Constant) and call.args):
        target = qualname(call.args[0], aliases)
        return f"{target}.{func.args[0].value}" if target else ""  # type: ignore[str-bytes-safe]
    return qualname(func, aliases)


def _hidden_by_name(call: ast.Call, aliases: dict[str, str]) -> bool:
    """attrgetter / methodcaller / __getattribute__ with a name that is not a constant."""
    func = call.func
    name = qualname(func, aliases)
    if name in {"operator.attrgetter", "operator.methodcaller", "object.__getattribute__"} or (
            isinstance(func, ast.Attribute) and func.attr == "__getattribute__"):
        key = call.args[1] if name == "object.__getattribute__" and len(call.args) > 1 else (
            call.args[0] if call.args else None)
        return not (isinstance(key, ast.Constant) and isinstance(key.value, str))
    return False


def _is_launcher(call: ast.Call) -> bool:
    """`subprocess.run(["torchrun", ...])` and `python -m torch.distributed.run` are allowed."""
    if not call.args:
        return False
    first = call.args[0]
    items = first.elts if isinstance(first, (ast.List, ast.Tuple)) else [first]
    words = []
    for item in items:
        if isinstance(item, ast.Constant) and isinstance(item.value, str):
            words += item.value.split()
        else:
            words.append("?")
    return bool(words) and (words[0] == "torchrun" or any(w in _LAUNCHERS for w in words[1:3]))


def _suspicious_getattr(call: ast.Call) -> bool:
    if len(call.args) < 2:
        return False
    attr = call.args[1]
    if not isinstance(attr, ast.Constant):
        return True
    return str(attr.value) in {"system", "popen", "eval", "exec", "__import__", "load", "loads"}


def _kw_true(call: ast.Call, key: str) -> bool:
    return any(k.arg == key and not (isinstance(k.value, ast.Constant) and not k.value.value)
               for k in call.keywords)


def _codec_arg(call: ast.Call) -> bool:
    args = [a.value for a in call.args if isinstance(a, ast.Constant)]
    return any(str(a).lower().replace("-", "_") in {"rot13", "rot_13", "hex", "base64", "zlib",
                                                    "bz2", "unicode_escape"} for a in args)


def _temp_names(tree: ast.Module, aliases: dict[str, str]) -> set[str]:
    """Names that only ever hold a path in the run's own working or temp folders: a temporary file
    or folder (`tempfile.mkdtemp()`, `with TemporaryDirectory() as d`), the working folder
    (`os.getcwd()`, `Path.cwd()`), a relative path, or a path built from one of those
    (`os.path.join(d, 'a.toml')`, `Path(d) / 'x'`, `f'{d}/x'`). A name bound any other way
    anywhere (a loop, a parameter, an import, `+=`) is not one."""
    bound: dict[str, list[ast.expr]] = {}
    plain: set[int] = set()  # Name nodes that are a whole target of one of those bindings
    other: set[str] = set()
    for node in ast.walk(tree):
        pairs: list[tuple[ast.expr, ast.expr]] = []
        if isinstance(node, ast.withitem) and node.optional_vars is not None:
            pairs = [(node.optional_vars, node.context_expr)]
        elif isinstance(node, ast.Assign):
            pairs = [(t, node.value) for t in node.targets]
        elif isinstance(node, ast.AnnAssign) and node.value is not None:
            pairs = [(node.target, node.value)]
        elif isinstance(node, ast.arg):
            other.add(node.arg)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            other |= {(a.asname or a.name).split(".")[0] for a in node.names}
        for target, value in pairs:
            elts = target.elts if isinstance(target, ast.Tuple) and _is_factory(value, aliases) else [target]
            for elt in elts:  # `fd, path = tempfile.mkstemp()` binds both
                if isinstance(elt, ast.Name):
                    bound.setdefault(elt.id, []).append(value)
                    plain.add(id(elt))
    other |= {n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Load)
              and id(n) not in plain}
    names: set[str] = set()
    while True:
        grown = {n for n, values in bound.items() if n not in other
                 and all(_is_factory(v, aliases) or _temporary(v, names) for v in values)}
        if grown == names:
            return names
        names = grown


def _is_factory(value: ast.expr, aliases: dict[str, str]) -> bool:
    return isinstance(value, ast.Call) and (qualname(value.func, aliases).startswith(_TEMP_FACTORIES)
                                            or qualname(value.func, aliases) in _WORKING_FOLDER)


def _outside(path: ast.expr | None, temps: set[str]) -> bool:
    """True for a path that may leave the scratch dir: absolute (but /tmp, which the sandbox keeps
    in scratch), `..`, `~`, or computed from anything but a temporary folder."""
    if path is None:
        return False
    if isinstance(path, ast.Constant) and isinstance(path.value, str):
        text = path.value
        return (text.startswith(("/", "~")) and not _in_tmp(text)) or ".." in text.split("/")
    if isinstance(path, ast.JoinedStr):
        head = path.values[0] if path.values else None
        if isinstance(head, ast.FormattedValue):
            return not _temporary(head.value, temps) or _climbs(path)
        return not isinstance(head, ast.Constant) or _outside(ast.Constant(str(head.value)), temps) or _climbs(path)
    if _temporary(path, temps):
        return _climbs(path)
    return True  # a computed path could point anywhere


def _in_tmp(text: str) -> bool:
    return (text == "/tmp" or text.startswith("/tmp/")) and ".." not in text.split("/")


def _climbs(node: ast.AST) -> bool:
    return any(isinstance(n, ast.Constant) and isinstance(n.value, str) and ".." in n.value.split("/")
               for n in ast.walk(node))


def _temporary(node: ast.AST, temps: set[str]) -> bool:
    """In the run's own folders: a temporary name, `.name` of one, a tempfile call, the working
    folder, a relative or /tmp path, or a join / `/` / `+` / f-string that starts with one."""
    if isinstance(node, ast.Name):
        return node.id in temps
    if isinstance(node, ast.Attribute) and node.attr == "name":
        return _temporary(node.value, temps)
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return (_in_tmp(node.value) or not node.value.startswith(("/", "~"))) and not _climbs(node)
    if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Div, ast.Add)):
        return _temporary(node.left, temps) and not _climbs(node)
    if isinstance(node, ast.JoinedStr):
        return not _outside(node, temps)
    if isinstance(node, ast.Call):
        name = qualname(node.func, {})
        if name.startswith("tempfile.") or name in _WORKING_FOLDER:
            return True
        if name in {"os.path.join", "Path", "pathlib.Path", "PurePath", "str", "os.path.abspath",
                    "os.path.realpath", "os.path.normpath", "os.fspath"} and node.args:
            return _temporary(node.args[0], temps) and not _climbs(node)
    return False


def _mode_writes(args: list[ast.expr], call: ast.Call) -> bool:
    mode = args[0] if args else next((k.value for k in call.keywords if k.arg == "mode"), None)
    if mode is None:
        return False
    return not (isinstance(mode, ast.Constant) and not any(c in str(mode.value) for c in "wax+"))


def _open_writes_outside(call: ast.Call, temps: set[str]) -> bool:
    if not _mode_writes(call.args[1:2], call):
        return False
    return _outside(call.args[0] if call.args else None, temps)


def _path_outside(call: ast.Call, name: str, temps: set[str]) -> bool:
    targets = call.args[1:2] if name in {"torch.save", "numpy.save"} else call.args[:2]
    return any(_outside(t, temps) for t in targets) or not targets


def _receiver_outside(call: ast.Call, temps: set[str]) -> bool:
    receiver = call.func.value  # type: ignore[attr-defined]
    if isinstance(receiver, ast.Call) and receiver.args:
        return _outside(receiver.args[0], temps)
    if isinstance(receiver, ast.BinOp):  # Path("/x") / "y" style: outside unless it starts in a temp folder
        return not _temporary(receiver, temps) or _climbs(receiver)
    return False


def _env_key_ok(key: ast.expr | None) -> bool:
    return isinstance(key, ast.Constant) and bool(_ENV_OK.match(str(key.value)))


def _env_call_rule(call: ast.Call, name: str) -> str | None:
    if name in {"os.environ.setdefault", "os.putenv", "os.environ.pop", "os.unsetenv"}:
        return None if _env_key_ok(call.args[0] if call.args else None) else "environment"
    if name == "os.environ.update" and call.args and isinstance(call.args[0], ast.Dict):
        return None if all(_env_key_ok(k) for k in call.args[0].keys) else "environment"
    return "environment"


def _env_write_rule(node: ast.Assign | ast.AugAssign | ast.Delete, aliases: dict[str, str]) -> str | None:
    targets = node.targets if isinstance(node, (ast.Assign, ast.Delete)) else [node.target]
    for target in targets:
        if isinstance(target, ast.Subscript) and qualname(target.value, aliases) == "os.environ":
            if not _env_key_ok(target.slice):
                return "environment"
        if isinstance(target, ast.Attribute) and qualname(target, aliases) in {"os.environ", "sys.path"}:
            return "environment"
    return None


def _exotic_escapes(tree: ast.Module, lines: list[str]) -> Iterator[tuple[str, int, str]]:
    """Strings written mostly as escapes, chr() chains and non-ASCII identifiers hide intent."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, (str, bytes)):
            source = lines[node.lineno - 1] if node.lineno <= len(lines) else ""
            if len(_ESCAPES.findall(source)) >= 6:
                yield "obfuscation", node.lineno, _snippet(node, lines)
        elif isinstance(node, ast.BinOp) and _chr_chain(node) >= 4:
            yield "obfuscation", node.lineno, _snippet(node, lines)
        elif isinstance(node, ast.Name) and not node.id.isascii():
            yield "obfuscation", node.lineno, _snippet(node, lines)


def _chr_chain(node: ast.expr) -> int:
    if isinstance(node, ast.BinOp):
        return _chr_chain(node.left) + _chr_chain(node.right)
    return int(isinstance(node, ast.Call) and getattr(node.func, "id", "") == "chr")
