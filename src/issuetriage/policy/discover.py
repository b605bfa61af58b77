"""Which profile a command uses when none is named: fail closed, never PyTorch's by default.

In order: `--profile` (or `ISSUETRIAGE_PROFILE`), else the checkout's own `.github/issuetriage/`
(the folder service mode reads from a repository, and `issuetriage init` writes), else the one
shipped profile whose `repo` is the issue's repository. A profile triages only the repository it
names; anything else is a one-line error (exit 2) before any work starts.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from issuetriage.errors import UserError
from issuetriage.policy import PROFILES_DIR, load_profile

if TYPE_CHECKING:
    from issuetriage.policy import Policy

CHECKOUT_PROFILE = Path(".github") / "issuetriage"


def checkout_profile(start: Path | None = None) -> Path | None:
    """The `.github/issuetriage/` folder of the git checkout `start` (default: the working
    folder) is in, looked for from `start` up to the checkout's root; None when there is none."""
    here = (start or Path.cwd()).resolve()
    for folder in (here, *here.parents):
        if (folder / CHECKOUT_PROFILE / "profile.toml").is_file():
            return folder / CHECKOUT_PROFILE
        if (folder / ".git").exists():  # the checkout's root: never a profile from outside it
            return None
    return None


def same_repo(a: str, b: str) -> bool:
    return a.lower() == b.lower()


def check_scope(policy: Policy, repo: str, given: str) -> None:
    """A profile speaks for its own repository only (as a repository's own profile does)."""
    if not same_repo(policy.meta.repo, repo):
        raise UserError(f"{repo}: profile {given!r} is for {policy.meta.repo}, not this repository; "
                        f"name {repo}'s profile with --profile DIR or run `issuetriage init {repo}`")


def profile_for(given: str | None, repo: str | None = None, start: Path | None = None) -> str:
    """The profile (a shipped name or a folder) for issues of `repo` (None: not known yet)."""
    if given:
        if repo:
            check_scope(load_profile(given), repo, given)
        return given
    found = checkout_profile(start)
    if found is not None and (repo is None or same_repo(load_profile(found).meta.repo, repo)):
        return str(found)
    if repo is None:
        raise UserError("no profile: pass --profile NAME|DIR, set ISSUETRIAGE_PROFILE, or run in a checkout "
                        "with .github/issuetriage/ (`issuetriage init OWNER/REPO` writes one)")
    shipped = [p.name for p in sorted(PROFILES_DIR.iterdir())
               if p.is_dir() and same_repo(load_profile(p.name).meta.repo, repo)]
    if len(shipped) == 1:
        return shipped[0]
    raise UserError(f"{repo}: no profile names this repository (none given, none in this checkout's "
                    f"{CHECKOUT_PROFILE}/, no shipped one); run `issuetriage init {repo}` in its checkout "
                    "or pass --profile DIR")
