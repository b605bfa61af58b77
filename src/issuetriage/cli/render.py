"""Plans for people: one-line text, and rich tables for the demo and runs."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # rich loads only when a table is drawn
    from rich.table import Table

    from issuetriage.models import Plan


def why(plan: Plan) -> str:
    """The reason of the step that decided, or the last content step."""
    deciding = [t for t in plan.trace if t.outcome == plan.decision.value]
    step = deciding[-1] if deciding else (plan.trace[0] if plan.trace else None)
    return step.reason if step else ""


def plan_text(plan: Plan) -> str:
    """A few lines a maintainer reads: decision, writes and the trace."""
    lines = [f"{plan.repo}#{plan.number}: {plan.decision.value}"]
    if plan.judge:
        lines.append(f"  judge:     {plan.judge}")
    if plan.labels_added:
        lines.append(f"  labels:    {', '.join(plan.labels_added)}")
    if plan.templates:
        lines.append(f"  templates: {', '.join(plan.templates)}")
    if plan.close:
        lines.append("  close:     yes")
    if plan.body_edit is not None:
        lines.append("  body edit: download links removed")
    if plan.transfer_repo:
        lines.append(f"  transfer:  {plan.transfer_repo}")
    for step in plan.trace:
        lines.append(f"  [{step.step}] {step.outcome}: {step.reason}")
    return "\n".join(lines)


def plans_table(rows: list[tuple[str, Plan]], title: str) -> Table:
    """Issue, decision, labels, template and why, one row per plan."""
    from rich.table import Table

    table = Table(title=title, show_lines=False, expand=True)
    for column, style in (("issue", "bold"), ("decision", "cyan"), ("labels", "green"),
                          ("template", "magenta"), ("why", "")):
        table.add_column(column, style=style, overflow="fold")
    for name, plan in rows:
        labels = ", ".join(plan.labels_added) + (f" → {plan.transfer_repo}" if plan.transfer_repo else "")
        table.add_row(name, plan.decision.value, labels, ", ".join(plan.templates), why(plan))
    return table
