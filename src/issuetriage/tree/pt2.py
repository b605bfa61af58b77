"""Step 2.5: torch.compile issues go to `oncall: pt2` with module labels from the PT2 rubric."""

from __future__ import annotations

from issuetriage.heuristic import evidence_confidence
from issuetriage.matcher import matchers
from issuetriage.models import Decision
from issuetriage.tree.base import Context, Draft, Outcome


def _rubric_modules(ctx: Context) -> list[str]:
    """Module labels by where the failure happens (backend bisection), not by what is on the stack.

    A rubric label needs the same evidence as any label (two distinct signals, or one in the
    title); without any, the best single signal is used, and only then the fallback.
    """
    pt2 = ctx.policy.queues.pt2
    assert pt2 is not None
    hits = matchers(ctx.policy).pt2_modules.hits(ctx.signals)
    title = ctx.signals.title_grams
    scored = sorted(((evidence_confidence(hits[label], title), label)
                     for label in ctx.policy.rules.pt2_modules if label in hits), reverse=True)
    modules = [label for conf, label in scored if conf >= ctx.policy.meta.thresholds.label]
    if not modules and scored:
        modules = [scored[0][1]]
    dispatcher = "module: pt2-dispatcher"
    if dispatcher in hits and "module: inductor" in modules:
        # aot_eager already fails: the bug is before inductor, whatever the stack shows.
        modules.remove("module: inductor")
        modules.insert(0, dispatcher) if dispatcher not in modules else None
    if pt2.helion_label in modules and "module: inductor" not in modules and ctx.signals.grams & {
            "torch.compile", "inductor"}:
        modules.append("module: inductor")
    return modules


def compile_issue(ctx: Context, draft: Draft) -> Outcome | None:
    """Step 2.5: oncall: pt2, at least one module label, CPU sub-queue, co-routing (distributed, export)."""
    pt2, policy, judgment = ctx.policy.queues.pt2, ctx.policy, ctx.judgment
    route = policy.meta.thresholds.route
    if pt2 is None or judgment.score(pt2.label) < route:
        return None
    labels = [pt2.label]
    modules = _rubric_modules(ctx)
    rubric = set(policy.rules.pt2_modules) | {pt2.fallback_module}
    domain = [s.name for s in judgment.confident(policy.meta.thresholds.label)
              if s.name.startswith("module:") and s.name not in modules and s.name not in rubric]
    modules += domain[:2]
    labels += modules or [pt2.fallback_module]
    cpu_hit = matchers(policy).pt2_cpu_only.hits(ctx.signals)
    if cpu_hit and "cuda" not in ctx.signals.backends and "module: inductor" in labels:
        labels.append(pt2.cpu_label)
    labels += [label for label in pt2.co_routes if judgment.score(label) >= route]
    why = ", ".join(labels[1:])
    return Outcome(f"torch.compile issue ({judgment.score(pt2.label):.2f}): {why}",
                   Decision.LABEL, labels=tuple(labels), stop=True)
