"""Corrections as training signal: every issue humans acted on after a plan becomes a labelled
record whose labels are the ones humans stand by, so `train` sees a removed bot label as a
negative and a label humans added as a positive."""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path

from issuetriage.errors import UserError
from issuetriage.live.outcomes import gold, outcomes
from issuetriage.policy import Policy
from issuetriage.store.sqlite import Store


def records(store: Store, policy: Policy) -> list[dict[str, object]]:
    """One corpus record per corrected or confirmed issue (the format `train --corpus` reads)."""
    out = []
    rejected = {r["number"] for r in store.db.execute(
        "SELECT audit.number FROM reviews JOIN audit ON audit.id = reviews.audit_id WHERE verdict='rejected'")}
    for o in outcomes(store, policy):
        if not o.humans_acted and o.issue.number not in rejected:
            continue
        # gold: final content labels, so a removed or rejected bot label is absent (a negative)
        labels = gold(o, policy)
        issue = o.issue
        out.append({"repo": issue.repo, "number": issue.number, "title": issue.title, "body": issue.body,
                    "author": issue.author, "state": issue.state, "labels": sorted(labels),
                    "created": issue.created_at.isoformat() if issue.created_at else None})
    return out


def write_corpus(store: Store, policy: Policy, out: Path) -> int:
    """Write the records as JSONL, whole or not at all."""
    found = records(store, policy)
    try:
        fd, tmp = tempfile.mkstemp(dir=out.parent if str(out.parent) else ".", prefix=f".{out.name}.")
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.writelines(json.dumps(r) + "\n" for r in found)
        os.chmod(tmp, 0o644)
        os.replace(tmp, out)
    except OSError as exc:
        raise UserError(f"{out}: cannot write ({exc.strerror or exc})") from None
    return len(found)
