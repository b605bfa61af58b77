"""The compiled-profile cache (`policy/compiled.py`): a profile that validated is built again
from JSON keyed by its files' bytes; a cache that does not match or cannot be read is ignored."""

from __future__ import annotations

import json
import shutil
import tomllib
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

from issuetriage.errors import ConfigError
from issuetriage.policy import PROFILES_DIR, Policy, compiled, load_profile_dir
from issuetriage.policy import loader as policy_loader

SHIPPED = sorted(p.name for p in PROFILES_DIR.iterdir() if p.is_dir())
PARTS = ("meta", "catalog", "forbidden", "redundancy", "queues", "templates", "rules")


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "cache"
    monkeypatch.setenv(compiled.CACHE_ENV, str(folder))
    return folder


@pytest.fixture
def profile(tmp_path: Path) -> Path:
    dest = tmp_path / "p"
    shutil.copytree(PROFILES_DIR / "pytorch", dest)
    return dest


@pytest.fixture
def parses(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Counts the TOML files parsed: a load from the cache parses none."""
    seen: list[str] = []
    real = tomllib.loads

    def counting(text: str) -> Any:
        seen.append(text[:20])
        return real(text)

    monkeypatch.setattr(tomllib, "loads", counting)
    return seen


def shape(value: Any) -> Any:
    """Every value with its exact type, models field by field: a tuple read back as a list differs."""
    if isinstance(value, BaseModel):
        return (type(value), {name: shape(getattr(value, name)) for name in type(value).model_fields})
    if isinstance(value, (tuple, list)):
        return (type(value), [shape(v) for v in value])
    if isinstance(value, dict):
        return (type(value), {k: shape(v) for k, v in value.items()})
    return (type(value), value)


def shapes(policy: Policy) -> dict[str, Any]:
    return {part: shape(getattr(policy, part)) for part in PARTS}


def only_file(cache: Path) -> Path:
    (path,) = cache.glob("*.json")
    return path


@pytest.mark.parametrize("name", SHIPPED)
def test_a_cached_profile_is_the_validated_profile_without_parsing_toml(name, cache, parses):
    validated = load_profile_dir(PROFILES_DIR / name)
    assert len(parses) == len(policy_loader.FILES) and only_file(cache).exists()
    parses.clear()
    cached = load_profile_dir(PROFILES_DIR / name)
    assert parses == [] and cached is not validated
    assert shapes(cached) == shapes(validated)
    assert cached.root == validated.root and cached.nameable_labels == validated.nameable_labels


def test_an_edited_profile_is_validated_again(profile, cache, parses):
    load_profile_dir(profile)
    labels = profile / "labels.toml"
    labels.write_text(labels.read_text().replace('description = "', 'description = "EDITED ', 1))
    parses.clear()
    edited = load_profile_dir(profile)
    assert edited.catalog.label[0].description.startswith("EDITED ") and parses
    labels.write_text(labels.read_text() + "\n[[label]]\nnmae = 'typo'\n")
    with pytest.raises(ConfigError, match="labels.toml"):
        load_profile_dir(profile)  # the cache of the good bytes is no excuse


def _truncated(data: dict) -> str:
    return json.dumps(data)[:1000]


def _key_of_other_bytes(data: dict) -> str:
    return json.dumps({**data, "key": "0" * 64})


def _part_missing(data: dict) -> str:
    del data["parts"]["rules.toml"]
    return json.dumps(data)


def _field_missing(data: dict) -> str:
    del data["parts"]["forbidden.toml"]["prefixes"]
    return json.dumps(data)


def _unknown_field(data: dict) -> str:
    data["parts"]["forbidden.toml"]["allow_everything"] = True
    return json.dumps(data)


def _wrong_type(data: dict) -> str:
    data["parts"]["forbidden.toml"]["prefixes"] = "ci"  # a string, not a list of strings
    return json.dumps(data)


def _wrong_item_type(data: dict) -> str:
    data["parts"]["labels.toml"]["label"][0]["keywords"] = [1, 2]
    return json.dumps(data)


def _nested_model_not_an_object(data: dict) -> str:
    data["parts"]["profile.toml"]["bot_labels"] = ["bot-triaged"]
    return json.dumps(data)


def _not_json(data: dict) -> str:
    return "\x00\x01 not json"


@pytest.mark.parametrize("spoil", [_truncated, _key_of_other_bytes, _part_missing, _field_missing,
                                   _unknown_field, _wrong_type, _wrong_item_type,
                                   _nested_model_not_an_object, _not_json])
def test_a_cache_file_not_exactly_of_our_shape_is_ignored_and_rewritten(spoil, profile, cache, parses):
    validated = load_profile_dir(profile)
    path = only_file(cache)
    path.write_text(spoil(json.loads(path.read_text())))
    parses.clear()
    again = load_profile_dir(profile)
    assert parses and shapes(again) == shapes(validated)  # validated from the files
    parses.clear()
    assert shapes(load_profile_dir(profile)) == shapes(validated) and parses == []  # and cached anew


def test_a_cache_folder_that_cannot_be_written_is_skipped(profile, tmp_path, monkeypatch, parses):
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    monkeypatch.setenv(compiled.CACHE_ENV, str(blocker / "cache"))  # mkdir fails, even as root
    first = load_profile_dir(profile)
    assert shapes(load_profile_dir(profile)) == shapes(first)
    assert len(parses) == 2 * len(policy_loader.FILES)


def test_an_empty_setting_turns_the_cache_off(profile, monkeypatch, parses, tmp_path):
    monkeypatch.setenv(compiled.CACHE_ENV, "")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    load_profile_dir(profile)
    load_profile_dir(profile)
    assert len(parses) == 2 * len(policy_loader.FILES) and not (tmp_path / "xdg").exists()


def test_the_default_folder_is_under_xdg_cache_home(monkeypatch, tmp_path):
    monkeypatch.delenv(compiled.CACHE_ENV, raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert compiled.cache_dir() == tmp_path / "issuetriage" / "policy"


def test_no_home_directory_means_no_cache(monkeypatch, profile):
    monkeypatch.delenv(compiled.CACHE_ENV, raising=False)
    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    monkeypatch.setattr(Path, "home", classmethod(lambda cls: (_ for _ in ()).throw(RuntimeError("no home"))))
    assert compiled.cache_dir() is None and load_profile_dir(profile).name == "pytorch"


def test_an_invalid_profile_is_never_cached(profile, cache):
    (profile / "forbidden.toml").write_text("prefixes = 3\n")
    for _ in range(2):
        with pytest.raises(ConfigError, match="forbidden.toml"):
            load_profile_dir(profile)
    assert not list(cache.glob("*.json"))


def test_a_change_to_the_validating_code_makes_the_cache_stale(profile, cache, parses, tmp_path, monkeypatch):
    code = tmp_path / "loader.py"
    code.write_text("rules, version 1")
    monkeypatch.setattr(compiled, "_CODE", (code,))
    load_profile_dir(profile)
    code.write_text("rules, version 2")
    parses.clear()
    load_profile_dir(profile)
    assert parses and len(list(cache.glob("*.json"))) == 2


def test_a_profile_folder_this_user_may_not_write_is_never_cached(profile, cache, parses, monkeypatch):
    """A planted cache file could otherwise change a profile its reader cannot edit."""
    writable = compiled.os.access
    monkeypatch.setattr(compiled.os, "access", lambda path, mode: mode != compiled.os.W_OK and writable(path, mode))
    load_profile_dir(profile)
    load_profile_dir(profile)
    assert len(parses) == 2 * len(policy_loader.FILES) and not cache.exists()


def test_the_cache_keeps_only_the_newest_files(tmp_path, cache, monkeypatch):
    monkeypatch.setattr(compiled, "KEEP", 2)
    for n in range(3):
        dest = tmp_path / f"p{n}"
        shutil.copytree(PROFILES_DIR / "pytorch", dest)
        (dest / "profile.toml").write_text((dest / "profile.toml").read_text() + f"\n# copy {n}\n")
        load_profile_dir(dest)
    assert len(list(cache.glob("*.json"))) == 2 and not list(cache.glob("*.tmp"))
