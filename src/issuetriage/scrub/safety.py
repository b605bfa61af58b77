"""Static safety review of a repro script (AST): every finding names its rule, line and code.

Nothing runs while a finding stands, unless a human allowed that rule (`--allow RULE`).
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator

from issuetriage.scrub.model import Finding

RULES = ("network", "file_write", "subprocess", "dynamic_code", "deserialization",
         "obfuscation", "package_install", "environment", "syntax")

_NETWORK_MODULES = ("socket", "urllib", "urllib3", "requests", "http", "httpx", "aiohttp",
                    "ftplib", "smtplib", "telnetlib", "paramiko", "websocket", "websockets",
                    "xmlrpc", "pycurl", "wget")
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
_DECODERS = {"base64.b64decode", "base64.b85decode", "base64.a85decode", "base64.b32decode",
             "base64.decodebytes", "binascii.unhexlify", "binascii.a2b_base64", "bytes.fromhex",
             "zlib.decompress", "marshal.loads", "marshal.load", "codecs.decode", "lzma.decompress",
             "bz2.decompress", "gzip.decompress"}
_FS_WRITERS = {"os.remove", "os.unlink", "os.rmdir", "os.removedirs", "os.rename", "os.replace",
               "os.makedirs", "os.mkdir", "os.chmod", "os.chown", "os.symlink", "os.link",
               "os.truncate", "shutil.rmtree", "shutil.copy", "shutil.copy2", "shutil.copyfile",
               "shutil.copytree", "shutil.move", "torch.save", "numpy.save", "pathlib.Path"}
_PATH_WRITES = {"write_text", "write_bytes", "unlink", "mkdir", "touch", "rmdir", "rename",
                "symlink_to", "chmod"}
_ENV_OK = re.compile(r"^(MASTER_ADDR|MASTER_PORT|RANK|WORLD_SIZE|LOCAL_RANK|LOCAL_WORLD_SIZE|"
                     r"GROUP_RANK|CUDA_[A-Z_]+|TORCH_[A-Z_0-9]+|TORCHINDUCTOR_[A-Z_0-9]+|"
                     r"TORCHDYNAMO_[A-Z_0-9]+|PYTORCH_[A-Z_0-9]+|NCCL_[A-Z_]+|GLOO_[A-Z_]+|"
                     r"OMP_NUM_THREADS|MKL_NUM_THREADS|CUBLAS_WORKSPACE_CONFIG|"
                     r"TORCH_LOGS|PYTHONHASHSEED|KMP_[A-Z_]+)$")
_BLOB = re.compile(r"^[A-Za-z0-9+/=\s]{120,}$|^[0-9a-fA-F\s]{120,}$")


def review(code: str) -> list[Finding]:
    """All findings for a script, sorted by line; a script that does not parse is a finding."""
    try:
        tree = ast.parse(code)
    except SyntaxError as exc:
        return [Finding("syntax", exc.lineno or 0, (exc.text or "").strip())]
    aliases = _aliases(tree)
    lines = code.splitlines()
    found = set(_scan(tree, aliases, lines))
    return [Finding(*f) for f in sorted(found, key=lambda f: (f[1], f[0]))]


def _aliases(tree: ast.Module) -> dict[str, str]:
    """Local name → dotted origin, from every import (so `import subprocess as sp` is seen)."""
    names: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                names[a.asname or a.name.split(".")[0]] = a.name if a.asname else a.name.split(".")[0]
        elif isinstance(node, ast.ImportFrom) and node.module:
            for a in node.names:
                names[a.asname or a.name] = f"{node.module}.{a.name}"
    names.setdefault("np", "numpy")
    return names


def qualname(node: ast.AST, aliases: dict[str, str]) -> str:
    """`sp.run` → `subprocess.run` through the import aliases; '' when not a dotted name."""
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return ""
    parts.append(aliases.get(node.id, node.id))
    return ".".join(reversed(parts))


def _snippet(node: ast.AST, lines: list[str]) -> str:
    line = lines[node.lineno - 1] if 0 < getattr(node, "lineno", 0) <= len(lines) else ""
    return line.strip()[:160]


def _scan(tree: ast.Module, aliases: dict[str, str], lines: list[str]) -> Iterator[tuple[str, int, str]]:
    for node in ast.walk(tree):
        rule = _rule_for(node, aliases)
        if rule:
            yield rule, node.lineno, _snippet(node, lines)  # type: ignore[attr-defined]
    yield from _exotic_escapes(tree, lines)


def _rule_for(node: ast.AST, aliases: dict[str, str]) -> str | None:
    if isinstance(node, (ast.Import, ast.ImportFrom)):
        return _import_rule(node)
    if isinstance(node, ast.Call):
        return _call_rule(node, aliases)
    if isinstance(node, (ast.Assign, ast.AugAssign, ast.Delete)):
        return _env_write_rule(node, aliases)
    if isinstance(node, ast.Name) and node.id in {"__builtins__", "__loader__"}:
        return "dynamic_code"
    if isinstance(node, ast.Attribute) and node.attr in {"__globals__", "__code__", "__subclasses__"}:
        return "dynamic_code"
    if isinstance(node, ast.Constant) and isinstance(node.value, (str, bytes)):
        text = node.value.decode("latin-1") if isinstance(node.value, bytes) else node.value
        if _BLOB.match(text):
            return "obfuscation"
        if re.search(r"\bpip3? install\b|\bconda install\b|\bapt(-get)? install\b", text):
            return "package_install"
    return None


def _import_rule(node: ast.Import | ast.ImportFrom) -> str | None:
    names = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module or ""]
    for name in names:
        root = name.split(".")[0]
        if root in _NETWORK_MODULES:
            return "network"
        if root in {"pip", "ensurepip"}:
            return "package_install"
        if root in {"marshal"}:
            return "obfuscation"
        if root in {"pickle", "_pickle", "cPickle", "dill", "cloudpickle", "shelve"}:
            return "deserialization"
    return None


def _call_rule(call: ast.Call, aliases: dict[str, str]) -> str | None:
    name = qualname(call.func, aliases)
    method = call.func.attr if isinstance(call.func, ast.Attribute) else name
    if name in _DYNAMIC or (name == "getattr" and _suspicious_getattr(call)):
        return "dynamic_code"
    if name in _SHELL or name.startswith(_SHELL_PREFIXES):
        return None if _is_launcher(call) else "subprocess"
    if name in _DESERIALIZE or (name.endswith("numpy.load") and _kw_true(call, "allow_pickle")):
        return "deserialization"
    if name in _DECODERS or method == "fromhex" or (method == "decode" and _codec_arg(call)):
        return "obfuscation"
    if name.startswith(_NETWORK_CALLS) or method in _NETWORK_METHODS or _kw_true(call, "download"):
        return "network"
    if name == "open" or name.endswith(("io.open", "os.open", "builtins.open")):
        return "file_write" if _open_writes_outside(call) else None
    if name in _FS_WRITERS:
        return "file_write" if name != "pathlib.Path" and _path_outside(call, name) else None
    if method in _PATH_WRITES and _receiver_outside(call):
        return "file_write"
    if name in {"os.putenv", "os.unsetenv", "os.environ.update", "os.environ.clear", "os.chdir",
                "os.environ.pop", "os.environ.setdefault", "os.environ.__setitem__",
                "sys.path.append", "sys.path.insert", "site.addsitedir"}:
        return _env_call_rule(call, name)
    return None


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


def _outside(path: ast.expr | None) -> bool:
    """True for a path that may leave the scratch dir: absolute, `..`, `~`, or not a constant."""
    if path is None:
        return False
    if isinstance(path, ast.Constant) and isinstance(path.value, str):
        return path.value.startswith(("/", "~")) or ".." in path.value.split("/")
    if isinstance(path, ast.JoinedStr):
        head = path.values[0] if path.values else None
        return not (isinstance(head, ast.Constant) and not str(head.value).startswith(("/", "~"))
                    and ".." not in str(head.value))
    return True  # a computed path could point anywhere


def _open_writes_outside(call: ast.Call) -> bool:
    mode = call.args[1] if len(call.args) > 1 else next(
        (k.value for k in call.keywords if k.arg == "mode"), None)
    if mode is None:
        return False
    if isinstance(mode, ast.Constant) and not any(c in str(mode.value) for c in "wax+"):
        return False
    return _outside(call.args[0] if call.args else None)


def _path_outside(call: ast.Call, name: str) -> bool:
    targets = call.args[1:2] if name in {"torch.save", "numpy.save"} else call.args[:2]
    return any(_outside(t) for t in targets) or not targets


def _receiver_outside(call: ast.Call) -> bool:
    receiver = call.func.value  # type: ignore[attr-defined]
    if isinstance(receiver, ast.Call) and receiver.args:
        return _outside(receiver.args[0])
    return isinstance(receiver, ast.BinOp)  # Path("/x") / "y" style: be conservative


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
            if len(re.findall(r"\\x[0-9a-fA-F]{2}|\\u[0-9a-fA-F]{4}|\\[0-7]{3}|\\N\{", source)) >= 6:
                yield "obfuscation", node.lineno, _snippet(node, lines)
        elif isinstance(node, ast.BinOp) and _chr_chain(node) >= 4:
            yield "obfuscation", node.lineno, _snippet(node, lines)
        elif isinstance(node, ast.Name) and not node.id.isascii():
            yield "obfuscation", node.lineno, _snippet(node, lines)


def _chr_chain(node: ast.expr) -> int:
    if isinstance(node, ast.BinOp):
        return _chr_chain(node.left) + _chr_chain(node.right)
    return int(isinstance(node, ast.Call) and getattr(node.func, "id", "") == "chr")
