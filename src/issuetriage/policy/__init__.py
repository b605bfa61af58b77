"""Policy profiles: label catalog, forbidden patterns, queues, templates and rules, loaded as data.

A profile is a folder of TOML files. Every file is validated strictly: an unknown key or a wrong
type is a ConfigError that names the file and the key.
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Iterable
from functools import cached_property
from pathlib import Path
from typing import TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from issuetriage.errors import ConfigError, first_problem
from issuetriage.evidence.signals import tokens_of

PROFILES_DIR = Path(__file__).parent / "profiles"
TEMPLATE_MARKER = "<!-- issuetriage:template={name} -->"


class _Strict(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


def _compile(patterns: tuple[str, ...]) -> tuple[str, ...]:
    for pattern in patterns:
        try:
            re.compile(pattern)
        except re.error as exc:
            raise ValueError(f"bad regular expression {pattern!r}: {exc}") from None
    return patterns


class LabelSpec(_Strict):
    """One catalog label: what it means, when to use it, and the signals that suggest it."""

    name: str = Field(min_length=1)
    description: str = ""
    when: str = ""
    when_not: str = ""
    keywords: tuple[str, ...] = ()
    patterns: tuple[str, ...] = ()
    # Words that suggest the label only when the title says them (a body mention is too common).
    title_keywords: tuple[str, ...] = ()
    # Labels that always go with this one (its owning team, its parent area): added with it.
    implies: tuple[str, ...] = ()

    _check_patterns = field_validator("patterns")(classmethod(lambda cls, v: _compile(v)))

    @field_validator("title_keywords")
    @classmethod
    def _title_words(cls, words: tuple[str, ...]) -> tuple[str, ...]:
        for word in words:  # titles are matched as runs of at most 4 tokens
            if not 1 <= len(tokens_of(word)) <= 4:
                raise ValueError(f"{word!r}: a title keyword is 1 to 4 words")
        return words

    @property
    def group(self) -> str:
        """`module`, `oncall`, `topic` or `other`, from the name's prefix."""
        prefix = self.name.split(":", 1)[0] if ":" in self.name else ""
        return prefix if prefix in {"module", "oncall", "topic"} else "other"


class Catalog(_Strict):
    label: tuple[LabelSpec, ...]


class Forbidden(_Strict):
    """Labels the bot may never add."""

    prefixes: tuple[str, ...] = ()
    contains: tuple[str, ...] = ()
    exact: tuple[str, ...] = ()

    def reason(self, label: str) -> str | None:
        """Why `label` is forbidden, or None when it is allowed (case-insensitive)."""
        low = label.lower()
        for prefix in self.prefixes:
            if low.startswith(prefix.lower()):
                return f"forbidden prefix {prefix!r}"
        for part in self.contains:
            if part.lower() in low:
                return f"forbidden substring {part!r}"
        if any(low == e.lower() for e in self.exact):
            return "reserved for humans"
        return None


class RedundancyPair(_Strict):
    specific: str
    generic: str


class Redundancy(_Strict):
    pair: tuple[RedundancyPair, ...] = ()


class Route(_Strict):
    """A queue or sibling repo and the signals that send an issue there."""

    keywords: tuple[str, ...] = ()
    patterns: tuple[str, ...] = ()
    description: str = ""

    _check_patterns = field_validator("patterns")(classmethod(lambda cls, v: _compile(v)))


class RedirectQueue(Route):
    label: str


class TransferTarget(Route):
    repo: str


class PT2Queue(Route):
    label: str
    cpu_label: str
    fallback_module: str
    co_routes: tuple[str, ...] = ()
    helion_label: str = ""
    # queues whose issues are PT2 issues only with one of `compile_keywords` (torch.export
    # traces name dynamo internals without being compile issues)
    standalone: tuple[str, ...] = ()
    compile_keywords: tuple[str, ...] = ()


class Queues(_Strict):
    redirect: tuple[RedirectQueue, ...] = ()
    pt2: PT2Queue | None = None
    transfer: tuple[TransferTarget, ...] = ()


class Template(_Strict):
    action: str
    use_when: str
    comment: str = Field(min_length=1)


class Templates(_Strict):
    templates: dict[str, Template]


class Rules(_Strict):
    """Keyword and pattern lists the heuristic steps read; each list is one question."""

    question: Route = Route()
    question_marker: Route = Route()
    bug: Route = Route()
    feature: Route = Route()
    expected_behavior: Route = Route()
    download_extensions: tuple[str, ...] = ()
    download_hosts: tuple[str, ...] = ()
    hub_patterns: tuple[str, ...] = ()
    missing_repro: dict[str, Route] = {}
    edge_case: Route = Route()
    edge_case_root_causes: tuple[str, ...] = ()
    fuzzer: Route = Route()
    escalate: dict[str, Route] = {}
    commonly_missed: dict[str, Route] = {}
    pt2_modules: dict[str, Route] = {}
    pt2_cpu_only: Route = Route()


class BotLabels(_Strict):
    bot_triaged: str = "bot-triaged"
    triaged: str = "triaged"
    triage_review: str = "triage review"
    release_triage: str = "release triage"
    blocked: str = "bot-triage-blocked"
    high_priority: str = "high priority"
    edge_cases: str = "module: edge cases"
    fuzzer: str = "topic: fuzzer"


class Release(_Strict):
    latest_minor: str = "unknown"

    @field_validator("latest_minor")
    @classmethod
    def _minor(cls, value: str) -> str:
        if value != "unknown" and not re.fullmatch(r"\d+\.\d+", value):
            raise ValueError("must be MAJOR.MINOR (like 2.9) or 'unknown'")
        return value


class Thresholds(_Strict):
    label: float = Field(0.5, ge=0, le=1)
    question_close: float = Field(0.8, ge=0, le=1)
    route: float = Field(0.5, ge=0, le=1)


class Meta(_Strict):
    name: str
    repo: str
    description: str = ""
    type_labels: tuple[str, ...] = ()
    process_labels: tuple[str, ...] = ()
    bot_labels: BotLabels = BotLabels()
    release: Release = Release()
    thresholds: Thresholds = Thresholds()


M = TypeVar("M", bound=BaseModel)

FILES: dict[str, type[BaseModel]] = {
    "profile.toml": Meta,
    "labels.toml": Catalog,
    "forbidden.toml": Forbidden,
    "redundancy.toml": Redundancy,
    "queues.toml": Queues,
    "templates.toml": Templates,
    "rules.toml": Rules,
}


def _load_file(path: Path, model: type[M]) -> M:
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ConfigError(f"{path}: missing profile file") from None
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: not valid TOML: {exc}") from None
    except OSError as exc:  # a folder in its place, no permission: the hook must still fail closed
        raise ConfigError(f"{path}: cannot read: {exc.strerror or exc}") from None
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        raise ConfigError(f"{path}: {first_problem(exc)}") from None


class Policy:
    """A loaded, cross-checked profile; code asks it about labels instead of using strings."""

    def __init__(self, root: Path, parts: dict[str, BaseModel]) -> None:
        self.root = root
        self.meta: Meta = parts["profile.toml"]  # type: ignore[assignment]
        self.catalog: Catalog = parts["labels.toml"]  # type: ignore[assignment]
        self.forbidden: Forbidden = parts["forbidden.toml"]  # type: ignore[assignment]
        self.redundancy: Redundancy = parts["redundancy.toml"]  # type: ignore[assignment]
        self.queues: Queues = parts["queues.toml"]  # type: ignore[assignment]
        self.templates: dict[str, Template] = parts["templates.toml"].templates  # type: ignore[attr-defined]
        self.rules: Rules = parts["rules.toml"]  # type: ignore[assignment]
        self._forbidden_cache: dict[str, str | None] = {}
        self._cross_check()

    @property
    def name(self) -> str:
        return self.meta.name

    @property
    def bot(self) -> BotLabels:
        return self.meta.bot_labels

    @cached_property
    def labels(self) -> dict[str, LabelSpec]:
        """Catalog labels by name."""
        return {spec.name: spec for spec in self.catalog.label}

    @cached_property
    def bot_label_names(self) -> frozenset[str]:
        """Labels the bot itself manages (not judged from content)."""
        b = self.bot
        return frozenset({b.bot_triaged, b.triaged, b.triage_review, b.release_triage, b.blocked})

    @cached_property
    def redirect_labels(self) -> frozenset[str]:
        return frozenset(q.label for q in self.queues.redirect)

    @cached_property
    def transfer_repos(self) -> frozenset[str]:
        return frozenset(t.repo for t in self.queues.transfer)

    def forbidden_reason(self, label: str) -> str | None:
        """Why the bot may not add `label` (None when it may); answers are cached per label."""
        cache = self._forbidden_cache
        if label not in cache:
            if len(cache) > 4096:  # proposals may be hostile: keep the cache bounded
                cache.clear()
            cache[label] = self.forbidden.reason(label)
        return cache[label]

    @cached_property
    def nameable_labels(self) -> tuple[str, ...]:
        """Catalog labels a judge may propose: not forbidden, not the bot's own, not a process
        label (maintainers' decisions such as `high priority`), in catalog order."""
        process = set(self.meta.process_labels) | self.bot_label_names | {self.bot.high_priority}
        return tuple(n for n in self.labels if not self.forbidden_reason(n) and n not in process)

    def is_oncall(self, label: str) -> bool:
        return label.startswith("oncall:")

    def implied(self, labels: Iterable[str]) -> list[str]:
        """The labels `labels` imply (catalog `implies`, followed transitively), not themselves."""
        given = list(dict.fromkeys(labels))
        seen, out, todo = set(given), [], list(given)
        while todo:
            spec = self.labels.get(todo.pop(0))
            for label in spec.implies if spec else ():
                if label not in seen:
                    seen.add(label)
                    out.append(label)
                    todo.append(label)
        return out

    def template_marker(self, name: str) -> str:
        """The hidden marker that lets us see a template was already posted."""
        return TEMPLATE_MARKER.format(name=name)

    def render_template(self, name: str) -> str:
        """The comment text for one template, with its marker."""
        return f"{self.templates[name].comment.rstrip()}\n\n{self.template_marker(name)}"

    def _cross_check(self) -> None:
        names = [spec.name for spec in self.catalog.label]
        dupes = sorted({n for n in names if names.count(n) > 1})
        if dupes:
            raise ConfigError(f"{self.root / 'labels.toml'}: label: duplicate names {dupes}")
        known = set(names) | self.bot_label_names
        refs: list[tuple[str, str, str]] = []
        for spec in self.catalog.label:
            refs += [("labels.toml", f"{spec.name}.implies.{i}", label)
                     for i, label in enumerate(spec.implies)]
        for i, pair in enumerate(self.redundancy.pair):
            refs += [("redundancy.toml", f"pair.{i}.specific", pair.specific),
                     ("redundancy.toml", f"pair.{i}.generic", pair.generic)]
        for i, queue in enumerate(self.queues.redirect):
            refs.append(("queues.toml", f"redirect.{i}.label", queue.label))
        if self.queues.pt2:
            pt2 = self.queues.pt2
            for key in ("label", "cpu_label", "fallback_module", "helion_label"):
                if getattr(pt2, key):
                    refs.append(("queues.toml", f"pt2.{key}", getattr(pt2, key)))
            for i, label in enumerate(pt2.co_routes):
                refs.append(("queues.toml", f"pt2.co_routes.{i}", label))
        for i, label in enumerate(self.meta.type_labels):
            refs.append(("profile.toml", f"type_labels.{i}", label))
        for key in ("edge_cases", "fuzzer", "high_priority"):
            refs.append(("profile.toml", f"bot_labels.{key}", getattr(self.bot, key)))
        for section, routes in (("escalate", self.rules.escalate),
                                ("commonly_missed", self.rules.commonly_missed)):
            for label in routes:
                if section == "commonly_missed":
                    refs.append(("rules.toml", f"{section}.{label}", label))
        for label in self.rules.pt2_modules:
            refs.append(("rules.toml", f"pt2_modules.{label}", label))
        for i, label in enumerate(self.rules.edge_case_root_causes):
            refs.append(("rules.toml", f"edge_case_root_causes.{i}", label))
        for file, key, label in refs:
            if label not in known:
                raise ConfigError(f"{self.root / file}: {key}: {label!r} is not in labels.toml")
        for i, label in enumerate(self.meta.type_labels):
            if self.forbidden_reason(label):
                raise ConfigError(f"{self.root / 'profile.toml'}: type_labels.{i}: {label!r} is forbidden")
        never_implied = self.bot_label_names | {self.bot.high_priority} | set(self.meta.type_labels)
        for spec in self.catalog.label:
            for i, label in enumerate(spec.implies):
                why = ("is the label itself" if label == spec.name else
                       "is the bot's or a type label" if label in never_implied else
                       "is forbidden" if self.forbidden_reason(label) else None)
                if why:
                    raise ConfigError(f"{self.root / 'labels.toml'}: {spec.name}.implies.{i}: "
                                      f"{label!r} {why}")
        for required in ("redirect_to_forum", "request_more_info",
                         "request_self_contained_reproduction", "numerical_accuracy"):
            if required not in self.templates:
                raise ConfigError(f"{self.root / 'templates.toml'}: templates.{required}: missing")


def load_profile_dir(root: Path) -> Policy:
    """Load and validate the profile folder at `root`."""
    if not root.is_dir():
        raise ConfigError(f"{root}: not a profile folder")
    parts = {name: _load_file(root / name, model) for name, model in FILES.items()}
    return Policy(root, parts)


_CACHE: dict[str, Policy] = {}


def load_profile(name_or_path: str | Path = "pytorch") -> Policy:
    """A shipped profile by name, or a profile folder by path."""
    key = str(name_or_path)
    if key in _CACHE:
        return _CACHE[key]
    path = Path(key)
    if not path.is_dir():
        candidate = PROFILES_DIR / key
        if not candidate.is_dir():
            shipped = ", ".join(sorted(p.name for p in PROFILES_DIR.iterdir() if p.is_dir()))
            raise ConfigError(f"unknown profile {key!r} (shipped: {shipped})")
        path = candidate
    policy = load_profile_dir(path)
    _CACHE[key] = policy
    return policy

