"""The compiled-profile cache: a profile that validated, kept as JSON, keyed by its files' bytes.

Claude Code runs `issuetriage hook` on every matching tool call, and each call loads the same
profile: parsing ~120 KB of TOML and building the policy models was most of what a label check
cost. Once a profile's files have validated (and passed the cross-file checks), its models are
written here as JSON (never pickle) under the SHA-256 of the files' names and bytes and of the
code that validates them. A later load of the same bytes builds the models from that JSON field
by field, without validating again.

Fail closed: a cache file that is missing, unreadable, written for other bytes or other code, or
not exactly the shape of the models is ignored, and the profile is validated from its files (and
the cache rewritten); a cache that cannot be written is skipped. And the cache serves only a
profile folder this user may write: whoever could plant a cache file could then edit the profile
just as well, so the cache is trusted no more than the profile. A read-only profile (a system
install read by another user) is validated from its files every time.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
import types
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Union, get_args, get_origin

from pydantic import BaseModel

CACHE_ENV = "ISSUETRIAGE_POLICY_CACHE_DIR"  # a folder; empty turns the cache off
KEEP = 64  # cache files kept; the oldest go first
_HERE = Path(__file__).resolve().parent
# The code whose rules decide what validates: a change to it makes every cached profile stale.
_CODE = (_HERE / "loader.py", _HERE / "compiled.py", _HERE.parent / "text.py")


def cache_dir(env: Mapping[str, str] | None = None) -> Path | None:
    """$ISSUETRIAGE_POLICY_CACHE_DIR, else $XDG_CACHE_HOME/issuetriage/policy; None when off."""
    env = os.environ if env is None else env
    if CACHE_ENV in env:
        return Path(env[CACHE_ENV]) if env[CACHE_ENV] else None
    try:
        base = Path(env.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    except (RuntimeError, KeyError):  # no home directory to be found: no cache
        return None
    return base / "issuetriage" / "policy"


def key(root: Path, files: Mapping[str, object]) -> str | None:
    """The cache key for the profile at `root` (its files: name → bytes), or None when no cache
    may serve it: a file could not be read, or this user may not write the folder."""
    if not os.access(root, os.W_OK):
        return None
    sha = hashlib.sha256(b"issuetriage-policy-1\0")
    try:
        code = [(path.name, path.read_bytes()) for path in _CODE]
    except OSError:  # installed without sources: no cache
        return None
    for name, raw in [*code, *sorted(files.items())]:
        if not isinstance(raw, bytes):
            return None
        sha.update(f"{name}\0{len(raw)}\0".encode())
        sha.update(raw)
    return sha.hexdigest()


def load(cache_key: str, models: Mapping[str, type[BaseModel]]) -> dict[str, BaseModel] | None:
    """The profile's models from the cache, or None when there is no usable cache file."""
    folder = cache_dir()
    if folder is None:
        return None
    try:
        data = json.loads((folder / f"{cache_key}.json").read_bytes())
        if data["key"] != cache_key or set(data["parts"]) != set(models):
            return None
        return {name: _build(model, data["parts"][name]) for name, model in models.items()}
    except Exception:  # noqa: BLE001 - missing, unreadable or not our shape: validate the files instead
        return None


def store(cache_key: str, parts: Mapping[str, BaseModel]) -> None:
    """Keep a validated profile's models; a folder that cannot be written is skipped."""
    folder = cache_dir()
    if folder is None:
        return
    payload = json.dumps({"key": cache_key, "parts": {n: p.model_dump(mode="json") for n, p in parts.items()}})
    tmp: str | None = None
    try:
        folder.mkdir(parents=True, exist_ok=True, mode=0o700)
        with tempfile.NamedTemporaryFile("w", encoding="utf-8", dir=folder, suffix=".tmp", delete=False) as out:
            tmp = out.name
            out.write(payload)
        os.replace(tmp, folder / f"{cache_key}.json")  # readers see the whole file or none
        tmp = None
        kept = sorted(folder.glob("*.json"), key=lambda p: p.stat().st_mtime, reverse=True)
        for old in kept[KEEP:]:
            old.unlink(missing_ok=True)
    except OSError:
        if tmp is not None:
            Path(tmp).unlink(missing_ok=True)


_LEAVES = (str, int, float, bool)


def _build(annotation: Any, value: Any) -> Any:
    """`value` read from JSON, as a field annotated `annotation` holds it: models constructed
    field by field (every field present, no other key), lists as tuples; anything else raises."""
    if annotation in _LEAVES and type(value) is annotation:
        return value
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        fields = annotation.model_fields
        if not isinstance(value, dict) or value.keys() != fields.keys():
            raise ValueError(f"{annotation.__name__}: fields differ")
        return annotation.model_construct(**{n: _build(f.annotation, value[n]) for n, f in fields.items()})
    origin, args = get_origin(annotation), get_args(annotation)
    if origin is tuple and len(args) == 2 and args[1] is Ellipsis and isinstance(value, list):
        if args[0] in _LEAVES and all(type(item) is args[0] for item in value):
            return tuple(value)
        return tuple(_build(args[0], item) for item in value)
    if origin is dict and isinstance(value, dict):
        return {_build(args[0], k): _build(args[1], v) for k, v in value.items()}
    if origin in (Union, types.UnionType) and type(None) in args:
        (inner,) = [a for a in args if a is not type(None)]
        return None if value is None else _build(inner, value)
    raise ValueError(f"{annotation!r}: unexpected {type(value).__name__}")
