"""Build wheels of a made-up package in a test: a local wheel folder, no network."""

from __future__ import annotations

import base64
import hashlib
import zipfile
from pathlib import Path

# `tinylib.combine` raises while VERSION is in `broken`; the test picks which versions.
TINYLIB = '''
VERSION = {version!r}
BROKEN = {broken!r}


def combine(a, b):
    if VERSION in BROKEN and len(a) != len(b):
        raise ValueError(f"combine: length mismatch between operands ({{len(a)}} vs {{len(b)}})")
    return [x + y for x, y in zip(a, b)]
'''


def build_wheel(folder: Path, name: str, version: str, source: str) -> Path:
    """A pure-Python py3-none-any wheel holding one module `name.py`."""
    dist = f"{name}-{version}.dist-info"
    files = {f"{name}.py": source,
             f"{dist}/METADATA": f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n",
             f"{dist}/WHEEL": "Wheel-Version: 1.0\nGenerator: tests\nRoot-Is-Purelib: true\nTag: py3-none-any\n"}
    record = []
    for path, text in files.items():
        digest = base64.urlsafe_b64encode(hashlib.sha256(text.encode()).digest()).rstrip(b"=").decode()
        record.append(f"{path},sha256={digest},{len(text.encode())}")
    files[f"{dist}/RECORD"] = "\n".join(record + [f"{dist}/RECORD,,"]) + "\n"
    folder.mkdir(parents=True, exist_ok=True)
    target = folder / f"{name}-{version}-py3-none-any.whl"
    with zipfile.ZipFile(target, "w") as archive:
        for path, text in files.items():
            archive.writestr(path, text)
    return target


def tinylib_wheels(folder: Path, versions: list[str], broken: set[str]) -> Path:
    for version in versions:
        build_wheel(folder, "tinylib", version, TINYLIB.format(version=version, broken=sorted(broken)))
    return folder
