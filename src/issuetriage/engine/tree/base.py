"""What a decision-tree step sees (Context) and what it returns (Outcome)."""

from __future__ import annotations

from collections.abc import Callable, Collection
from dataclasses import dataclass, field

from issuetriage.evidence.signals import Signals
from issuetriage.judges.base import Judgment, Kind, LabelScore
from issuetriage.models import Decision, Issue
from issuetriage.policy import Policy


@dataclass(frozen=True)
class Context:
    """Everything a step may read; steps never do I/O."""

    issue: Issue
    signals: Signals
    judgment: Judgment
    policy: Policy


@dataclass(frozen=True)
class Outcome:
    """One step's conclusion. `stop` ends the content steps (the finishing steps still run);
    `reset` drops what earlier steps proposed (a redirect carries one oncall label only);
    `route_on` keeps this step's decision and comment but lets the later content steps add
    their routing labels (a reproduction request is still routed to its module)."""

    reason: str
    decision: Decision | None = None
    labels: tuple[str, ...] = ()
    templates: tuple[str, ...] = ()
    close: bool = False
    body_edit: str | None = None
    transfer_repo: str | None = None
    stop: bool = False
    review: bool = False
    reset: bool = False
    route_on: bool = False


@dataclass
class Draft:
    """The plan being assembled as the steps run, in order."""

    decision: Decision | None = None
    labels: list[str] = field(default_factory=list)
    templates: list[str] = field(default_factory=list)
    close: bool = False
    body_edit: str | None = None
    transfer_repo: str | None = None
    review: bool = False
    stopped: bool = False
    routing_only: bool = False

    def add(self, outcome: Outcome) -> None:
        """Fold one step's outcome into the draft. After a `route_on` outcome only labels are
        taken from later content steps: its decision, comment and body edit stand."""
        if outcome.reset:
            self.labels.clear()
        for label in outcome.labels:
            if label not in self.labels:
                self.labels.append(label)
        self.stopped = self.stopped or outcome.stop
        if self.routing_only:
            return
        if outcome.reset:
            self.templates.clear()
        if outcome.decision is not None:
            self.decision = outcome.decision
        for name in outcome.templates:
            if name not in self.templates:
                self.templates.append(name)
        self.close = self.close or outcome.close
        self.body_edit = outcome.body_edit if outcome.body_edit is not None else self.body_edit
        self.transfer_repo = outcome.transfer_repo or self.transfer_repo
        self.review = self.review or outcome.review
        self.routing_only = outcome.route_on


def routed_by_implication(ctx: Context, queues: Collection[str]) -> tuple[str, LabelScore] | None:
    """The first of `queues` that a label confident enough to route implies (`labels.toml`
    `implies`), with that label: `module: dtensor` is distributed's. None when there is none."""
    for score in ctx.judgment.confident(ctx.policy.meta.thresholds.route):
        queue = next((q for q in ctx.policy.implied([score.name]) if q in queues), None)
        if queue is not None:
            return queue, score
    return None


def type_label(ctx: Context) -> str | None:
    """At most one of the profile's type labels, for feature requests only (the kind at least
    the profile's `thresholds.type_kind`, the label at least `thresholds.label`); the general
    queue (step 4) and the PT2 queue (step 2.5) add it, a redirect never does."""
    thresholds = ctx.policy.meta.thresholds
    if ctx.judgment.kind is not Kind.FEATURE or ctx.judgment.kind_confidence < thresholds.type_kind:
        return None
    threshold = thresholds.label
    sure = {name: ctx.judgment.score(name) for name in ctx.policy.meta.type_labels
            if ctx.judgment.score(name) >= threshold}
    # a more specific type label (redundancy.toml) wins over the generic one it refines
    generic = {p.generic for p in ctx.policy.redundancy.pair if p.specific in sure}
    scored = [(score, name) for name, score in sure.items() if name not in generic]
    return max(scored)[1] if scored else None


Step = Callable[[Context, Draft], "Outcome | None"]
