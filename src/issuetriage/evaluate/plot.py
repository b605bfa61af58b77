"""The precision/coverage curve as a PNG (matplotlib is the optional `plot` extra)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from issuetriage.errors import UserError


def save_curve(report: dict[str, Any], path: str | Path) -> Path:
    """Draw precision, recall and coverage against the confidence threshold."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        raise UserError("--plot needs matplotlib: pip install 'issuetriage[plot]'") from None
    points = report["curve"]
    xs = [p["threshold"] for p in points]
    fig, ax = plt.subplots(figsize=(6, 4))
    for key in ("precision", "recall", "coverage"):
        ax.plot(xs, [p[key] for p in points], marker=".", label=key)
    ax.set_xlabel("confidence threshold")
    ax.set_ylim(0, 1.02)
    ax.set_title(f"{report['judge']} judge, {report['labelled_issues']} labelled issues")
    ax.grid(alpha=0.3)
    ax.legend()
    out = Path(path)
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        fig.savefig(out, dpi=100, bbox_inches="tight")
    except (OSError, ValueError) as exc:  # ValueError: an image format matplotlib does not know
        raise UserError(f"--plot {out}: cannot save the curve ({exc})") from None
    finally:
        plt.close(fig)
    return out
