"""A repository's own profile: the profile files under `.github/issuetriage/` at its default
branch, read through the contents API and cached by their git blob ids.

A repo-local profile is hostile input like issue text: it is data and loads through the same
strict validation as any profile, and the guard still filters every plan made under it. On top:
only the profile's own files are read (never `llm.toml`, whose endpoint and cache settings stay the
operator's), each file and the whole are bounded in size, the profile must name the repository
it lives in, and transfers stay within the owner. Its patterns are vetted by the loader like any
profile's: each must compile on RE2 (linear time, `issuetriage.text`) within its size bounds.
"""

from __future__ import annotations

import base64
import re
import tempfile
import threading
from collections import OrderedDict
from pathlib import Path

from issuetriage.errors import ConfigError, GitHubClientError
from issuetriage.github.client import GitHubClient
from issuetriage.policy import FILES, Policy, load_profile_dir

PROFILE_DIR = ".github/issuetriage"
MAX_FILE = 256 * 1024
MAX_TOTAL = 1024 * 1024


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
