"""Step 2.5: torch.compile issues go to `oncall: pt2` with module labels from the PT2 rubric
(and, as on the general queue, at most one type label)."""

from __future__ import annotations

from issuetriage.engine.tree.base import Context, Draft, Outcome, routed_by_implication, type_label
from issuetriage.evidence.matcher import matchers
from issuetriage.evidence.signals import affirmed, normalize_keyword
from issuetriage.models import Decision


def _rubric_modules(ctx: Context) -> list[str]:
    """PT2 module labels the judge is confident of, corrected by backend bisection.

    The judge scores the rubric labels like any other (the heuristic from `rules.toml`
    `pt2_modules`, a learned model from history); without a confident one, the judge's best
    rubric label is used. A report that aot_eager fails too is explicit backend bisection: the
    bug is before inductor, so it is `module: pt2-dispatcher` and not `module: inductor`.
    """
    pt2, policy, judgment = ctx.policy.queues.pt2, ctx.policy, ctx.judgment
    assert pt2 is not None
    rubric = policy.rules.pt2_modules
    scored = [s for s in judgment.labels if s.name in rubric and s.confidence > 0]
    modules = [s.name for s in judgment.confident(policy.meta.thresholds.label) if s.name in rubric]
    if not modules and scored:
        modules = [max(scored, key=lambda s: (s.confidence, s.name)).name]
    explicit = matchers(policy).pt2_modules.hits(ctx.signals)
    front, back = pt2.frontend_label, pt2.backend_label
    if front and front in explicit:
        modules = [front] + [m for m in modules if m not in (back, front)]
    if pt2.helion_label:
        modules = [m for m in modules if m != pt2.helion_label]
        if pt2.helion_label in explicit:  # Helion only when the report names it
            modules.insert(0, pt2.helion_label)
            if back and back not in modules and ctx.signals.pieces & set(pt2.compiler_words):
                modules.append(back)
    return modules


def _standalone(ctx: Context) -> bool:
    """A confident standalone queue (pure torch.export) and no word of compiling: not PT2."""
    pt2 = ctx.policy.queues.pt2
    assert pt2 is not None
    if not any(ctx.judgment.score(q) >= ctx.policy.meta.thresholds.route for q in pt2.standalone):
        return False
    words = {normalize_keyword(k) for k in pt2.compile_keywords}
    signals = ctx.signals
    return not any((w in signals.pieces or f" {w} " in signals.joined) and affirmed(signals, w)
                   for w in words)


def compile_issue(ctx: Context, draft: Draft) -> Outcome | None:
    """Step 2.5: oncall: pt2, at least one module label, CPU sub-queue, co-routing (distributed,
    export), and what those labels imply. A confident label that implies `oncall: pt2` (a
    compile-only area) makes a PT2 issue even when the report never names torch.compile. A
    confident feature request gets its type label too: the skill's redirect-and-stop excepts PT2."""
    pt2, policy, judgment = ctx.policy.queues.pt2, ctx.policy, ctx.judgment
    if pt2 is None:
        return None
    route = policy.meta.thresholds.route
    if _standalone(ctx):
        return None
    score = judgment.score(pt2.label)
    implied = routed_by_implication(ctx, {pt2.label}) if score < route else None
    if score < route and implied is None:
        return None
    labels = [pt2.label]
    modules = _rubric_modules(ctx)
    if implied is not None and implied[1].name not in modules:
        modules.append(implied[1].name)  # the label that made it a PT2 issue goes with it
    rubric = set(policy.rules.pt2_modules) | {pt2.fallback_module}
    domain = [s.name for s in judgment.confident(policy.meta.thresholds.label)
              if policy.is_area(s.name) and s.name not in modules and s.name not in rubric]
    modules += domain[:2]
    labels += modules or [pt2.fallback_module]
    cpu_only = (matchers(policy).pt2_cpu_only.hits(ctx.signals)
                and not set(pt2.gpu_backends) & set(ctx.signals.backends))
    if judgment.score(pt2.cpu_label) >= route or (cpu_only and pt2.backend_label in labels):
        labels.append(pt2.cpu_label)
    labels += [label for label in pt2.co_routes if judgment.score(label) >= route]
    labels += policy.implied(labels)
    kind = type_label(ctx)
    if kind:
        labels.append(kind)
    because = (f"implied by {implied[1].name} ({implied[1].confidence:.2f})" if implied
               else f"{score:.2f}")
    return Outcome(f"torch.compile issue ({because}): {', '.join(labels[1:])}",
                   Decision.LABEL, labels=tuple(labels), stop=True)
