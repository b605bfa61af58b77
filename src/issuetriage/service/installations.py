"""Installation changes (the App installed, removed, repositories added or removed): the one
place the App mode learns about them. Token mode serves one repository and has nothing to learn."""

from __future__ import annotations

import logging
from typing import Any

log = logging.getLogger("issuetriage.service")


def installation_changed(event: str, payload: dict[str, Any]) -> None:
    """Called by the receiver after the delivery is recorded, before it answers 202."""
    repos = [r.get("full_name") for key in ("repositories", "repositories_added", "repositories_removed")
             for r in payload.get(key) or [] if isinstance(r, dict)]
    log.info("installation change", extra={"event": event, "action": payload.get("action"),
                                           "repositories": repos})
