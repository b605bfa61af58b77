"""Render a scrub report as JSON, plain text, or the Markdown comment a maintainer would post."""

from __future__ import annotations

from dataclasses import asdict
from pathlib import Path
from typing import Any

from issuetriage.scrub.flow import ScrubReport
from issuetriage.scrub.model import Outcome

_TAIL = 1500


def to_json(report: ScrubReport) -> dict[str, Any]:
    """The documented JSON shape (docs/scrub.md)."""
    mini = report.minimized
    changed = mini is not None and mini.lines < report.original_lines
    return {
        "issue": report.issue,
        "stop": asdict(report.stop) if report.stop else None,
        "repro_source": ({"where": report.repro_source.where, "author": report.repro_source.author,
                          "reason": report.repro_source.reason} if report.repro_source else None),
        "expected": asdict(report.expected) if report.expected else None,
        "safety": [asdict(f) for f in report.safety],
        "blocked_rules": list(report.blocked),
        "ran": report.ran,
        "isolation": report.isolation,
        "interpreter": report.interpreter,
        "outcome": str(report.outcome) if report.outcome else None,
        "runs": [{"seed": seed, "outcome": str(outcome), "exit_code": r.exit_code, "signal": r.signal,
                  "duration_s": r.duration_s, "timed_out": r.timed_out,
                  "stdout_tail": r.stdout[-_TAIL:], "stderr_tail": r.stderr[-_TAIL:]}
                 for seed, outcome, r in report.runs],
        "same_error_ratio": _ratio(report),
        "bisect": ({"outcomes": dict(report.bisect.outcomes), "first_changed": report.bisect.first_changed,
                    "last_same": report.bisect.last_same} if report.bisect else None),
        "original_lines": report.original_lines,
        "minimized": mini.code if changed and mini else None,
        "minimized_lines": mini.lines if changed and mini else None,
        "oracle_calls": mini.oracle_calls if mini else 0,
        "minimize_passes": list(mini.passes) if mini else [],
        "minimize_runs": mini.runs if mini else None,
        "triggers": list(report.triggers),
        "comment": to_markdown(report),
    }


def _ratio(report: ScrubReport) -> str | None:
    if not report.runs:
        return None
    hits = sum(1 for _, o, _ in report.runs if o is Outcome.SAME_ERROR)
    return f"{hits}/{len(report.runs)}"


def _headline(report: ScrubReport) -> str:
    if report.stop:
        label = f" (suggested label: `{report.stop.label}`)" if report.stop.label else ""
        return f"Did not run the reproduction: {report.stop.reason}{label}."
    where = f"`{report.interpreter}`"
    exp = report.expected
    what = f"`{exp.exception}: ...{exp.substring}...`" if exp and exp.exception else "the reported crash"
    if report.outcome is Outcome.SAME_ERROR:
        return f"Still reproduces on {where} ({_ratio(report)} runs fail with {what})."
    if report.outcome is Outcome.PASSES:
        return f"No longer reproduces on {where}: the script now runs to completion."
    return f"Outcome on {where}: **{report.outcome}** (expected {what}); a human should look."


def to_markdown(report: ScrubReport) -> str:
    """The comment: still reproduces / fixed in, bisect, minimized repro only when it changed."""
    parts = [_headline(report)]
    if report.bisect and report.bisect.first_changed:
        parts.append(f"The outcome changes between `{report.bisect.last_same}` and "
                     f"`{report.bisect.first_changed}` (first version with the new outcome).")
    mini = report.minimized
    if mini is not None and mini.lines < report.original_lines:
        parts.append(f"Minimized from {report.original_lines} to {mini.lines} lines, still the same "
                     f"failure:\n\n```python\n{mini.code.rstrip()}\n```")
    if report.triggers:
        parts.append("Trigger conditions: " + "; ".join(report.triggers) + ".")
    if report.safety:
        rules = ", ".join(sorted({f.rule for f in report.safety}))
        parts.append(f"Safety review findings: {rules} (see the JSON report for lines).")
    if report.ran:
        parts.append(f"<sub>Ran in isolation: {report.isolation}.</sub>")
    return "\n\n".join(parts) + "\n"


def to_text(report: ScrubReport) -> str:
    data = to_json(report)
    lines = [f"issue: {data['issue']}"]
    for key in ("stop", "repro_source", "expected", "blocked_rules", "ran", "isolation", "interpreter",
                "outcome", "same_error_ratio", "bisect", "original_lines", "minimized_lines",
                "oracle_calls", "minimize_runs", "triggers"):
        lines.append(f"{key}: {data[key]}")
    lines += [f"safety: {f['rule']} line {f['line']}: {f['snippet']}" for f in data["safety"]]
    if data["minimized"]:
        lines += ["minimized:", data["minimized"].rstrip()]
    return "\n".join(lines) + "\n"


def save(report: ScrubReport, folder: Path) -> list[Path]:
    """Write original.py, minimized.py (when it changed) and report.json side by side."""
    import json

    from issuetriage.errors import UserError

    data = to_json(report)
    files = {"original.py": report.script, "minimized.py": data["minimized"],
             "report.json": json.dumps(data, indent=2) + "\n"}
    written = []
    try:
        folder.mkdir(parents=True, exist_ok=True)
        for name, text in files.items():
            if text:
                written.append(folder / name)
                written[-1].write_text(text, encoding="utf-8")
    except OSError as exc:
        raise UserError(f"--out {folder}: cannot write the report ({exc.strerror or exc})") from None
    return written
