"""Sealed evidence that an issue is fixed in a release, and the guard's check of it.

Scrub makes the evidence (`scrub/close.py`) from a bisection it ran and seals it here with a key
that lives only in this process, so a plan read back from JSON, a store or an agent never carries
a valid seal. The guard closes as fixed only when `refusal` finds nothing wrong: the seal holds,
the evidence is about this issue, and the repro the issue shows now is the one scrub ran.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import secrets

from issuetriage.evidence.repro import Stop, pick_repro
from issuetriage.models import FixedInRelease, Issue

_KEY = secrets.token_bytes(32)  # this process's; never written anywhere


def digest(code: str) -> str:
    """The repro's fingerprint, as the evidence carries it."""
    return hashlib.sha256(code.encode()).hexdigest()


def sealed(found: FixedInRelease) -> FixedInRelease:
    """`found` with this process's seal."""
    return found.model_copy(update={"seal": _seal(found)})


def refusal(found: FixedInRelease, issue: Issue) -> str | None:
    """Why `found` does not show that `issue`, as it is now, is fixed (None when it does)."""
    if not hmac.compare_digest(found.seal, _seal(found)):
        return "not corroborated: this evidence was not made by scrub in this run"
    if found.issue != issue.ref:
        return f"the evidence is about {found.issue}, not {issue.ref}"
    picked = pick_repro(issue)
    if isinstance(picked, Stop) or digest(picked.code) != found.repro_sha256:
        return "the issue's reproduction is not the one scrub ran (edited since?)"
    return None


def _seal(found: FixedInRelease) -> str:
    body = json.dumps(found.model_dump(mode="json"), sort_keys=True).encode()  # the seal is excluded
    return hmac.new(_KEY, body, hashlib.sha256).hexdigest()
