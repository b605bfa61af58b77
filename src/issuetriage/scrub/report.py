"""Render a scrub report as JSON, plain text, or the Markdown comment a maintainer would post."""

from __future__ import annotations

from dataclasses import asdict
from pathlib import Path
from typing import Any

from issuetriage.errors import UserError
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
        "minimize_calls_by_pass": dict(mini.calls_by_pass) if mini else {},
        "minimized_on": report.minimized_on,
        "minimize_verified": asdict(report.verified) if report.verified else None,
        "minimize_seconds": mini.seconds if mini else None,
        "minimize_note": report.minimize_note,
        "verdict": verdict(report),
        "exit_code": exit_code(report),
        "triggers": list(report.triggers),
        "comment": to_markdown(report),
    }


def _ratio(report: ScrubReport) -> str | None:
    if not report.runs:
        return None
    hits = sum(1 for _, o, _ in report.runs if o is Outcome.SAME_ERROR)
    return f"{hits}/{len(report.runs)}"


EXIT_CODES = {"reproduced": 0, "not reproduced": 1, "different error": 3, "environment": 4,
              "blocked": 5, "not run": 6}  # 2 is a usage error (bad input), raised before a report exists


def verdict(report: ScrubReport) -> str:
    """One of EXIT_CODES' keys: what a script calling scrub needs to branch on."""
    if report.blocked:
        return "blocked"
    if report.stop or report.outcome is None:
        return "not run"
    return {Outcome.SAME_ERROR: "reproduced", Outcome.PASSES: "not reproduced",
            Outcome.ENVIRONMENT: "environment"}.get(report.outcome, "different error")


def exit_code(report: ScrubReport) -> int:
    """The documented exit code of `issuetriage scrub` for this report (docs/scrub.md)."""
    return EXIT_CODES[verdict(report)]


def _what(report: ScrubReport) -> str:
    exp = report.expected
    if exp is None:
        return "no expected failure"
    if exp.exception:
        return f"`{exp.exception}: ...{exp.substring}...`"
    if exp.hang:
        return "the reported hang (no exit within the time limit)"
    if exp.output:
        return f"the reported wrong output `{exp.output[:80]}`"
    return f"the reported crash{f' (signal {exp.signal})' if exp.signal else ''}"


def _headline(report: ScrubReport) -> str:
    if report.stop:
        label = f" (suggested label: `{report.stop.label}`)" if report.stop.label else ""
        return f"Did not run the reproduction: {report.stop.reason}{label}."
    where = f"`{report.interpreter}`"
    if report.outcome is Outcome.SAME_ERROR:
        return f"Still reproduces on {where} ({_ratio(report)} runs show {_what(report)})."
    if report.outcome is Outcome.PASSES:
        return f"No longer reproduces on {where}: the script now runs to completion."
    if report.outcome is Outcome.ENVIRONMENT:
        failure = _last_error_line(report)
        return (f"Could not check on {where}: the run needs a module or file that is not there "
                f"({failure}). This is an environment problem, not a reproduction.")
    return (f"Outcome on {where}: **{report.outcome}**, not {_what(report)}; this does not show "
            f"the reported bug, a human should look.")


def _last_error_line(report: ScrubReport) -> str:
    lines = [line for line in report.runs[0][2].stderr.splitlines() if line.strip()] if report.runs else []
    return f"`{lines[-1].strip()[:120]}`" if lines else "no error output"


def _bisect_sentence(report: ScrubReport) -> str | None:
    b = report.bisect
    if b is None or not b.first_changed:
        return None
    outcomes = dict(b.outcomes)
    before, after = outcomes.get(b.last_same or ""), outcomes.get(b.first_changed)
    if before == Outcome.SAME_ERROR and after == Outcome.PASSES:
        return f"Fixed in `{b.first_changed}` (last affected: `{b.last_same}`)."
    if before == Outcome.PASSES and after == Outcome.SAME_ERROR:
        return f"Introduced in `{b.first_changed}` (last good: `{b.last_same}`)."
    return (f"The outcome changes from {before} to {after} between `{b.last_same}` and "
            f"`{b.first_changed}` (first version with the new outcome).")


def _checked_on(report: ScrubReport) -> str:
    """Where the minimized script was checked, in words (only verified scripts are posted)."""
    v = report.verified
    assert v is not None
    if v.how == "differential":
        return f"it still fails as reported on `{v.affected}` and passes on `{v.fixed}`"
    packages = ", ".join(f"`{p}`" for p in v.packages)
    return (f"it still fails as reported on `{v.affected}`, and not with {packages} replaced by an "
            f"empty stand-in module")


def to_markdown(report: ScrubReport) -> str:
    """The comment: still reproduces / fixed in, bisect, and the minimized repro only when it is
    shorter and verified (differential oracle or stand-in check) with the releases it was checked
    on; otherwise only the original script's verdict."""
    parts = [_headline(report)]
    sentence = _bisect_sentence(report)
    if sentence:
        parts.append(sentence)
    mini = report.minimized
    if mini is not None and mini.lines < report.original_lines and report.verified is not None:
        parts.append(f"Minimized from {report.original_lines} to {mini.lines} lines; {_checked_on(report)}:"
                     f"\n\n```python\n{mini.code.rstrip()}\n```")
    if report.triggers and report.verified is not None:
        parts.append("Trigger conditions: " + "; ".join(report.triggers) + ".")
    if report.safety:
        rules = ", ".join(sorted({f.rule for f in report.safety}))
        parts.append(f"Safety review findings: {rules} (see the JSON report for lines).")
    if report.ran:
        parts.append(f"<sub>Ran in isolation: {report.isolation}.</sub>")
    return "\n\n".join(parts) + "\n"


def to_text(report: ScrubReport) -> str:
    """For a person at a terminal: the verdict, then what ran, what changed, and why it stopped."""
    data = to_json(report)
    lines = [f"{report.issue}: {data['verdict']} (exit {data['exit_code']})", f"  {_headline(report)}"]
    if report.repro_source:
        lines.append(f"  repro: {report.repro_source.where} by {report.repro_source.author} "
                     f"({report.repro_source.reason}), {report.original_lines} lines")
    if report.expected:
        lines.append(f"  expected: {_what(report).strip('`')} (from {report.expected.source})")
    lines += [f"  safety: {f.rule} at line {f.line}: {f.snippet}"
              + ("" if f.rule in report.blocked else " (allowed)") for f in report.safety]
    if report.ran:
        lines.append(f"  ran: {report.interpreter}, isolation {report.isolation}, "
                     f"{data['same_error_ratio']} runs show the reported failure")
    if report.bisect:
        lines.append("  bisect: " + ", ".join(f"{k} {v}" for k, v in report.bisect.outcomes))
        sentence = _bisect_sentence(report)
        if sentence:
            lines.append(f"  {sentence.replace('`', '')}")
    mini = report.minimized
    if mini is not None:
        lines.append(f"  minimized: {report.original_lines} -> {mini.lines} lines, {mini.oracle_calls} "
                     f"oracle calls, {mini.seconds} s, {mini.runs}")
        lines.append(f"  verified: {_checked_on(report).replace(chr(96), '')}" if report.verified else
                     "  verified: no (the comment gives the original script's verdict only)")
        lines.append(f"  passes: {', '.join(dict.fromkeys(mini.passes)) or 'none changed the script'}")
    if report.minimize_note:
        lines.append(f"  minimize: {report.minimize_note}")
    if report.triggers:
        lines.append(f"  triggers: {'; '.join(report.triggers)}")
    if data["minimized"]:
        lines += ["", data["minimized"].rstrip()]
    return "\n".join(lines) + "\n"


def save(report: ScrubReport, folder: Path) -> list[Path]:
    """Write original.py, minimized.py (when it changed) and report.json side by side."""
    import json


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
