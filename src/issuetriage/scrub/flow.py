"""The scrub library API: pick, screen, expect, review, run, bisect, minimize, report.

Decide-then-act: every step before the run is pure; the only side effects are the runs,
made through one `Runner` seam (the sandbox by default, a fake in tests).
"""

from __future__ import annotations

import contextlib
import shutil
import statistics
import sys
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path

from issuetriage.evidence.repro import blocks_after_prose, pick_repro
from issuetriage.models import Issue
from issuetriage.scrub import astedit
from issuetriage.scrub.actionable import screen
from issuetriage.scrub.bisect import bisect, probe_label
from issuetriage.scrub.expected import (
    add_wrong_result_assertion,
    distinctive,
    expected_from_text,
    expected_output,
    parse_failure,
    warning_filter,
)
from issuetriage.scrub.minimize import minimize
from issuetriage.scrub.model import (
    BisectResult,
    Budget,
    Expected,
    Finding,
    Interpreter,
    Limits,
    MinimizeResult,
    Outcome,
    ReproSource,
    RunResult,
    Stop,
    Verified,
)
from issuetriage.scrub.outcome import Oracle, classify, environmental, in_library
from issuetriage.scrub.provision import Provisioner
from issuetriage.scrub.safety import review
from issuetriage.scrub.sandbox import SCRIPT, run_script
from issuetriage.scrub.standin import package_under_test, stand_in, stand_in_folder
from issuetriage.scrub.warm import WarmRunner, imported_modules

Runner = Callable[[str, Interpreter, Limits, int], RunResult]


@dataclass(frozen=True)
class Options:
    """How to scrub: interpreters (oldest first; the newest is checked), allowed rules, limits."""

    interpreters: tuple[Interpreter, ...] = ()
    allow: frozenset[str] = frozenset()
    isolation: str | None = "auto"
    limits: Limits = Limits()
    runs: int = 3
    minimize: bool = True
    budget: Budget = Budget()  # minimization runs to a fixpoint or until this is spent
    workers: int = 3
    have_gpu: bool = False
    warm: bool = True  # minimize through fork servers (scrub/warm.py); only with the sandbox runner
    provisioner: Provisioner | None = None  # makes environments for interpreters with requirements
    progress: Callable[[str], None] | None = None  # one line per long step (provisioning, bisect probes)


@dataclass(frozen=True)
class ScrubReport:
    """Everything scrub found out about one issue (see docs/scrub.md for the JSON shape)."""

    issue: str
    stop: Stop | None = None
    repro_source: ReproSource | None = None
    expected: Expected | None = None
    safety: tuple[Finding, ...] = ()
    blocked: tuple[str, ...] = ()
    ran: bool = False
    isolation: str | None = None
    interpreter: str | None = None
    outcome: Outcome | None = None
    runs: tuple[tuple[int, Outcome, RunResult], ...] = ()
    bisect: BisectResult | None = None
    original_lines: int = 0
    minimized: MinimizeResult | None = None
    minimized_on: str | None = None
    minimize_note: str = ""  # why minimization was skipped, or why it stopped
    verified: Verified | None = None  # how the minimized script was shown to test the bug
    script: str = ""
    triggers: tuple[str, ...] = field(default=())


def default_interpreter() -> Interpreter:
    """The running Python, labelled by its torch version when it has torch."""
    return Interpreter(probe_label(Path(sys.executable)), Path(sys.executable))


def sandbox_runner(isolation: str | None) -> Runner:
    return lambda code, interp, limits, seed: run_script(code, interp, limits, seed, isolation)


def scrub(issue: Issue, options: Options = Options(), runner: Runner | None = None) -> ScrubReport:
    """Review, re-run, bisect and minimize an issue's reproduction; never runs unsafe code."""
    if runner is not None:  # an injected runner is the only way anything runs
        options = replace(options, warm=False)
    runner = runner or sandbox_runner(options.isolation)
    report = ScrubReport(issue.ref)
    stop = screen(issue, "", options.have_gpu)  # no script yet: hardware needs are judged later
    picked = pick_repro(issue) if stop is None else stop
    if isinstance(picked, Stop):
        return replace(report, stop=picked)
    stop = screen(issue, picked.code, options.have_gpu)
    if stop is not None:
        return replace(report, stop=stop, repro_source=picked)
    script, expected = _expectation(issue, picked.code)
    findings = tuple(review(script))
    blocked = tuple(sorted({f.rule for f in findings} - options.allow)) if "all" not in options.allow else ()
    report = replace(report, repro_source=picked, expected=expected, safety=findings, blocked=blocked,
                     script=script, original_lines=astedit.count_lines(picked.code))
    if blocked:
        return replace(report, stop=Stop(f"safety review found {', '.join(blocked)}; a human must "
                                         f"read the script and pass --allow RULE", "triage review"))
    text = f"{issue.title}\n{issue.body}".lower()
    report = _run_all(report, options, runner)
    return replace(report, triggers=tuple(t for t in report.triggers if not _already_said(t, text)))


def _already_said(trigger: str, text: str) -> bool:
    return any(word in text and word in trigger.lower() for word in ("cpu", "aot_eager", "small"))


def _expectation(issue: Issue, code: str) -> tuple[str, Expected | None]:
    texts = [issue.body, *(c.body for c in issue.comments)]
    expected = expected_from_text("\n".join(texts))
    if expected is not None and (expected.exception or "").endswith("Warning"):
        return warning_filter(expected) + code, expected  # the run fails while the warning is emitted
    if expected is not None:
        return code, expected
    shown = expected_output([b for text in texts for b in blocks_after_prose(text)])
    if shown is not None:
        return code, shown
    wrong = add_wrong_result_assertion(code)
    return wrong if wrong else (code, None)


def _run_all(report: ScrubReport, options: Options, runner: Runner) -> ScrubReport:
    interps = options.interpreters or (default_interpreter(),)
    ready = _preparer(options)
    newest = ready(interps[-1])
    runs = _repeat(report.script, newest, options, runner, report.expected)
    expected = report.expected or _learned(runs[0][2])
    if expected is not report.expected:
        runs = tuple((seed, classify(r, expected), r) for seed, _, r in runs)
    outcome = Counter(o for _, o, _ in runs).most_common(1)[0][0]
    report = replace(report, ran=True, isolation=runs[0][2].isolation, interpreter=newest.label,
                     outcome=outcome, runs=runs, expected=expected)
    if len(interps) > 1:
        done = Counter[str]()

        def probe(interp: Interpreter) -> Outcome:
            result = classify(runner(report.script, ready(interp), options.limits, 0), expected)
            done["n"] += 1
            _say(options, f"bisect: {interp.label} -> {result} ({done['n']} of at most {len(interps)} probed)")
            return result
        # making an environment is the cost when versions are provisioned: probe one at a time
        parallel = 1 if any(i.requirements for i in interps) else min(3, options.workers)
        report = replace(report, bisect=bisect(interps, probe, parallel))
    failing = newest if outcome is Outcome.SAME_ERROR else _last_failing(report, interps)
    note = _skip_reason(options, outcome, expected, failing)
    if note:
        return replace(report, minimize_note=note)
    assert failing is not None and expected is not None
    _say(options, f"minimize: on {failing.label}")
    control = _control(report, interps, failing)
    return _minimized(report, ready(failing), options, runner, expected, control and ready(control))


def _preparer(options: Options) -> Callable[[Interpreter], Interpreter]:
    """Interpreters with requirements get their (cached) environment on first use."""
    made: dict[str, Interpreter] = {}

    def ready(interp: Interpreter) -> Interpreter:
        if not interp.requirements:
            return interp
        if interp.label not in made:
            _say(options, f"environment: {interp.label} ({' '.join(interp.requirements)})")
            made[interp.label] = (options.provisioner or Provisioner()).ensure(interp)
        return made[interp.label]
    return ready


def _say(options: Options, line: str) -> None:
    if options.progress is not None:
        options.progress(line)


def _last_failing(report: ScrubReport, interps: tuple[Interpreter, ...]) -> Interpreter | None:
    """The newest interpreter bisection saw fail the same way (the bug is fixed in the newest)."""
    outcomes = dict(report.bisect.outcomes) if report.bisect else {}
    same = [i for i in interps if outcomes.get(i.label) == Outcome.SAME_ERROR]
    return same[-1] if same else None


def _skip_reason(options: Options, outcome: Outcome, expected: Expected | None,
                 failing: Interpreter | None) -> str:
    if not options.minimize:
        return "skipped: --no-minimize"
    if expected is None:
        return "skipped: no expected failure to keep (the issue shows none and the run did not fail)"
    if failing is None:
        return f"skipped: the outcome is {outcome}, not the reported failure, so there is nothing to keep"
    return ""


def _repeat(code: str, interp: Interpreter, options: Options, runner: Runner,
            expected: Expected | None) -> tuple[tuple[int, Outcome, RunResult], ...]:
    """Run with seeds 0..runs-1; when outcomes disagree, run up to 5 times and keep them all."""
    done = []  # type: ignore[var-annotated]
    for seed in range(5):
        if seed >= options.runs and len({o for _, o, _ in done}) <= 1:
            break
        result = runner(code, interp, options.limits, seed)
        done.append((seed, classify(result, expected), result))
    return tuple(done)


def _learned(result: RunResult) -> Expected | None:
    """No traceback in the issue: the failure of the first run becomes the expectation (not a
    missing module or file: that is the environment, not the bug)."""
    failure = parse_failure(result.stderr, SCRIPT)
    if environmental(failure):
        return None
    if failure is None or not failure.exception:
        return Expected(None, "", crash=True, source="first run") if result.signal else None
    return Expected(failure.exception, distinctive(failure.message), source="first run", chain=failure.chain)


@dataclass(frozen=True)
class _Checks:
    """What every kept candidate is checked against besides the affected release."""

    control: Interpreter | None = None  # the fixing release (differential oracle)
    stand_in: Interpreter | None = None  # the package replaced by an empty stand-in
    names: tuple[str, ...] = ()

    def verified(self, affected: Interpreter) -> Verified | None:
        if self.control is not None:
            return Verified("differential", affected.label, self.control.label)
        if self.stand_in is not None:
            return Verified("stand-in", affected.label, packages=self.names)
        return None


def _minimized(report: ScrubReport, interp: Interpreter, options: Options, runner: Runner,
               expected: Expected, control: Interpreter | None = None) -> ScrubReport:
    """Minimize on `interp`. With a `control` (the release that fixed it) every kept candidate must
    fail there as reported and pass on the control; without one it must not fail the same way with
    the package replaced by an empty stand-in. Either way a candidate that does not test the
    package's bug cannot be kept."""
    first = report.runs[0][2]
    failure = parse_failure(first.stderr, SCRIPT)
    names = package_under_test(report.script, failure, _distribution(interp))
    folder = stand_in_folder() if control is None and names else None
    try:
        checks = _Checks(control, stand_in(interp, names, folder) if folder else None, names)
        return _minimize_checked(report, interp, options, runner, expected, checks, in_library(failure))
    finally:
        if folder is not None:
            shutil.rmtree(folder, ignore_errors=True)


def _minimize_checked(report: ScrubReport, interp: Interpreter, options: Options, runner: Runner,
                      expected: Expected, checks: _Checks, from_library: bool) -> ScrubReport:
    median = statistics.median(r.duration_s for _, _, r in report.runs)
    limits = replace(options.limits, timeout_s=min(options.limits.timeout_s, max(10.0, 5 * median)))

    # without a fix to pass on, the value the added assertion tested is held fixed too
    pin = checks.control is None and expected.source == "assertion"

    def oracle(run: Callable[[str], RunResult], control: Callable[[str], RunResult] | None,
               standing: Callable[[str], RunResult] | None) -> Oracle:
        return Oracle(run, expected, from_library, control=control, stand_in=standing,
                      stand_in_names=checks.names, original=report.script, pin=pin)

    def cold_on(other: Interpreter | None) -> Callable[[str], RunResult] | None:
        return (lambda code: runner(code, other, limits, 0)) if other is not None else None

    cold = oracle(lambda code: runner(code, interp, limits, 0), cold_on(checks.control), cold_on(checks.stand_in))
    # without a fix to pass on, only a failure raised inside the package pins the bug to its inputs
    keep_inputs = checks.control is None and not (from_library and expected.exception)
    result, spent = None, 0
    if options.warm:
        preload = imported_modules(report.script)
        with contextlib.ExitStack() as stack:
            def warm_on(other: Interpreter | None) -> WarmRunner | None:
                return (stack.enter_context(WarmRunner(other, limits, 0, options.isolation, preload, options.workers))
                        if other is not None else None)
            fast = warm_on(interp)
            assert fast is not None
            warm = oracle(fast, warm_on(checks.control), warm_on(checks.stand_in))
            result = minimize(report.script, warm, options.budget, options.workers, keep_inputs)
        spent = warm.calls
        cold.pinned = warm.pinned
        # the warm answer counts only when a fresh interpreter agrees; else minimize cold
        if result is not None and cold(result.code):
            result = replace(result, oracle_calls=spent + cold.calls,
                             runs=f"warm (fork server, {', '.join(preload) or 'nothing'} pre-imported; "
                                  f"{fast.cold_runs} fell back cold), result verified cold")
        else:
            result = None
    if result is None:
        result = minimize(report.script, cold, options.budget, options.workers, keep_inputs)
        result = result and replace(result, oracle_calls=spent + cold.calls)
    if result is None:
        return replace(report, minimize_note=_not_kept(report.script, cold, checks))
    return replace(report, minimized=result, minimized_on=interp.label, triggers=_triggers(result),
                   verified=checks.verified(interp) if result.lines < report.original_lines else None,
                   minimize_note=f"stopped: {result.stopped}; {_checked_note(checks)}")


def _checked_note(checks: _Checks) -> str:
    if checks.control is not None:
        return f"every kept candidate failed as reported and passed on {checks.control.label}"
    if checks.stand_in is not None:
        return f"every kept candidate failed differently with {', '.join(checks.names)} replaced by an empty stand-in"
    return "no fixing release or package to check candidates against: not verified"


def _not_kept(script: str, cold: Oracle, checks: _Checks) -> str:
    """Why the original script itself did not pass the minimizer's oracle."""
    if cold.failure_of(script) is None and cold.stand_in is not None and cold.same_with_stand_in(script):
        return (f"skipped: the script fails the same way with {', '.join(checks.names)} replaced by an "
                f"empty stand-in, so its failure is not shown to come from the package")
    if checks.control is not None:
        return (f"skipped: the script did not both fail as reported here and pass on {checks.control.label} "
                f"again under the minimizer's strict oracle")
    return "skipped: the script did not fail the same way again under the minimizer's strict oracle"


def _distribution(interp: Interpreter) -> str | None:
    """The package a versions-provisioned interpreter was made for (its first requirement)."""
    return interp.requirements[0] if interp.requirements else (
        interp.label.rsplit("-", 1)[0] if "-" in interp.label else None)


def _control(report: ScrubReport, interps: tuple[Interpreter, ...], failing: Interpreter) -> Interpreter | None:
    """The bisection neighbour of `failing` where the script passes (the fix, or the last good)."""
    b = report.bisect
    if b is None or failing.label not in (b.last_same, b.first_changed):
        return None
    other = b.first_changed if failing.label == b.last_same else b.last_same
    if dict(b.outcomes).get(other or "") != Outcome.PASSES:
        return None
    return next((i for i in interps if i.label == other), None)


def _triggers(result: MinimizeResult) -> tuple[str, ...]:
    """Conditions the minimizer proved do not matter, phrased as what still triggers the bug."""
    found = []
    joined = " ".join(result.passes)
    if "simplify device" in joined:
        found.append("still fails on CPU with float32")
    if "simplify backend" in joined:
        found.append("not inductor specific: fails with backend='aot_eager'")
    if "simplify sizes" in joined:
        found.append("small sizes are enough")
    return tuple(found)
