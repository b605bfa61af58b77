"""Environments with the package versions a repro should run against, made on demand with uv.

`--with 'pkg==X'` adds requirements to every environment; `--versions pkg=A,B,C` or
`--versions 'pkg>=A,<B'` (resolved from the index: released, not yanked, in version order) gives
one environment per version, so bisection can probe only the ones it needs. Environments are
cached under one folder keyed by base interpreter, requirements and index, reused across runs,
and the least recently used are removed beyond `max_envs`. uv never downloads a Python here:
every environment is made from the base interpreter.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path

from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.utils import (
    InvalidSdistFilename,
    InvalidWheelFilename,
    canonicalize_name,
    parse_sdist_filename,
    parse_wheel_filename,
)
from packaging.version import InvalidVersion, Version

from issuetriage.errors import UserError
from issuetriage.scrub.model import Interpreter

PYPI = "https://pypi.org/simple"
READY = ".issuetriage-ready"
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")


def default_cache() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "issuetriage" / "scrub-envs"


def uv_binary() -> str:
    """The uv of the `uv` wheel, else one on PATH."""
    try:
        from uv import find_uv_bin

        return find_uv_bin()
    except (ImportError, FileNotFoundError):
        found = shutil.which("uv")
        if found is None:
            raise UserError("provisioning versions needs uv: pip install 'issuetriage[versions]'") from None
        return found


@dataclass(frozen=True)
class Provisioner:
    """Where environments live and which index they install from."""

    base_python: Path = Path(sys.executable)
    cache: Path = default_cache()
    index_url: str | None = None
    find_links: tuple[str, ...] = ()
    no_index: bool = False
    max_envs: int = 16
    timeout_s: float = 900.0

    def _index_args(self) -> list[str]:
        args = ["--index-url", self.index_url] if self.index_url else []
        for link in self.find_links:
            args += ["--find-links", link]
        return args + (["--no-index"] if self.no_index else [])

    def ensure(self, interp: Interpreter) -> Interpreter:
        """The interpreter of a (cached) environment holding `interp.requirements`."""
        if not interp.requirements:
            return interp
        key = hashlib.sha256(json.dumps([os.path.realpath(self.base_python), sorted(interp.requirements),
                                         self._index_args()]).encode()).hexdigest()[:16]
        folder = self.cache / f"{_slug(interp.label)}-{key}"
        python = folder / "bin" / "python"
        self.cache.mkdir(parents=True, exist_ok=True)
        with _locked(self.cache / f"{folder.name}.lock"):
            if not (folder / READY).exists():
                shutil.rmtree(folder, ignore_errors=True)
                self._uv(["venv", "--quiet", "--python", str(self.base_python), str(folder)], interp)
                self._uv(["pip", "install", "--quiet", "--python", str(python), *interp.requirements,
                          *self._index_args()], interp)
            (folder / READY).write_text(" ".join(interp.requirements) + "\n")  # also the LRU stamp
        self._evict(keep=folder)
        return replace(interp, python=python, requirements=())

    def _uv(self, args: list[str], interp: Interpreter) -> None:
        env = {**os.environ, "UV_PYTHON_DOWNLOADS": "never", "UV_NO_PROGRESS": "1"}
        try:
            done = subprocess.run([uv_binary(), *args], capture_output=True, text=True, env=env,
                                  timeout=self.timeout_s, stdin=subprocess.DEVNULL)
        except subprocess.TimeoutExpired:
            raise UserError(f"installing {' '.join(interp.requirements)} took over {self.timeout_s:.0f} s") from None
        if done.returncode != 0:
            raise UserError(f"cannot install {' '.join(interp.requirements)}: {_uv_error(done.stderr)}")

    def _evict(self, keep: Path) -> None:
        """Remove the least recently used environments beyond `max_envs` (never one in use)."""
        ready = sorted((p for p in self.cache.glob(f"*/{READY}") if p.parent != keep),
                       key=lambda p: p.stat().st_mtime, reverse=True)
        for stamp in ready[max(0, self.max_envs - 1):]:
            lock = self.cache / f"{stamp.parent.name}.lock"
            with open(lock, "a") as handle:
                try:
                    fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
                except OSError:
                    continue
                shutil.rmtree(stamp.parent, ignore_errors=True)

    def versions(self, name: str, spec: str = "") -> list[str]:
        """Released, unyanked versions of `name` in the index matching `spec`, oldest first."""
        try:
            wanted = SpecifierSet(spec)
        except InvalidSpecifier:
            raise UserError(f"--versions {name}{spec}: not a version range") from None
        found = {v for v in self._listed(canonicalize_name(name)) if not v.is_prerelease}
        chosen = sorted(wanted.filter(found))
        if not chosen:
            where = self.index_url or ", ".join(self.find_links) or PYPI
            raise UserError(f"no released version of {name} matching {spec or 'any'!r} in {where}")
        return [str(v) for v in chosen]

    def _listed(self, name: str) -> set[Version]:
        files: list[str] = []
        for link in self.find_links:
            folder = Path(link.removeprefix("file://"))
            if folder.is_dir():
                files += [p.name for p in folder.iterdir()]
        if not self.no_index:
            files += _index_files(self.index_url or PYPI, name)
        return {v for f in files if (v := _file_version(f, name)) is not None}


def _index_files(index: str, name: str) -> list[str]:
    """Unyanked file names of a project in a PEP 503/691 simple index."""
    url = f"{index.rstrip('/')}/{name}/"
    request = urllib.request.Request(url, headers={"Accept": "application/vnd.pypi.simple.v1+json, text/html"})
    try:
        if url.startswith("file://"):
            url += "index.html"
            request = urllib.request.Request(url)
        with urllib.request.urlopen(request, timeout=60) as answer:  # noqa: S310 (http(s) or file only)
            body = answer.read().decode("utf-8", "replace")
            kind = answer.headers.get("Content-Type", "")
    except urllib.error.HTTPError as exc:
        if exc.code == 404:
            raise UserError(f"package {name} is not in the index {index}") from None
        raise UserError(f"index {index} answered {exc.code} for {name}") from None
    except (urllib.error.URLError, OSError) as exc:
        raise UserError(f"cannot reach the index {index}: {getattr(exc, 'reason', exc)}") from None
    if "json" in kind:
        return [f["filename"] for f in json.loads(body).get("files", []) if not f.get("yanked")]
    return [m.group(2) for m in re.finditer(r'<a\b([^>]*)>([^<]+)</a>', body)
            if "data-yanked" not in m.group(1)]


def _file_version(filename: str, name: str) -> Version | None:
    try:
        if filename.endswith(".whl"):
            project, version, _, _ = parse_wheel_filename(filename)
        else:
            project, version = parse_sdist_filename(filename)
    except (InvalidWheelFilename, InvalidSdistFilename, InvalidVersion):
        return None
    return version if project == name else None


def _uv_error(stderr: str) -> str:
    """uv's reason in one line: its `error:` / `Because ...` line, else its last line."""
    lines = [line.strip() for line in stderr.splitlines() if line.strip()]
    for line in lines:  # uv's explanation: `cause: Because ...` (no TTY) or `╰─▶ Because ...`
        reason = line.removeprefix("cause:").lstrip("╰─▶ ").strip()
        if reason.startswith("Because"):
            return reason
    hits = [line for line in lines if line.startswith(("error:", "Caused by:"))]
    return (hits[-1] if hits else (lines[-1] if lines else "uv failed")).removeprefix("error: ")


def _slug(label: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "_", label)[:60]


@contextmanager
def _locked(path: Path) -> Iterator[None]:
    with open(path, "a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def version_interpreters(spec: str, extra: tuple[str, ...], provisioner: Provisioner) -> list[Interpreter]:
    """`pkg=A,B,C` or `pkg>=A,<B` → one not-yet-made interpreter per version, oldest first."""
    name, sep, listed = spec.partition("=")
    if sep and listed[:1] not in "=<>!~" and _NAME.match(name):
        versions = [v.strip() for v in listed.split(",") if v.strip()]
        try:
            versions = [str(v) for v in sorted(Version(v) for v in versions)]
        except InvalidVersion as exc:
            raise UserError(f"--versions {spec}: {exc}") from None
    else:
        match = re.match(r"^([A-Za-z0-9][A-Za-z0-9._-]*)\s*(.*)$", spec.strip())
        if not match or not match.group(2):
            raise UserError(f"--versions {spec!r}: give pkg=A,B,C or a range like 'pkg>=A,<B'")
        name = match.group(1)
        versions = provisioner.versions(name, match.group(2))
    if not versions:
        raise UserError(f"--versions {spec!r}: no versions given")
    return [Interpreter(f"{name}-{v}", provisioner.base_python, requirements=(f"{name}=={v}", *extra))
            for v in versions]

