"""What a webhook delivery asks for, decided from its event name and payload alone (no I/O):
triage an issue, re-triage after the reporter's reply, record a human's label change, hand an
installation change on, or nothing. Payloads are hostile: anything malformed is a `BadPayload`.

https://docs.github.com/en/webhooks/webhook-events-and-payloads"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

TRIAGE = "triage"  # a job: triage the issue as it is now
REPLY = "reply"  # a job: the reporter answered; re-triage an issue that waits for information
LABEL = "label"  # recorded for live quality, no job
INSTALLATION = "installation"  # handed to the resolver (installation_changed), no job

TRIAGE_ACTIONS = frozenset({"opened", "reopened", "edited"})
LABEL_ACTIONS = frozenset({"labeled", "unlabeled"})
JOBS = frozenset({TRIAGE, REPLY})
REPO_NAME = re.compile(r"[\w.-]{1,100}/[\w.-]{1,100}")


class BadPayload(ValueError):
    """A payload without the fields its event must carry."""


@dataclass(frozen=True)
class Work:
    """What one delivery asks for; `kind` None means the service does not handle it."""

    event: str
    action: str
    kind: str | None
    repo: str | None = None
    number: int | None = None
    installation: int | None = None
    sender: str = ""
    label: str | None = None
    at: str = ""

    @property
    def job(self) -> str | None:
        return self.kind if self.kind in JOBS else None


def classify(event: str, payload: Any) -> Work:
    """The work `payload` (of event `event`) asks for; raises BadPayload when it is malformed."""
    if not isinstance(payload, dict):
        raise BadPayload("the payload is not a JSON object")
    action = _text(payload.get("action", ""), "action")
    sender: dict[str, Any] = payload["sender"] if isinstance(payload.get("sender"), dict) else {}
    login = _text(sender.get("login", ""), "sender.login")
    installation = _installation(payload)
    if event in {"installation", "installation_repositories"}:
        return Work(event, action, INSTALLATION, installation=installation, sender=login)
    if event not in {"issues", "issue_comment"} or is_bot(sender):
        return Work(event, action, None, sender=login)
    issue = payload.get("issue")
    repo = payload.get("repository")
    if not isinstance(issue, dict) or not isinstance(repo, dict):
        raise BadPayload(f"{event}: no issue or repository object")
    name = _text(repo.get("full_name"), "repository.full_name")
    number = issue.get("number")
    if not _whole(number, 2 ** 31) or not REPO_NAME.fullmatch(name):
        raise BadPayload(f"{event}: no issue number or repository name")
    common = dict(repo=name, number=number, installation=installation, sender=login)
    if event == "issues" and action in TRIAGE_ACTIONS:
        return Work(event, action, TRIAGE, **common)  # type: ignore[arg-type]
    if event == "issues" and action in LABEL_ACTIONS:
        label = payload.get("label")
        if not isinstance(label, dict):
            raise BadPayload(f"issues.{action}: no label object")
        return Work(event, action, LABEL, **common, label=_text(label.get("name"), "label.name"),  # type: ignore[arg-type]
                    at=_text(issue.get("updated_at") or "", "issue.updated_at"))
    if event == "issue_comment" and action == "created" and "pull_request" not in issue:
        author: dict[str, Any] = issue["user"] if isinstance(issue.get("user"), dict) else {}
        if author.get("login") == login and login:
            return Work(event, action, REPLY, **common)  # type: ignore[arg-type]
    return Work(event, action, None, **common)  # type: ignore[arg-type]


def is_bot(sender: dict[str, Any]) -> bool:
    """The App (or any bot) itself: its own changes never start work."""
    login = str(sender.get("login") or "")
    return sender.get("type") == "Bot" or login.endswith("[bot]")


def _installation(payload: dict[str, Any]) -> int | None:
    inst = payload.get("installation")
    if inst is None:
        return None
    if not isinstance(inst, dict) or not _whole(inst.get("id"), 2 ** 63):
        raise BadPayload("installation: no id")
    return int(inst["id"])


def _whole(value: Any, below: int) -> bool:
    """A positive integer below `below` (JSON allows any size; the store does not)."""
    return isinstance(value, int) and not isinstance(value, bool) and 0 < value < below


def _text(value: Any, name: str) -> str:
    if not isinstance(value, str):
        raise BadPayload(f"{name}: expected a string")
    return value
