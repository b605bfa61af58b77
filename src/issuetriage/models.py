"""Typed, immutable domain objects: the issue we read and the plan we may write."""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator


class Decision(StrEnum):
    """Which step of the decision tree decided the outcome."""

    SKIP_ALREADY_ROUTED = "skip_already_routed"
    CLOSE_QUESTION = "close_question"
    CLOSE_EXPECTED_BEHAVIOR = "close_expected_behavior"
    REQUEST_INFO = "request_info"
    REQUEST_REPRODUCTION = "request_reproduction"
    TRANSFER = "transfer"
    REDIRECT_ONCALL = "redirect_oncall"
    LABEL = "label"
    TRIAGE_REVIEW = "triage_review"
    CLOSE_STALE = "close_stale"  # the reporter never answered the bot's request and reminder
    FIXED_IN_RELEASE = "fixed_in_release"  # scrub: the repro fails on a release, not from the next on


CLOSING_DECISIONS = frozenset({Decision.CLOSE_QUESTION, Decision.CLOSE_EXPECTED_BEHAVIOR,
                               Decision.CLOSE_STALE, Decision.FIXED_IN_RELEASE})


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="ignore")


def _label_name(value: Any) -> str:
    """GitHub sends labels as objects, our data files as strings: accept both."""
    if isinstance(value, dict):
        return str(value.get("name", ""))
    return str(value)


class Comment(_Frozen):
    """One issue comment as GitHub shows it. `by_bot`: written by the account the bot acts as
    (the token's login, the App's bot), as the reader saw it (GitHub's `viewerDidAuthor`); only
    such a comment's markers count as the bot's own."""

    author: str = ""
    body: str = ""
    created_at: datetime | None = None
    author_association: str = "NONE"
    by_bot: bool = False

    @model_validator(mode="before")
    @classmethod
    def _from_github(cls, data: Any) -> Any:
        if isinstance(data, dict):
            data = dict(data)
            user = data.get("user")
            if "author" not in data and isinstance(user, dict):
                data["author"] = user.get("login", "")
            if "created_at" not in data and "created" in data:
                data["created_at"] = data["created"]
            if "by_bot" not in data and "viewerDidAuthor" in data:  # gh issue view --json comments
                data["by_bot"] = data["viewerDidAuthor"] is True
            data["body"] = data.get("body") or ""
        return data


class Issue(_Frozen):
    """One issue; only repo, number, title and body are required."""

    repo: str
    number: int = Field(ge=1, le=2**31 - 1)  # GitHub numbers are GraphQL Int (32-bit); SQLite holds 64
    title: str
    body: str
    author: str = ""
    author_association: str = "NONE"
    state: str = "open"
    labels: tuple[str, ...] = ()
    comments: tuple[Comment, ...] = ()
    created_at: datetime | None = None
    is_pull_request: bool = False
    locked: bool = False

    @model_validator(mode="before")
    @classmethod
    def _from_github(cls, data: Any) -> Any:
        if not isinstance(data, dict):
            return data
        data = dict(data)
        user = data.get("user")
        if "author" not in data and isinstance(user, dict):
            data["author"] = user.get("login", "")
        if "created_at" not in data and "created" in data:
            data["created_at"] = data["created"]
        if "is_pull_request" not in data and "pull_request" in data:
            data["is_pull_request"] = data["pull_request"] is not None
        if "body" in data and data["body"] is None:
            data["body"] = ""
        if "repo" not in data and isinstance(data.get("repository_url"), str):
            data["repo"] = "/".join(data["repository_url"].rstrip("/").split("/")[-2:])
        if isinstance(data.get("comments"), int):
            data["comments"] = ()
        return data

    @field_validator("labels", mode="before")
    @classmethod
    def _names(cls, value: Any) -> Any:
        if isinstance(value, (list, tuple)):
            return tuple(_label_name(v) for v in value)
        return value

    @field_validator("repo")
    @classmethod
    def _owner_slash_name(cls, value: str) -> str:
        if value.count("/") != 1 or not all(value.split("/")):
            raise ValueError(f"repo must be OWNER/NAME, got {value!r}")
        return value

    @property
    def ref(self) -> str:
        """`owner/repo#N`, the way people write it."""
        return f"{self.repo}#{self.number}"

    @property
    def text(self) -> str:
        """Title and body, the text every signal reads."""
        return f"{self.title}\n\n{self.body}"


class TraceStep(_Frozen):
    """One line of "why": which step looked, what it concluded and the reason."""

    step: str
    outcome: str
    reason: str


_VERSION = r"^\d{1,9}(\.\d{1,9}){0,5}((a|b|rc)\d{1,9})?(\.post\d{1,9})?(\.dev\d{1,9})?(\+[a-z0-9]{1,20}(\.[a-z0-9]{1,20}){0,3})?$"


class FixedInRelease(_Frozen):
    """Scrub's evidence that a release fixed an issue: which repro it ran (by digest), the boundary
    bisection found and every probed version's outcome. Only `scrub.close.evidence` makes it,
    from a scrub verdict, and seals it with this process's key (never serialized): the guard closes
    as fixed only when the seal and the issue's current repro still match (`evidence.fixed.refusal`).
    The names are strict (PEP 503 name, PEP 440 version) because they fill a comment template."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    issue: str
    package: str = Field(pattern=r"^[A-Za-z0-9]([A-Za-z0-9._-]{0,98}[A-Za-z0-9])?$")
    version: str = Field(pattern=_VERSION)
    last_affected: str = Field(pattern=_VERSION)
    outcomes: tuple[tuple[str, str], ...] = ()  # (label, outcome) per probed release, oldest first
    repro_sha256: str = Field(pattern=r"^[0-9a-f]{64}$")
    seal: str = Field(default="", exclude=True, repr=False)

    def template_values(self) -> dict[str, str]:
        """What the closing template may say: the package and the release that fixed it."""
        return {"package": self.package, "version": self.version}


class Plan(_Frozen):
    """What the bot would do to one issue: only additions, never removals."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    repo: str
    number: int
    decision: Decision
    labels_added: tuple[str, ...] = ()
    templates: tuple[str, ...] = ()
    close: bool = False
    body_edit: str | None = None
    transfer_repo: str | None = None
    fixed_in_release: FixedInRelease | None = None  # scrub's evidence, only for that decision
    trace: tuple[TraceStep, ...] = ()
    judge: str | None = None  # who judged (`heuristic`, `llm:MODEL`, `heuristic:llm-outage`, ...)

    @property
    def has_effect(self) -> bool:
        """True when applying this plan would change the issue."""
        return bool(
            self.labels_added or self.templates or self.close or self.body_edit is not None
            or self.transfer_repo
        )

    def to_json(self) -> dict[str, Any]:
        """The documented JSON shape (docs/plan-schema.md)."""
        return self.model_dump(mode="json")
