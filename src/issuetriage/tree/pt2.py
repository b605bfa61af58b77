"""Step 2.5: torch.compile issues go to `oncall: pt2` with module labels from the PT2 rubric."""

from __future__ import annotations

from issuetriage.matcher import matchers
from issuetriage.models import Decision
from issuetriage.tree.base import Context, Draft, Outcome


def _rubric_modules(ctx: Context) -> list[str]:
    """Module labels by where the failure happens (backend bisection), not by what is on the stack."""
    pt2 = ctx.policy.queues.pt2
    assert pt2 is not None
    hits = matchers(ctx.policy).pt2_modules.hits(ctx.signals)
    dispatcher = "module: pt2-dispatcher"
    modules = [label for label in ctx.policy.rules.pt2_modules if label in hits]
    if dispatcher in modules and "module: inductor" in modules:
        # aot_eager already fails: the bug is before inductor, whatever the stack shows.
        modules.remove("module: inductor")
    if pt2.helion_label in modules and "module: inductor" not in modules and ctx.signals.grams & {
            "torch.compile", "inductor"}:
        modules.append("module: inductor")
    return modules


def compile_issue(ctx: Context, draft: Draft) -> Outcome | None:
    """Step 2.5: oncall: pt2, at least one module label, CPU sub-queue, distributed co-routing."""
    pt2, policy, judgment = ctx.policy.queues.pt2, ctx.policy, ctx.judgment
    route = policy.meta.thresholds.route
    if pt2 is None or judgment.score(pt2.label) < route:
        return None
    labels = [pt2.label]
    modules = _rubric_modules(ctx)
    domain = [s.name for s in judgment.confident(policy.meta.thresholds.label)
              if s.name.startswith("module:") and s.name not in modules
              and (s.name != pt2.helion_label)]
    modules += domain[:2]
    labels += modules or [pt2.fallback_module]
    cpu_hit = matchers(policy).pt2_cpu_only.hits(ctx.signals)
    if cpu_hit and "cuda" not in ctx.signals.backends and "module: inductor" in labels:
        labels.append(pt2.cpu_label)
    if pt2.distributed_label and judgment.score(pt2.distributed_label) >= route:
        labels.append(pt2.distributed_label)
    why = ", ".join(labels[1:])
    return Outcome(f"torch.compile issue ({judgment.score(pt2.label):.2f}): {why}",
                   Decision.LABEL, labels=tuple(labels), stop=True)
