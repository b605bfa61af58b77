"""Policy profiles: label catalog, forbidden patterns, queues, templates and rules, loaded as data.

A profile is a folder of TOML files. Every file is validated strictly: an unknown key or a wrong
type is a ConfigError that names the file and the key. A profile that validated is kept in a
cache keyed by its files' bytes (`compiled.py`), so a hook process skips the TOML parse and the
model builds; models are built on first validation (`defer_build`), not at import.
"""

from __future__ import annotations

import io
import re
import string
from collections.abc import Iterable, Mapping
from functools import cached_property
from pathlib import Path
from typing import TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from issuetriage.errors import ConfigError, all_problems
from issuetriage.models import Issue
from issuetriage.policy import PROFILES_DIR, TEMPLATE_MARKER, compiled
from issuetriage.text import MAX_PROFILE_PATTERNS, MAX_PROFILE_PROGRAM, PatternError, compile_linear, tokens_of


class _Strict(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", defer_build=True)


# Route patterns match ignoring case, line by line; download-host patterns read one URL.
ROUTE_FLAGS = re.I | re.M
HUB_FLAGS = re.I


def _compile(patterns: tuple[str, ...], flags: int = ROUTE_FLAGS) -> tuple[str, ...]:
    """The patterns, each one RE2 compiles within its size bounds (issuetriage.text)."""
    for pattern in patterns:
        try:
            compile_linear(pattern, flags)
        except PatternError as exc:
            raise ValueError(f"pattern {pattern[:60]!r}: {exc}") from None
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


class Catalog(_Strict):
    label: tuple[LabelSpec, ...]


class Forbidden(_Strict):
    """Labels the bot may never add; `maintainer_only` are human decisions no bot path makes."""

    prefixes: tuple[str, ...] = ()
    contains: tuple[str, ...] = ()
    exact: tuple[str, ...] = ()
    maintainer_only: tuple[str, ...] = ()

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
        if any(low == e.lower() for e in self.maintainer_only):
            return "maintainer-only: a human decision no bot path makes"
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
    """A compiler queue with its own rubric of area labels (PyTorch's `oncall: pt2`)."""

    label: str
    cpu_label: str
    fallback_module: str
    co_routes: tuple[str, ...] = ()
    helion_label: str = ""
    # Backend bisection: a report that the frontend-only backend fails too means the bug is
    # before the code generator, so `frontend_label` replaces `backend_label`.
    frontend_label: str = ""
    backend_label: str = ""
    # Words that say the compiler itself is in use (the backend goes with `helion_label` then).
    compiler_words: tuple[str, ...] = ()
    # A CPU-only report goes to `cpu_label` unless one of these backends appears.
    gpu_backends: tuple[str, ...] = ()
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
    # `$name` placeholders the comment fills from a plan's evidence (never from issue text);
    # a template without variables is posted exactly as written.
    variables: tuple[str, ...] = ()

    @model_validator(mode="after")
    def _placeholders_declared(self) -> Template:
        if self.variables:
            text = string.Template(self.comment)
            used = set(text.get_identifiers())
            if not text.is_valid() or used != set(self.variables):
                raise ValueError(f"comment placeholders {sorted(used)} must be exactly the variables "
                                 f"{sorted(self.variables)} (write a literal $ as $$)")
        return self


_PLAIN_VALUE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._+-]{0,79}$")


def escaped(value: str) -> str:
    """A template value as inert comment text: a plain name or version as it is, anything else
    as numeric character references (no markdown, HTML, mention or marker survives), bounded."""
    if _PLAIN_VALUE.fullmatch(value):
        return value
    return "".join(c if c.isascii() and c.isalnum() else f"&#{ord(c)};" for c in value[:80])


class Templates(_Strict):
    templates: dict[str, Template]


class Rules(_Strict):
    """Keyword and pattern lists the heuristic steps read; each list is one question."""

    question: Route = Field(default_factory=Route)
    question_marker: Route = Field(default_factory=Route)
    bug: Route = Field(default_factory=Route)
    feature: Route = Field(default_factory=Route)
    expected_behavior: Route = Field(default_factory=Route)
    download_extensions: tuple[str, ...] = ()
    download_hosts: tuple[str, ...] = ()
    hub_patterns: tuple[str, ...] = ()
    missing_repro: dict[str, Route] = {}
    edge_case: Route = Field(default_factory=Route)
    edge_case_root_causes: tuple[str, ...] = ()
    fuzzer: Route = Field(default_factory=Route)
    escalate: dict[str, Route] = {}
    commonly_missed: dict[str, Route] = {}
    pt2_modules: dict[str, Route] = {}
    pt2_cpu_only: Route = Field(default_factory=Route)

    _check_hub = field_validator("hub_patterns")(classmethod(lambda cls, v: _compile(v, HUB_FLAGS)))


class BotLabels(_Strict):
    """The labels the tree's own steps add or read; an empty name turns its step off."""

    bot_triaged: str = "bot-triaged"
    triaged: str = "triaged"
    triage_review: str = "triage review"
    release_triage: str = ""
    blocked: str = "bot-triage-blocked"
    high_priority: str = ""
    edge_cases: str = ""
    fuzzer: str = ""


class Families(_Strict):
    """Label families by name prefix (`module:`, `area/`, `oncall:`...), matched case-sensitively."""

    # Area labels: the general queue labels an issue only when one of these is confident.
    # Empty: every content label that is not a queue label counts as an area.
    area: tuple[str, ...] = ()
    # Queue labels: an issue carrying one is already routed; a redirect adds exactly one.
    queue: tuple[str, ...] = ()
    # Cross-cutting topics (shown as their own group; routing treats them as other labels).
    topic: tuple[str, ...] = ()


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
    # The judge's confidence that an issue is a feature request before one of `type_labels` is
    # added (the label itself still needs `label`). A TOML number only: "0.8" or true is refused.
    type_kind: float = Field(0.8, ge=0, le=1, strict=True)


class Live(_Strict):
    """Live quality: the precision a label must keep to be applied, and who counts as the bot."""

    shadow: bool = False  # record plans without writing them, whatever the command asks
    precision_target: float = Field(0.6, ge=0, le=1)
    min_support: int = Field(10, ge=1)  # plans with the label before its precision is judged
    window_days: int = Field(30, ge=1)
    bot_accounts: tuple[str, ...] = ("issuetriage[bot]", "issuetriage-bot")
    queue_labels: tuple[str, ...] = ()  # more labels the report counts as work queues
    unused_months: int = Field(12, ge=1)


class Stale(_Strict):
    """Follow-up on issues waiting for their reporter: off unless the profile enables it."""

    enabled: bool = False
    waiting_templates: tuple[str, ...] = ("request_more_info", "request_self_contained_reproduction")
    remind_after_days: int = Field(14, ge=1)
    close_after_days: int = Field(14, ge=1)
    remind_template: str = "stale_reminder"
    close_template: str = "stale_close"


class Meta(_Strict):
    name: str
    repo: str
    # How comments and reasons name the project (default: the repository's name).
    project: str = ""
    description: str = ""
    families: Families = Field(default_factory=Families)
    type_labels: tuple[str, ...] = ()
    # Labels maintainers put on usage questions they close (evaluation's gold questions).
    question_labels: tuple[str, ...] = ()
    process_labels: tuple[str, ...] = ()
    bot_labels: BotLabels = Field(default_factory=BotLabels)
    release: Release = Field(default_factory=Release)
    thresholds: Thresholds = Field(default_factory=Thresholds)
    live: Live = Field(default_factory=Live)
    stale: Stale = Field(default_factory=Stale)


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


def _read(root: Path) -> dict[str, bytes | list[str]]:
    """Each profile file's bytes, or the problem reading it."""
    out: dict[str, bytes | list[str]] = {}
    for name in FILES:
        path = root / name
        try:
            out[name] = path.read_bytes()
        except FileNotFoundError:
            out[name] = [f"{path}: missing profile file"]
        except OSError as exc:  # a folder in its place, no permission: the hook must still fail closed
            out[name] = [f"{path}: cannot read: {exc.strerror or exc}"]
    return out


def _parse(path: Path, raw: bytes | list[str], model: type[M]) -> M | list[str]:
    """The validated file, or every problem with it (each naming the file and the key)."""
    import tomllib  # not needed when the profile comes from the compiled cache

    if isinstance(raw, list):
        return raw
    try:  # decoded as Path.read_text decodes (universal newlines)
        data = tomllib.loads(io.TextIOWrapper(io.BytesIO(raw), encoding="utf-8").read())
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        return [f"{path}: not valid TOML: {exc}"]
    except RecursionError:  # tomllib recurses once per level of nested arrays and tables
        return [f"{path}: not valid TOML: nested too deeply"]
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        return [f"{path}: {problem}" for problem in all_problems(exc)]


class Policy:
    """A loaded, cross-checked profile; code asks it about labels instead of using strings."""

    def __init__(self, root: Path, parts: dict[str, BaseModel], *, check: bool = True) -> None:
        self.root = root
        self.meta: Meta = parts["profile.toml"]  # type: ignore[assignment]
        self.catalog: Catalog = parts["labels.toml"]  # type: ignore[assignment]
        self.forbidden: Forbidden = parts["forbidden.toml"]  # type: ignore[assignment]
        self.redundancy: Redundancy = parts["redundancy.toml"]  # type: ignore[assignment]
        self.queues: Queues = parts["queues.toml"]  # type: ignore[assignment]
        self.templates: dict[str, Template] = parts["templates.toml"].templates  # type: ignore[attr-defined]
        self.rules: Rules = parts["rules.toml"]  # type: ignore[assignment]
        self._forbidden_cache: dict[str, str | None] = {}
        problems = self.problems() if check else []
        if problems:
            raise ConfigError(problems[0])

    @property
    def name(self) -> str:
        return self.meta.name

    @property
    def bot(self) -> BotLabels:
        return self.meta.bot_labels

    @property
    def project(self) -> str:
        """The project's name as people write it."""
        return self.meta.project or self.meta.repo.split("/")[-1]

    @cached_property
    def labels(self) -> dict[str, LabelSpec]:
        """Catalog labels by name."""
        return {spec.name: spec for spec in self.catalog.label}

    @cached_property
    def bot_label_names(self) -> frozenset[str]:
        """Labels the bot itself manages (not judged from content)."""
        b = self.bot
        return frozenset({b.bot_triaged, b.triaged, b.triage_review, b.release_triage, b.blocked} - {""})

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
        """A queue label (`families.queue`, or a queue `queues.toml` names): the issue belongs
        to that queue."""
        queue = self.meta.families.queue
        return bool(queue and label.startswith(queue)) or label in self.queue_labels

    @cached_property
    def queue_labels(self) -> frozenset[str]:
        """The labels of the queues `queues.toml` declares (redirects and the PT2 queue)."""
        pt2 = self.queues.pt2
        return self.redirect_labels | ({pt2.label, pt2.cpu_label} if pt2 else set())

    def is_area(self, label: str) -> bool:
        """An area label (`families.area`), the kind the general queue needs one of."""
        area = self.meta.families.area
        return label.startswith(area) if area else not self.is_oncall(label)

    def group_of(self, label: str) -> str:
        """`area`, `queue`, `topic` or `other`, from the profile's label families."""
        families = self.meta.families
        for group, prefixes in (("queue", families.queue), ("area", families.area),
                                ("topic", families.topic)):
            if prefixes and label.startswith(prefixes):
                return group
        return "other"

    def skip_reason(self, issue: Issue) -> str | None:
        """Why the bot leaves `issue` alone (closed, a pull request, already triaged or routed),
        or None when it is untriaged and the bot should read it."""
        if issue.state != "open":
            return f"{issue.state}"
        if issue.is_pull_request:
            return "a pull request"
        done = sorted({self.bot.triaged, self.bot.bot_triaged} & set(issue.labels))
        if done:
            return f"already triaged ({done[0]})"
        routed = next((label for label in issue.labels if self.is_oncall(label)), None)
        return f"already routed ({routed})" if routed else None

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

    @property
    def judge_templates(self) -> tuple[str, ...]:
        """The templates a judge may choose: not those whose variables only evidence fills, nor
        the stale follow-up's reminder and close (posted by `stale`, never on a new issue)."""
        follow_up = {self.meta.stale.remind_template, self.meta.stale.close_template}
        return tuple(name for name, t in self.templates.items() if not t.variables and name not in follow_up)

    def template_marker(self, name: str) -> str:
        """The hidden marker that lets us see a template was already posted."""
        return TEMPLATE_MARKER.format(name=name)

    def render_template(self, name: str, values: Mapping[str, str] | None = None) -> str:
        """The comment text for one template, its variables filled (escaped) from `values`, with
        its marker. A template with variables and no value for one of them raises KeyError."""
        template = self.templates[name]
        text = template.comment.rstrip()
        if template.variables:
            given = values or {}
            text = string.Template(text).substitute({k: escaped(given[k]) for k in template.variables})
        return f"{text}\n\n{self.template_marker(name)}"

    def problems(self) -> list[str]:
        """Every cross-file problem: labels other files name that the catalog lacks, forbidden
        type labels, impossible `implies`, missing templates. Each names the file and the key."""
        names = [spec.name for spec in self.catalog.label]
        dupes = sorted({n for n in names if names.count(n) > 1})
        out = [f"{self.root / 'labels.toml'}: label: duplicate names {dupes}"] if dupes else []
        known = set(names) | self.bot_label_names
        out += [f"{self.root / file}: {key}: {label!r} is not in labels.toml"
                for file, key, label in self._references() if label and label not in known]
        for i, label in enumerate(self.meta.type_labels):
            if self.forbidden_reason(label):
                out.append(f"{self.root / 'profile.toml'}: type_labels.{i}: {label!r} is forbidden")
        never_implied = self.bot_label_names | {self.bot.high_priority} | set(self.meta.type_labels)
        for spec in self.catalog.label:
            for i, label in enumerate(spec.implies):
                why = ("is the label itself" if label == spec.name else
                       "is the bot's or a type label" if label in never_implied else
                       "is forbidden" if self.forbidden_reason(label) else None)
                if why:
                    out.append(f"{self.root / 'labels.toml'}: {spec.name}.implies.{i}: {label!r} {why}")
        out += [f"{self.root / 'forbidden.toml'}: {label!r} is one of the bot's own labels and cannot "
                "be forbidden" for label in sorted(self.bot_label_names) if self.forbidden_reason(label)]
        stale = self.meta.stale
        out += [f"{self.root / 'profile.toml'}: stale: template {name!r} is not in templates.toml"
                for name in ((*stale.waiting_templates, stale.remind_template, stale.close_template)
                             if stale.enabled else ()) if name not in self.templates]
        out += self._pattern_budget()
        required = ["redirect_to_forum", "request_more_info", "request_self_contained_reproduction"]
        required += ["numerical_accuracy"] if self.bot.edge_cases else []
        out += [f"{self.root / 'templates.toml'}: templates.{name}: missing"
                for name in required if name not in self.templates]
        return out

    def _pattern_budget(self) -> list[str]:
        """All the profile's patterns together: at most MAX_PROFILE_PATTERNS, of MAX_PROFILE_PROGRAM
        RE2 instructions in all. Each runs in linear time; this bounds what they cost together, in
        time and in automata memory (MAX_MEM each)."""
        found = [(HUB_FLAGS if name == "hub_patterns" else ROUTE_FLAGS, pattern)
                 for part in (self.catalog, self.queues, self.rules)
                 for name, patterns in _patterns_in(part) for pattern in patterns]
        size = sum(compile_linear(pattern, flags).programsize for flags, pattern in found)
        if len(found) > MAX_PROFILE_PATTERNS or size > MAX_PROFILE_PROGRAM:
            return [f"{self.root}: {len(found)} patterns of {size} RE2 instructions in all, at most "
                    f"{MAX_PROFILE_PATTERNS} of {MAX_PROFILE_PROGRAM}"]
        return []

    def _references(self) -> list[tuple[str, str, str]]:
        """(file, key, label) for every label a file other than labels.toml names."""
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
            for key in ("label", "cpu_label", "fallback_module", "helion_label", "frontend_label",
                        "backend_label"):
                refs.append(("queues.toml", f"pt2.{key}", getattr(pt2, key)))
            for i, label in enumerate(pt2.co_routes):
                refs.append(("queues.toml", f"pt2.co_routes.{i}", label))
        for i, label in enumerate(self.meta.type_labels):
            refs.append(("profile.toml", f"type_labels.{i}", label))
        for key in ("edge_cases", "fuzzer", "high_priority"):
            refs.append(("profile.toml", f"bot_labels.{key}", getattr(self.bot, key)))
        for label in self.rules.commonly_missed:
            refs.append(("rules.toml", f"commonly_missed.{label}", label))
        for label in self.rules.pt2_modules:
            refs.append(("rules.toml", f"pt2_modules.{label}", label))
        for i, label in enumerate(self.rules.edge_case_root_causes):
            refs.append(("rules.toml", f"edge_case_root_causes.{i}", label))
        return refs


def _patterns_in(value: object) -> Iterable[tuple[str, tuple[str, ...]]]:
    """(field name, patterns) for every `*patterns` field anywhere in a profile model."""
    if isinstance(value, BaseModel):
        for name in type(value).model_fields:
            item = getattr(value, name)
            if name.endswith("patterns"):
                yield name, item
            else:
                yield from _patterns_in(item)
    elif isinstance(value, tuple | list):
        for item in value:
            yield from _patterns_in(item)
    elif isinstance(value, dict):
        for item in value.values():
            yield from _patterns_in(item)


def profile_problems(root: Path) -> list[str]:
    """Every problem with the profile folder at `root`, all at once (empty when it is valid)."""
    if not root.is_dir():
        return [f"{root}: not a profile folder"]
    raw = _read(root)
    parts = {name: _parse(root / name, raw[name], model) for name, model in FILES.items()}
    problems = [p for part in parts.values() if isinstance(part, list) for p in part]
    if problems:
        return problems
    return Policy(root, parts, check=False).problems()  # type: ignore[arg-type]


def load_profile_dir(root: Path) -> Policy:
    """Load and validate the profile folder at `root`. Files whose bytes validated before come
    from the compiled cache (`policy.compiled`); anything else is validated and then cached."""
    if not root.is_dir():
        raise ConfigError(f"{root}: not a profile folder")
    raw = _read(root)
    key = compiled.key(root, raw)
    cached = compiled.load(key, FILES) if key else None
    if cached is not None:
        return Policy(root, cached, check=False)  # checked when it was cached
    parts = {name: _parse(root / name, raw[name], model) for name, model in FILES.items()}
    for part in parts.values():
        if isinstance(part, list):
            raise ConfigError(part[0])
    policy = Policy(root, parts)  # type: ignore[arg-type]
    if key:
        compiled.store(key, parts)  # type: ignore[arg-type]
    return policy


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

