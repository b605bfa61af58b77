"""`issuetriage init OWNER/REPO`: from a repository's labels and labelled history to shadow mode.

Reads the repository's labels, makes a profile from them (shadow mode on), syncs the issues into
the store, builds the history folder from the store, and scores the offline judge on that history
out of fold. Resumable: a profile already in the checkout for the repository is kept, the sync
goes on from its cursor, the history folder is refreshed in place. Every step reads or writes
through the usual seams (the GitHub client and its rate budget, the store, the history builder,
the evaluator); bad input is one line before anything is written: no labels, an issue list the
token may not read, no issue carrying one of the labels.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from itertools import count
from pathlib import Path
from typing import Any

from issuetriage.errors import UserError
from issuetriage.github import reads
from issuetriage.github.client import GitHubClient
from issuetriage.github.repo_profile import load_texts
from issuetriage.github.sync import SyncReport, sync
from issuetriage.policy import Policy, load_profile_dir
from issuetriage.policy.discover import CHECKOUT_PROFILE
from issuetriage.policy.importer import LabelIn
from issuetriage.policy.init import profile_files, write_with_parents
from issuetriage.store.corpus import temporary_corpus
from issuetriage.store.sqlite import Store

Steps = Callable[[str, int, int | None], None]  # (step, done, total: None when not known)


@dataclass
class Onboarding:
    """What `init` did and found."""

    repo: str
    profile: Path
    profile_written: bool
    labels: int
    synced: SyncReport | None = None
    labelled: int = 0
    history: dict[str, Any] = field(default_factory=dict)
    evaluation: dict[str, Any] = field(default_factory=dict)


def new_profile(client: GitHubClient, repo: str) -> dict[str, str]:
    """The profile files for `repo` from its labels, shadow mode on; none is a one-line error.
    https://docs.github.com/en/rest/issues/labels#list-labels-for-a-repository"""
    labels = reads.repo_labels(client, repo)
    if not labels:
        raise UserError(f"{repo} has no labels: create the labels you triage with first "
                        "(or write a profile by hand: docs/profiles.md)")
    found = [LabelIn(name=label.name, description=label.description) for label in labels]
    return profile_files(repo, found, repo.split("/")[1], repo.split("/")[1], shadow=True)


def check_readable(client: GitHubClient, repo: str) -> None:
    """One page of the issue list before anything is written: a token that may not read issues
    fails here, in one line, with no store left behind."""
    reads.issues_page(client, repo, None, 1, None)


def labelled_count(store: Store, repo: str, policy: Policy) -> int:
    """Issues of `repo` in the store that carry one of the profile's content labels."""
    from issuetriage.history.sources import from_store  # lazy: the history stack loads only here

    try:
        return len(from_store(store, policy).past)
    except UserError:
        return 0


def onboard(client: GitHubClient, repo: str, root: Path, store_path: str, history_out: Path,
            progress: Steps) -> tuple[Onboarding, Policy]:
    """Profile, sync and history for `repo` in the checkout at `root`; returns what was done and
    the profile (scored by the caller's evaluation)."""
    out = root / CHECKOUT_PROFILE
    files = None if (out / "profile.toml").is_file() else new_profile(client, repo)
    policy = load_profile_dir(out) if files is None else load_texts(repo, files)
    if files is None and policy.meta.repo.lower() != repo.lower():
        raise UserError(f"{out}: the profile there is for {policy.meta.repo}, not {repo}")
    check_readable(client, repo)
    with Store(store_path) as db:
        seen = count(1)
        synced = sync(client, db, repo, on_issue=lambda n: progress("syncing issues", next(seen), None))
        labelled = labelled_count(db, repo, policy)
        if not labelled:
            raise UserError(f"{repo}: none of its {synced.issues} synced issue(s) carries one of its "
                            f"{len(policy.labels)} labels; label some issues first (nothing else was written "
                            f"but the store {db.path})")
        if files is not None:
            policy = write_with_parents(files, out)
        history = build_history(db, policy, history_out, progress)
    return Onboarding(repo, out, files is not None, len(policy.labels), synced, labelled, history), policy


def build_history(db: Store, policy: Policy, out: Path, progress: Steps) -> dict[str, Any]:
    """The history folder from the store (refreshed in place when it is there), remembered in the
    store so the judges of `serve`, `run` and `triage` find it."""
    from issuetriage.history.build import build  # lazy: the history stack loads only here
    from issuetriage.history.sources import from_store  # lazy: the history stack loads only here
    from issuetriage.judges.factory import NEIGHBOURS, get_judge  # lazy: numpy and sklearn
    from issuetriage.store.fts import remember_folder  # lazy: the history stack loads only here

    update = (out / "manifest.json").is_file()
    if not update:
        out.parent.mkdir(parents=True, exist_ok=True)
    base = get_judge("heuristic", None, profile=policy, env={})
    manifest = build(from_store(db, policy), policy, out, base, NEIGHBOURS, update=update, progress=progress)
    remember_folder(db, policy.meta.repo, out, manifest)
    return manifest


def evaluate_history(store_path: str, policy: Policy, folds: int, neighbours: int) -> dict[str, Any]:
    """The offline judge (stacked with the history when `neighbours`) scored out of fold on the
    store's labelled issues."""
    from issuetriage.evaluate.run import EvalOptions, evaluate  # lazy: the evaluation stack
    from issuetriage.judges.learned.train import TrainConfig  # lazy: numpy and sklearn

    with Store(store_path, create=False) as db, temporary_corpus(db, policy.meta.repo) as corpus:
        return evaluate(corpus, str(policy.root), "heuristic", None, folds, 0, False, TrainConfig(),
                        EvalOptions(neighbours if folds > 1 else 0, None, "catalog", None))
