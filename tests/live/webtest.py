"""A store with a review queue for the web tests: shadow plans on hostile issue text."""

from __future__ import annotations

from pathlib import Path

from builders import make_issue
from issuetriage.models import Decision, Plan
from issuetriage.store.sqlite import Store

REPO = "pytorch/pytorch"
HOSTILE = '<script>document.title="owned"</script><img src=x onerror=alert(1)>'
TOKEN = "test-csrf-token"


def queue_store(path: Path) -> dict[str, int]:
    """Three open issues with shadow plans; returns their audit ids by name."""
    ids = {}
    with Store(path) as db:
        for n, name, labels in ((1, "approve", ("module: nn",)), (2, "reject", ("module: cuda",)),
                                (3, "edit", ("module: nn",))):
            db.put_issue(make_issue(number=n, title=f"{name} {HOSTILE}", body=HOSTILE))
            plan = Plan(repo=REPO, number=n, decision=Decision.LABEL, labels_added=labels + ("bot-triaged",))
            ids[name] = db.record(plan, judge="heuristic", extra={"shadow": True})
    return ids
