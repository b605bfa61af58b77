"""Import label catalogs and comment templates in PyTorch's triage-skill JSON format into a
complete profile folder: labels.toml and templates.toml from the import, every other file copied
from a base profile, validated before it appears at its final path.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
import tomllib
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import tomli_w
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from issuetriage.errors import ConfigError, UserError, first_problem
from issuetriage.policy import FILES, LabelSpec, Policy, Template, load_profile, load_profile_dir

# Their template names → ours, where the two differ.
TEMPLATE_ALIASES = {"needs_reproduction": "request_self_contained_reproduction"}
GENERATED = ("labels.toml", "templates.toml")
_LABELS_HEADER = (
    "# Label catalog imported by `issuetriage profile import` from: {sources}.\n"
    "# Labels the base profile refers to but the import lacks are kept from the base profile.\n\n"
)
_TEMPLATES_HEADER = (
    "# Comment templates imported by `issuetriage profile import` from: {sources}.\n"
    "# Templates the import lacks are kept from the base profile.\n\n"
)


class _In(BaseModel):
    model_config = ConfigDict(extra="ignore", frozen=True)


class LabelIn(_In):
    """One label as PyTorch's catalogs, `gh label list --json name,description` and the REST API
    write it (other keys ignored)."""

    name: str = Field(min_length=1)
    description: str | None = ""


class CatalogIn(_In):
    labels: tuple[LabelIn, ...]


class TemplateIn(_In):
    action: str
    use_when: str
    comment: str = Field(min_length=1)


class TemplatesIn(_In):
    templates: dict[str, TemplateIn]


def read_json(path: Path) -> Any:
    """Parse one JSON input file; every failure is a one-line UserError naming it."""
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise UserError(f"{path}: no such file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise UserError(f"{path}: cannot read: {exc}") from None
    except json.JSONDecodeError as exc:
        raise UserError(f"{path}: not valid JSON: {exc.msg} at line {exc.lineno}") from None


def _read_json(path: Path, model: type[BaseModel]) -> Any:
    """Parse and validate one input file against `model`."""
    data = read_json(path)
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        raise UserError(f"{path}: {first_problem(exc).lower()}") from None


def read_labels(paths: Sequence[Path]) -> tuple[LabelIn, ...]:
    """The union of several catalogs in order; a later non-empty description fills an empty one."""
    merged: dict[str, LabelIn] = {}
    for path in paths:
        for label in _read_json(path, CatalogIn).labels:
            known = merged.get(label.name)
            if known is None or (not known.description and label.description):
                merged[label.name] = label
    return tuple(merged.values())


def read_templates(paths: Sequence[Path]) -> dict[str, Template]:
    """Templates from several files, renamed to our names; a later file wins on a clash."""
    found: dict[str, Template] = {}
    for path in paths:
        for name, tpl in _read_json(path, TemplatesIn).templates.items():
            found[TEMPLATE_ALIASES.get(name, name)] = Template(**tpl.model_dump())
    return found


def _strings(value: Any) -> Iterator[str]:
    """Every string and table key inside parsed TOML data."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for key, item in value.items():
            yield key
            yield from _strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)


def referenced_labels(base: Policy) -> frozenset[str]:
    """Base catalog labels that the base's other files (queues, rules, profile...) mention."""
    mentioned = {base.bot.edge_cases, base.bot.fuzzer, base.bot.high_priority}
    for name in FILES:
        if name not in GENERATED:
            mentioned.update(_strings(tomllib.loads((base.root / name).read_text(encoding="utf-8"))))
    return frozenset(mentioned & base.labels.keys())


def merge_catalog(imported: Sequence[LabelIn], base: Policy) -> tuple[LabelSpec, ...]:
    """Imported labels (with base guidance and signals for names the base knows), then the base
    labels the rest of the profile needs that the import lacks."""
    specs: list[LabelSpec] = []
    for label in imported:
        known = base.labels.get(label.name)
        extra = known.model_dump(exclude={"name", "description"}) if known else {}
        specs.append(LabelSpec(name=label.name, description=label.description or "", **extra))
    names = {spec.name for spec in specs}
    needed = referenced_labels(base)
    specs += [spec for spec in base.catalog.label if spec.name in needed and spec.name not in names]
    return tuple(specs)


def catalog_toml(specs: Sequence[LabelSpec], sources: str) -> str:
    """labels.toml text; empty optional fields are left out."""
    rows = [{k: (list(v) if isinstance(v, tuple) else v) for k, v in spec.model_dump().items()
             if v or k in ("name", "description")} for spec in specs]
    return _LABELS_HEADER.format(sources=sources) + tomli_w.dumps({"label": rows})


def templates_toml(templates: dict[str, Template], sources: str) -> str:
    """templates.toml text, multi-line comments kept readable."""
    data = {"templates": {name: tpl.model_dump(exclude_defaults=True) for name, tpl in templates.items()}}
    return _TEMPLATES_HEADER.format(sources=sources) + tomli_w.dumps(data, multiline_strings=True)


def _sources(paths: Sequence[Path]) -> str:
    return ", ".join(p.name for p in paths)


def write_atomically(files: dict[str, str], copies: dict[str, Path], out: Path) -> Policy:
    """Write into a temporary sibling folder, validate it as a profile, then rename it to `out`."""
    if out.exists():
        raise UserError(f"{out}: already exists; choose a new folder")
    if not out.parent.is_dir():
        raise UserError(f"{out.parent}: no such folder")
    tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}.", dir=out.parent))
    try:
        for name, text in files.items():
            (tmp / name).write_text(text, encoding="utf-8")
        for name, source in copies.items():
            shutil.copyfile(source, tmp / name)
        try:
            load_profile_dir(tmp)
        except ConfigError as exc:
            raise UserError(f"the imported profile does not validate: {exc}") from None
        tmp.chmod(0o755)  # mkdtemp makes it private; the result is an ordinary folder
        os.rename(tmp, out)
    except OSError as exc:
        shutil.rmtree(tmp, ignore_errors=True)
        raise UserError(f"{out}: cannot write: {exc}") from None
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return load_profile_dir(out)


def import_profile(labels: Sequence[Path], templates: Sequence[Path], out: Path,
                   base: str | Path = "pytorch") -> Policy:
    """Read every input first, then write the whole profile folder or nothing."""
    if not labels:
        raise UserError("give at least one --labels file")
    base_policy = load_profile(base)
    catalog = merge_catalog(read_labels(labels), base_policy)
    merged_templates = dict(base_policy.templates)
    merged_templates.update(read_templates(templates))
    files = {"labels.toml": catalog_toml(catalog, _sources(labels))}
    if templates:
        files["templates.toml"] = templates_toml(merged_templates, _sources(templates))
    copies = {name: base_policy.root / name for name in FILES if name not in files}
    return write_atomically(files, copies, out)
