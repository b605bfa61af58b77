"""Links to downloadable files: finding them, and removing them from an issue body."""

from __future__ import annotations

from urllib.parse import urlsplit

from issuetriage.evidence.matcher import matchers
from issuetriage.policy import Policy

REMOVAL_NOTICE = "[link removed by the triage bot: downloadable file]"


def is_download_link(url: str, policy: Policy) -> bool:
    """True when following `url` means downloading a file (archive, weights, pickle, shared drive)."""
    parts = urlsplit(url)
    host = (parts.hostname or "").lower()
    path = parts.path.lower()
    rules = policy.rules
    if any(host == h or host.endswith("." + h) for h in rules.download_hosts):
        return True
    if any(path.endswith(ext) for ext in rules.download_extensions):
        return True
    return any(rx.search(url) for rx in matchers(policy).hub)


def download_links(links: tuple[str, ...], policy: Policy) -> tuple[str, ...]:
    """The subset of `links` that point at downloadable files."""
    return tuple(url for url in links if is_download_link(url, policy))


def redact(body: str, links: tuple[str, ...]) -> str:
    """The body with each of `links` replaced by a removal notice (longest first)."""
    for url in sorted(links, key=len, reverse=True):
        body = body.replace(url, REMOVAL_NOTICE)
    return body
