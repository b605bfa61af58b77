"""`issuetriage labels diff|sync`: the profile's label catalog against the repository's labels.

Missing labels are created, renamed ones (same name up to case and spacing) renamed, drifted
descriptions updated. Nothing is ever deleted: extra labels are only reported.
"""

from __future__ import annotations

from dataclasses import dataclass

from issuetriage.github import writes
from issuetriage.github.client import GitHubClient, RepoLabel
from issuetriage.policy import Policy

DEFAULT_COLOR = "ededed"
MAX_DESCRIPTION = 100  # GitHub's limit for label descriptions


@dataclass(frozen=True)
class LabelDiff:
    missing: tuple[str, ...]
    extra: tuple[str, ...]
    renamed: tuple[tuple[str, str], ...]  # (repo's name, catalog's name)
    drift: tuple[tuple[str, str, str], ...]  # (name, repo's description, catalog's description)

    @property
    def clean(self) -> bool:
        return not (self.missing or self.renamed or self.drift)


def catalog(policy: Policy) -> dict[str, str]:
    """Every label the bot may use, with the description the profile gives it."""
    wanted = {name: spec.description[:MAX_DESCRIPTION] for name, spec in policy.labels.items()}
    for name in sorted(policy.bot_label_names):
        wanted.setdefault(name, "")
    return wanted


def _key(name: str) -> str:
    return " ".join(name.lower().replace(":", ": ").split())


def diff_labels(policy: Policy, repo_labels: tuple[RepoLabel, ...]) -> LabelDiff:
    """Compare the catalog with what the repository has (pure)."""
    wanted = catalog(policy)
    have = {label.name: label for label in repo_labels}
    absent = [name for name in wanted if name not in have]
    spare = {_key(name): name for name in have if name not in wanted}
    renamed = tuple((spare[_key(name)], name) for name in absent if _key(name) in spare)
    renamed_new = {new for _, new in renamed}
    renamed_old = {old for old, _ in renamed}
    drift = tuple((name, have[name].description, wanted[name]) for name in wanted
                  if name in have and wanted[name] and have[name].description != wanted[name])
    return LabelDiff(
        missing=tuple(sorted(n for n in absent if n not in renamed_new)),
        extra=tuple(sorted(n for n in have if n not in wanted and n not in renamed_old)),
        renamed=renamed, drift=drift)


def sync_labels(client: GitHubClient, repo: str, policy: Policy, found: LabelDiff) -> int:
    """Create, rename and update (never delete); returns the number of writes."""
    wanted = catalog(policy)
    writes_done = 0
    for name in found.missing:
        writes.create_label(client, repo, name, DEFAULT_COLOR, wanted[name])
        writes_done += 1
    for old, new in found.renamed:
        fields = {"new_name": new, **({"description": wanted[new]} if wanted[new] else {})}
        writes.update_label(client, repo, old, **fields)
        writes_done += 1
    for name, _, description in found.drift:
        writes.update_label(client, repo, name, description=description)
        writes_done += 1
    return writes_done
