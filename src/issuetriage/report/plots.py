"""The report's plots (matplotlib, the `plot` extra, imported lazily and headless)."""

from __future__ import annotations

from typing import Any

from issuetriage.errors import UserError
from issuetriage.report.data import Report

TOP_LABELS = 25


def _pyplot() -> Any:
    try:
        import matplotlib
    except ImportError:
        raise UserError("the report's plots need matplotlib: pip install 'issuetriage[plot]'") from None
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    return plt


def close(fig: Any) -> None:
    _pyplot().close(fig)


def figures(report: Report) -> dict[str, Any]:
    """Name → figure, for every plot that has data."""
    plt = _pyplot()
    out: dict[str, Any] = {}
    table = sorted(report.quality.per_label.items(), key=lambda kv: -(kv[1].tp + kv[1].fp + kv[1].fn))
    if table:
        top = table[:TOP_LABELS]
        fig, ax = plt.subplots(figsize=(9, 0.28 * len(top) + 1.2))
        ys = range(len(top))
        ax.barh([y + 0.2 for y in ys], [p.precision for _, p in top], 0.4, label="precision")
        ax.barh([y - 0.2 for y in ys], [p.recall for _, p in top], 0.4, label="recall")
        ax.axvline(report.target, color="grey", linestyle="--", linewidth=1, label="precision target")
        ax.set_yticks(list(ys), [name for name, _ in top], fontsize=7)
        ax.invert_yaxis()
        ax.set_xlim(0, 1)
        ax.legend(fontsize=7, loc="lower right")
        ax.set_title(f"live precision and recall, {len(top)} most frequent labels")
        out["per_label"] = fig
    if report.decisions_by_day:
        days = list(report.decisions_by_day)
        kinds = sorted({k for c in report.decisions_by_day.values() for k in c})
        fig, ax = plt.subplots(figsize=(9, 3))
        bottom = [0] * len(days)
        for kind in kinds:
            counts = [report.decisions_by_day[d][kind] for d in days]
            ax.bar(days, counts, bottom=bottom, label=kind)
            bottom = [b + c for b, c in zip(bottom, counts)]
        ax.set_title("decision mix per day")
        ax.legend(fontsize=7, ncols=3)
        ax.tick_params(axis="x", labelrotation=45, labelsize=7)
        out["decisions"] = fig
    if report.triage_days:
        fig, ax = plt.subplots(figsize=(9, 3))
        ax.hist(report.triage_days, bins=30)
        ax.set_xlabel("days from filing to the first human label or state change after the plan")
        ax.set_title("time to triage")
        out["time_to_triage"] = fig
    if report.queues:
        busiest = report.queues[:20]
        fig, ax = plt.subplots(figsize=(9, 0.28 * len(busiest) + 1.2))
        ax.barh([q["label"] for q in busiest], [q["open"] for q in busiest])
        ax.invert_yaxis()
        ax.tick_params(axis="y", labelsize=7)
        ax.set_title("open issues per queue")
        out["queues"] = fig
    return out
