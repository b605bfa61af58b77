"""Steps 1.5, 1.55 and 1.6: downloads, missing reproductions, numerical edge cases."""

from __future__ import annotations

from issuetriage.engine.tree.base import Context, Draft, Outcome
from issuetriage.evidence.downloads import REMOVAL_NOTICE, download_links, redact
from issuetriage.judges.base import MissingRepro
from issuetriage.models import Decision


def downloaded_files(ctx: Context, draft: Draft) -> Outcome | None:
    """Step 1.5: a repro that needs downloaded files: strip the links, ask for a self-contained one.
    Unlike a request for information, the issue is still routed (the later steps add their
    labels, never `triaged`): the skill's template edits, labels and comments, it does not stop."""
    body_links = tuple(url for url in ctx.signals.links if url in ctx.issue.body)
    links = download_links(body_links, ctx.policy)
    if not links and REMOVAL_NOTICE in ctx.issue.body:
        # we already removed the links (perhaps in a run that stopped before its last write)
        return Outcome("download links were removed; waiting for a self-contained reproduction",
                       Decision.REQUEST_REPRODUCTION,
                       templates=("request_self_contained_reproduction",), route_on=True)
    if not links:
        return None
    return Outcome(
        f"reproducing needs {len(links)} downloaded file(s); links removed",
        Decision.REQUEST_REPRODUCTION,
        templates=("request_self_contained_reproduction",),
        body_edit=redact(ctx.issue.body, links),
        route_on=True,
    )


def missing_reproduction(ctx: Context, draft: Draft) -> Outcome | None:
    """Step 1.55: hardware, private models, vague upgrades or big infrastructure, and no script."""
    kind = ctx.judgment.missing_repro
    if kind is None or kind is MissingRepro.DOWNLOAD:
        return None
    return Outcome(f"cannot be reproduced from the issue: {kind.value.replace('_', ' ')}",
                   Decision.REQUEST_REPRODUCTION,
                   templates=("request_self_contained_reproduction",), route_on=True)


def numerical_edge_case(ctx: Context, draft: Draft) -> Outcome | None:
    """Step 1.6: precision and extreme-value reports get `module: edge cases` and the notes; a
    report a fuzzer found gets `topic: fuzzer` whether or not it is about numerics."""
    bot, threshold = ctx.policy.bot, ctx.policy.meta.thresholds.label
    if not bot.edge_cases and not bot.fuzzer:
        return None
    score, fuzzed = ctx.judgment.score(bot.edge_cases), ctx.judgment.score(bot.fuzzer)
    fuzzer = (bot.fuzzer,) if bot.fuzzer and fuzzed >= threshold else ()
    if not bot.edge_cases or score < threshold:
        return Outcome(f"found by a fuzzer ({fuzzed:.2f})", labels=fuzzer) if fuzzer else None
    return Outcome(f"numerical edge case ({score:.2f})", labels=(bot.edge_cases, *fuzzer),
                   templates=("numerical_accuracy",))
