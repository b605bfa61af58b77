"""A repository's own profile: the profile files under `.github/issuetriage/` at its default
branch, read through the contents API and cached by their git blob ids.

A repo-local profile is hostile input like issue text: it is data and loads through the same
strict validation as any profile, and the guard still filters every plan made under it. On top:
only the profile's own files are read (never `llm.toml`, whose endpoint and cache settings stay the
operator's), each file and the whole are bounded in size, the profile must name the repository
it lives in, transfers stay within the owner, and regular expressions that can backtrack without
bound (nested repetition, back-references) are refused before any issue text meets them.
"""

from __future__ import annotations

import base64
import re
import tempfile
import threading
import tomllib
from collections import OrderedDict
from collections.abc import Iterator
from pathlib import Path

# the parser the re module itself uses (Python 3.11+), so the check sees what matching will run
from re import _constants as sre  # type: ignore[attr-defined]
from re import _parser as sre_parse  # type: ignore[attr-defined]
from typing import Any

from issuetriage.errors import ConfigError, GitHubClientError
from issuetriage.github.client import GitHubClient
from issuetriage.policy import FILES, Policy, load_profile_dir

PROFILE_DIR = ".github/issuetriage"
MAX_FILE = 256 * 1024
MAX_TOTAL = 1024 * 1024
MAX_PATTERN = 500
MAX_PATTERNS = 2000
REPEATS = {sre.MAX_REPEAT, sre.MIN_REPEAT, getattr(sre, "POSSESSIVE_REPEAT", sre.MAX_REPEAT)}


class RepoProfiles:
    """Loaded repo-local profiles by (repository, blob ids): a push that does not touch the
    profile reuses it; a bounded cache, shared by every job in the process. The folder listing
    is a conditional request: unchanged, GitHub answers 304, which spends no rate budget."""

    def __init__(self, size: int = 64) -> None:
        self.size = size
        self.loads = 0
        self._lock = threading.Lock()
        self._cache: OrderedDict[tuple[str, tuple[tuple[str, str], ...]], Policy] = OrderedDict()
        self._listings: OrderedDict[str, tuple[str, dict[str, str]]] = OrderedDict()  # repo → (ETag, blobs)

    def load(self, client: GitHubClient, repo: str) -> Policy:
        """The profile at `repo`'s default branch: one call when cached (a free 304 when the
        folder is unchanged), one per file more when not. ConfigError (one line) when there is
        none or it is unusable."""
        with self._lock:
            known = self._listings.get(repo)
        listed = _listing(client, repo, known[0] if known else None)
        if listed is None:
            assert known is not None
            blobs = known[1]
        else:
            etag, blobs = listed
            with self._lock:
                self._listings[repo] = (etag, blobs)
                while len(self._listings) > self.size:
                    self._listings.popitem(last=False)
        key = (repo, tuple(sorted(blobs.items())))
        with self._lock:
            if key in self._cache:
                self._cache.move_to_end(key)
                return self._cache[key]
        texts = {name: _blob(client, repo, name, sha) for name, sha in blobs.items()}
        policy = load_texts(repo, texts)
        with self._lock:
            self.loads += 1
            self._cache[key] = policy
            while len(self._cache) > self.size:
                self._cache.popitem(last=False)
        return policy


def _listing(client: GitHubClient, repo: str, etag: str | None) -> tuple[str, dict[str, str]] | None:
    """The listing's ETag and the profile files' blob ids, from one folder listing at the default
    branch; None when it is unchanged since `etag` (304).
    https://docs.github.com/en/rest/repos/contents#get-repository-content
    https://docs.github.com/en/rest/using-the-rest-api/best-practices-for-using-the-rest-api#use-conditional-requests-if-appropriate"""
    path = f"/repos/{repo}/contents/{PROFILE_DIR}"
    headers = {"If-None-Match": etag} if etag else {}
    try:
        answer = client.call("GET", path, lambda: client.gh.request("GET", path, headers=headers))
        if answer.status_code == 304:
            return None
        entries = answer.json()
    except GitHubClientError as exc:
        if exc.status == 404:
            raise ConfigError(f"{repo}: no profile: {PROFILE_DIR}/ is not on the default branch") from None
        raise
    if not isinstance(entries, list):
        raise ConfigError(f"{repo}: no profile: {PROFILE_DIR} is not a folder")
    found = {e.get("name"): e for e in entries if isinstance(e, dict) and e.get("name") in FILES}
    total = 0
    for name in FILES:
        entry = found.get(name)
        if entry is None:
            raise ConfigError(f"{repo}: {PROFILE_DIR}/{name}: missing profile file")
        if entry.get("type") != "file":  # a symlink or submodule could point anywhere
            raise ConfigError(f"{repo}: {PROFILE_DIR}/{name}: not a plain file")
        size = int(entry.get("size") or 0)
        total += size
        if size > MAX_FILE or total > MAX_TOTAL:
            raise ConfigError(f"{repo}: {PROFILE_DIR}/{name}: too large (at most {MAX_FILE} bytes a file, "
                              f"{MAX_TOTAL} in all)")
        if not re.fullmatch(r"[0-9a-f]{40}|[0-9a-f]{64}", str(entry.get("sha", ""))):
            raise ConfigError(f"{repo}: {PROFILE_DIR}/{name}: no blob id in GitHub's answer")
    return answer.headers.get("etag", ""), {name: str(found[name]["sha"]) for name in FILES}


def _blob(client: GitHubClient, repo: str, name: str, sha: str) -> str:
    """One file's text by its blob id (immutable, so it cannot change between listing and read).
    https://docs.github.com/en/rest/git/blobs#get-a-blob"""
    path = f"/repos/{repo}/git/blobs/{sha}"
    data = client.call("GET", path, lambda: client.gh.request("GET", path)).json()
    content = data.get("content", "") if isinstance(data, dict) else ""
    try:
        raw = base64.b64decode(content, validate=False)
        if len(raw) > MAX_FILE:
            raise ValueError("too large")
        return raw.decode("utf-8")
    except (ValueError, UnicodeDecodeError):
        raise ConfigError(f"{repo}: {PROFILE_DIR}/{name}: not UTF-8 text of at most {MAX_FILE} bytes") from None


def load_texts(repo: str, texts: dict[str, str]) -> Policy:
    """Validate and load a profile from its files' texts, then vet it for `repo`; messages name
    `repo:.github/issuetriage/FILE`, never a temporary folder."""
    _vet_patterns(repo, texts)
    with tempfile.TemporaryDirectory(prefix="issuetriage-profile-") as tmp:
        root = Path(tmp)
        for name, text in texts.items():
            (root / name).write_text(text, encoding="utf-8")
        try:
            policy = load_profile_dir(root)
        except ConfigError as exc:
            raise ConfigError(str(exc).replace(str(root), f"{repo}: {PROFILE_DIR}")) from None
    # policy.root is now a removed temporary folder: nothing more (no llm.toml) is read from it
    _vet_scope(repo, policy)
    return policy


def _vet_scope(repo: str, policy: Policy) -> None:
    """The profile speaks for its own repository only."""
    if policy.meta.repo.lower() != repo.lower():
        raise ConfigError(f"{repo}: {PROFILE_DIR}/profile.toml: repo is {policy.meta.repo!r}, not this repository")
    owner = repo.split("/")[0].lower()
    for target in sorted(policy.transfer_repos):
        if target.split("/")[0].lower() != owner:
            raise ConfigError(f"{repo}: {PROFILE_DIR}/queues.toml: transfer to {target!r} leaves {owner}")


def _vet_patterns(repo: str, texts: dict[str, str]) -> None:
    count = 0
    for name, text in texts.items():
        try:
            data = tomllib.loads(text)
        except tomllib.TOMLDecodeError:
            continue  # the loader names the problem
        for pattern in _patterns(data):
            count += 1
            why = ("more than 2000 patterns" if count > MAX_PATTERNS else
                   f"longer than {MAX_PATTERN} characters" if len(pattern) > MAX_PATTERN else
                   unbounded_backtracking(pattern))
            if why:
                raise ConfigError(f"{repo}: {PROFILE_DIR}/{name}: pattern {pattern[:60]!r}: {why}")


def _patterns(data: Any, key: str = "") -> Iterator[str]:
    """Every string under a key ending in `patterns`, anywhere in a TOML document."""
    if isinstance(data, dict):
        for k, v in data.items():
            yield from _patterns(v, k)
    elif isinstance(data, list):
        for item in data:
            if isinstance(item, str) and key.endswith("patterns"):
                yield item
            else:
                yield from _patterns(item, key)


def unbounded_backtracking(pattern: str) -> str | None:
    """Why `pattern` can take exponential time on hostile text (a repetition inside an unbounded
    repetition; alternatives, or optional parts, under a repetition that may start alike, cases
    folded; a back-reference), or None. Conservative: alternatives that only share a first
    character (`(?:bar|baz)+`) are refused too. Invalid patterns are the loader's to report."""
    try:
        tree = sre_parse.parse(pattern)
    except (re.error, RecursionError, OverflowError):
        return None
    return _walk(list(tree), outer=1)


def _walk(items: list[Any], outer: int) -> str | None:
    for op, av in items:
        if op in REPEATS:
            low, high, sub = av
            if high > 1 and (outer == sre.MAXREPEAT or (outer > 1 and high == sre.MAXREPEAT)):
                return "nested repetition can backtrack without bound"
            body = list(sub[0][1][-1]) if len(sub) == 1 and sub[0][0] is sre.SUBPATTERN else list(sub)
            if high > 1 and _optional_overlap(body):
                return "optional parts under a repetition may match the same text"
            why = _walk(list(sub), high if high > 1 else outer)
        elif op in (sre.GROUPREF, sre.GROUPREF_EXISTS):
            return "back-references are not allowed"
        elif op is sre.SUBPATTERN:
            why = _walk(list(av[-1]), outer)
        elif op is sre.BRANCH:
            why = ("alternatives under a repetition may match the same text"
                   if outer > 1 and _overlap([list(b) for b in av[1]]) else
                   next((w for branch in av[1] if (w := _walk(list(branch), outer))), None))
        elif op in (sre.ASSERT, sre.ASSERT_NOT):  # a lookaround never backtracks into itself
            why = _walk(list(av[1]), 1)
        elif op is getattr(sre, "ATOMIC_GROUP", None):
            why = _walk(list(av), outer)
        else:
            why = None
        if why:
            return why
    return None


_ZERO_WIDTH = {sre.AT, sre.ASSERT, sre.ASSERT_NOT}


def _overlap(branches: list[list[Any]]) -> bool:
    """Whether two alternatives may start the same way: both may match nothing, or their first
    characters may be the same (a class, a category or any-character may be anything)."""
    if sum(_nullable(b) for b in branches) > 1:
        return True
    firsts = [_first(b) for b in branches]
    seen: set[int] = set()
    for first in firsts:
        if first is None or seen & first:
            return len(branches) > 1
        seen |= first
    return False


def _first(items: list[Any]) -> set[int] | None:
    """The literal characters a sequence may start with; None when it may start with others."""
    out: set[int] = set()
    for op, av in items:
        if op is sre.LITERAL:
            return out | _cases(av)
        if op in _ZERO_WIDTH:
            continue
        if op is sre.SUBPATTERN or op in REPEATS or op is sre.BRANCH:
            subs = ([list(b) for b in av[1]] if op is sre.BRANCH else
                    [list(av[-1])] if op is sre.SUBPATTERN else [list(av[2])])
            for sub in subs:
                first = _first(sub)
                if first is None:
                    return None
                out |= first
            if not _nullable([(op, av)]):
                return out
            continue
        return None
    return out


def _cases(code: int) -> set[int]:
    """A character and its other cases: profile patterns match ignoring case (`re.I`), where
    `ſ` is an `s` and the Kelvin sign a `k`."""
    char = chr(code)
    return {code} | {ord(c) for c in (char.lower(), char.upper(), char.casefold()) if len(c) == 1}


def _optional_overlap(items: list[Any]) -> bool:
    """Whether a repeated sequence has an optional part (`x?`, `x*`) that may start like another
    part of it: `(?:a?a?)+` and `(?:aa?)+` can split one text in exponentially many ways."""
    firsts = [_first([item]) for item in items]
    for i, item in enumerate(items):
        if item[0] in _ZERO_WIDTH or not _nullable([item]):
            continue
        mine = firsts[i]
        if mine is None:
            return True
        for j, other in enumerate(firsts):
            if j != i and items[j][0] not in _ZERO_WIDTH and (other is None or other & mine):
                return True
    return False


def _nullable(items: list[Any]) -> bool:
    """Whether a sequence may match the empty string."""
    for op, av in items:
        if op in _ZERO_WIDTH:
            continue
        if op in REPEATS:
            if av[0] == 0 or _nullable(list(av[2])):
                continue
            return False
        if op is sre.SUBPATTERN:
            if _nullable(list(av[-1])):
                continue
            return False
        if op is sre.BRANCH:
            if any(_nullable(list(b)) for b in av[1]):
                continue
            return False
        return False
    return True
