"""Render the report as HTML through Jinja2 templates (autoescaped: issue text and label names
stay text), with matplotlib plots embedded as PNG data URIs so one file is the whole report."""

from __future__ import annotations

import base64
import io
import json
import os
import tempfile
from pathlib import Path
from typing import Any

from issuetriage.errors import UserError

try:
    from jinja2 import Environment, PackageLoader, select_autoescape
except ImportError:  # pragma: no cover - depends on the installed extras
    raise UserError("the report needs jinja2: pip install 'issuetriage[web]'") from None
from issuetriage.report import plots
from issuetriage.report.data import Report

ENV = Environment(loader=PackageLoader("issuetriage.report", "templates"),
                  autoescape=select_autoescape(default=True, default_for_string=True))


def render(report: Report, web: dict[str, Any] | None = None) -> str:
    """The report page; `web` carries the web app's extras (navigation, CSRF token)."""
    images = {name: _data_uri(fig) for name, fig in plots.figures(report).items()}
    return ENV.get_template("report.html").render(r=report, images=images, web=web)


def page(template: str, **context: Any) -> str:
    return ENV.get_template(template).render(**context)


def summary(report: Report) -> dict[str, Any]:
    """The per-label table and counts as JSON (next to the HTML, for scripts and the bench)."""
    q = report.quality
    return {"repo": report.repo, "profile": report.profile, "plans": q.plans, "acted_on": q.acted_on,
            "scored_issues": q.scored_issues, "micro": q.micro.to_json(),
            "per_label": {k: v.to_json() for k, v in q.per_label.items()},
            "per_decision": {k: v.to_json() for k, v in q.per_decision.items()},
            "per_judge": {k: v.to_json() for k, v in q.per_judge.items()},
            "demoted": sorted(report.demoted), "corrections": report.corrections}


def write(report: Report, out: Path) -> list[Path]:
    """Write index.html and report.json into `out`; each file appears whole or not at all."""
    files = {"index.html": render(report), "report.json": json.dumps(summary(report), indent=2)}
    try:
        out.mkdir(parents=True, exist_ok=True)
        written = []
        for name, text in files.items():
            fd, tmp = tempfile.mkstemp(dir=out, prefix=f".{name}.")
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                fh.write(text)
            os.chmod(tmp, 0o644)
            os.replace(tmp, out / name)
            written.append(out / name)
    except OSError as exc:
        raise UserError(f"{out}: cannot write the report ({exc.strerror or exc})") from None
    return written


def _data_uri(fig: Any) -> str:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=90, bbox_inches="tight")
    plots.close(fig)
    return "data:image/png;base64," + base64.b64encode(buf.getvalue()).decode("ascii")
