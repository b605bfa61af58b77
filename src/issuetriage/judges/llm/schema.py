"""The LLM's answer: a typed model, the JSON schema generated from it, and its translation into a
Judgment. The model only ever fills this form; the decision tree and the guard decide the rest."""

from __future__ import annotations

import json
from collections.abc import Collection
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from issuetriage.errors import LLMError
from issuetriage.judges.base import Judgment, Kind, LabelScore, MissingRepro
from issuetriage.policy import Policy

MAX_LABELS = 8
RELEASE_RISK = "release_risk"


class SchemaViolation(LLMError):
    """The model answered, but not with a valid form: retried once, then sent to review."""


class LabelChoice(BaseModel):
    """One label the model proposes, with its confidence and a one-line reason."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str = Field(description="Exact label name from CANDIDATE LABELS.")
    confidence: float = Field(ge=0.0, le=1.0, description="0-1: how sure you are it applies.")
    reason: str = Field(max_length=240, description="One line: why this label applies.")


class Answer(BaseModel):
    """Everything the model may say about one issue. Every field is required (strict schemas)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    kind: Kind = Field(description="What the issue is.")
    kind_confidence: float = Field(ge=0.0, le=1.0, description="0-1: confidence in `kind`.")
    labels: list[LabelChoice] = Field(max_length=MAX_LABELS,
                                      description="Labels to add, best first; may be empty.")
    templates: list[str] = Field(max_length=3, description="Template names to post, if any.")
    transfer_repo: str | None = Field(description="Sibling repo to transfer to, or null.")
    missing_repro: MissingRepro | None = Field(
        description="Why the issue cannot be reproduced from its text, or null.")
    release_risk: bool = Field(description="True if it may affect the latest release.")
    high_priority: bool = Field(description="True if a maintainer should look soon.")
    reasoning: str = Field(min_length=20, max_length=1500,
                           description="2-6 sentences: what the issue is about and why.")


def _inline(node: Any, defs: dict[str, Any]) -> Any:
    """Replace `$ref`s with their definitions (some providers reject `$defs`), keeping the field's
    own description and dropping titles and the docstrings of nested types."""
    if isinstance(node, dict):
        if "$ref" in node:
            target = {k: v for k, v in defs[node["$ref"].rsplit("/", 1)[-1]].items()
                      if k not in {"description", "title"}}
            return {**_inline(target, defs),
                    **{k: _inline(v, defs) for k, v in node.items() if k != "$ref"}}
        return {k: _inline(v, defs) for k, v in node.items() if k not in {"$defs", "title"}}
    if isinstance(node, list):
        return [_inline(v, defs) for v in node]
    return node


def answer_schema(labels: Collection[str] | None, templates: Collection[str],
                  transfer_repos: Collection[str]) -> dict[str, Any]:
    """The JSON schema of `Answer`, with template and repo names pinned to this issue's allowed
    values, in the strict form OpenAI and Anthropic tool schemas both accept. Label names are
    pinned too when `labels` is given; with None (the catalog prompt) the prompt lists them and
    code checks them, so the schema stays small."""
    raw = Answer.model_json_schema()
    schema = _inline(raw, raw.get("$defs", {}))
    props = schema["properties"]
    props["kind"].setdefault("description", "What the issue is (see RULES).")
    name = props["labels"]["items"]["properties"]["name"]
    if labels is None:
        name.update(description="Exact label name from LABEL CATALOG.", maxLength=100)
    else:
        name["enum"] = sorted(labels)
    props["templates"]["items"]["enum"] = sorted(templates)
    props["transfer_repo"] = {"anyOf": [{"type": "string", "enum": sorted(transfer_repos)},
                                        {"type": "null"}],
                              "description": props["transfer_repo"].get("description", "")}
    schema.pop("description", None)
    schema["required"] = list(props)
    schema["additionalProperties"] = False
    return schema


def parse_answer(payload: Any, labels: Collection[str] | None, templates: Collection[str],
                 transfer_repos: Collection[str]) -> Answer:
    """Validate a provider's payload (dict or JSON text) against the schema; SchemaViolation if
    not. With `labels` None, label names are left to the guard (which rejects and reports
    names outside the catalog)."""
    if isinstance(payload, str):
        try:
            payload = json.loads(payload)
        except json.JSONDecodeError as exc:
            raise SchemaViolation(f"answer is not JSON: {exc.msg}") from None
    try:
        answer = Answer.model_validate(payload)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "(top level)"
        raise SchemaViolation(f"answer field {where}: {first['msg']}") from None
    unknown = [c.name for c in answer.labels if labels is not None and c.name not in labels]
    unknown += [t for t in answer.templates if t not in templates]
    if answer.transfer_repo is not None and answer.transfer_repo not in transfer_repos:
        unknown.append(answer.transfer_repo)
    if unknown:
        raise SchemaViolation(f"answer names values outside the schema: {unknown[:5]}")
    return answer


def to_judgment(answer: Answer, policy: Policy, judge: str, tokens_in: int = 0,
                tokens_out: int = 0, cost_usd: float = 0.0) -> Judgment:
    """Translate a validated answer into the tree's Judgment; templates become the facts they imply."""
    missing = answer.missing_repro
    if missing is None and "request_self_contained_reproduction" in answer.templates:
        missing = MissingRepro.DOWNLOAD
    reasoning = answer.reasoning
    if answer.release_risk and policy.meta.release.latest_minor != "unknown":
        reasoning += f" [{RELEASE_RISK}: may affect {policy.meta.release.latest_minor}]"
    return Judgment(
        judge=judge,
        kind=answer.kind,
        kind_confidence=answer.kind_confidence,
        labels=tuple(LabelScore(name=c.name, confidence=c.confidence, reason=c.reason)
                     for c in answer.labels),
        transfer_repo=answer.transfer_repo,
        transfer_confidence=answer.kind_confidence if answer.transfer_repo else 0.0,
        missing_repro=missing,
        high_priority=answer.high_priority,
        reasoning=reasoning,
        tokens_in=tokens_in,
        tokens_out=tokens_out,
        cost_usd=cost_usd,
    )
