"""Frozen value objects shared by every scrub step: what we expect, what ran, what we found."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path

from issuetriage.evidence.repro import ReproSource, Stop

__all__ = ["ReproSource", "Stop"]  # picked below scrub (evidence/repro.py), used throughout it


class Outcome(StrEnum):
    """How one run of a repro compares with the failure the issue reports."""

    SAME_ERROR = "same_error"
    PASSES = "passes"
    DIFFERENT_ERROR = "different_error"
    CRASH = "crash"
    TIMEOUT = "timeout"
    ENVIRONMENT = "environment"  # failed on a missing module or file: not a reproduction either way


@dataclass(frozen=True)
class Expected:
    """The failure that proves the bug: exception class and a distinctive message substring.

    `crash` means the bug is a hard crash (segfault, abort) rather than an exception; `signal`
    narrows it when the report names one. `hang` means the bug is that the script never finishes.
    `output` is wrong output the report shows: the run must print it (and `wanted` is what the
    reporter expected instead). `chain` is the classes of the exceptions the final one was raised
    from or while handling, outermost first ("During handling of the above exception...").
    """

    exception: str | None
    substring: str = ""
    crash: bool = False
    source: str = ""  # "traceback", "warning", "assertion", "crash", "hang", "output", "first run"
    signal: int | None = None
    hang: bool = False
    output: str = ""
    wanted: str = ""
    chain: tuple[str, ...] = ()


@dataclass(frozen=True)
class Finding:
    """One safety rule that matched: the rule, the line and the code that triggered it."""

    rule: str
    line: int
    snippet: str


@dataclass(frozen=True)
class Interpreter:
    """One Python to run repros with; `pythonpath` adds library folders (a fake library in tests);
    `requirements` not yet installed (scrub.provision makes the environment on first use)."""

    label: str
    python: Path
    pythonpath: tuple[Path, ...] = ()
    requirements: tuple[str, ...] = ()


@dataclass(frozen=True)
class Limits:
    """Resource limits for one sandboxed run; memory, processes, shm and scratch are totals per run."""

    timeout_s: float = 120.0
    memory_bytes: int = 8 * 1024**3  # all the run's processes together (and each one's address space)
    cpu_s: int = 600
    file_bytes: int = 256 * 1024**2
    open_files: int = 1024
    processes: int = 512  # tasks (processes and threads) in the run's user namespace
    shm_bytes: int = 512 * 1024**2  # /dev/shm, a tmpfs of this size
    scratch_bytes: int = 2 * 1024**3  # /scratch and /tmp, tmpfs of this size each


@dataclass(frozen=True)
class RunResult:
    """What one run of a script did: exit code, signal, time and the tails of its output."""

    exit_code: int | None
    signal: int | None
    duration_s: float
    stdout: str
    stderr: str
    timed_out: bool = False
    isolation: str = "none"


@dataclass(frozen=True)
class Failure:
    """The failure a run showed, parsed from its stderr."""

    exception: str | None
    message: str
    innermost_file: str | None  # file of the innermost traceback frame
    script_line: int | None  # the innermost line of the script the failure went through
    script_lines: tuple[int, ...] = ()  # every script frame, outermost first
    chain: tuple[str, ...] = ()  # classes of the exceptions this one was raised from, outermost first


@dataclass(frozen=True)
class BisectResult:
    """Outcome per interpreter label and the first label whose outcome differs from the oldest."""

    outcomes: tuple[tuple[str, str], ...]
    first_changed: str | None
    last_same: str | None


@dataclass(frozen=True)
class MinimizeResult:
    """The minimized script and what it cost."""

    code: str
    lines: int
    oracle_calls: int
    rounds: int
    passes: tuple[str, ...] = field(default=())
    calls_by_pass: tuple[tuple[str, int], ...] = field(default=())
    runs: str = "cold"  # how candidates ran: "cold" (fresh interpreter each) or warm (fork server)
    stopped: str = ""  # why minimization stopped: a fixpoint, or the budget ran out
    seconds: float = 0.0  # wall time spent minimizing


@dataclass(frozen=True)
class Budget:
    """How much minimization may spend; it stops at a fixpoint or when either runs out."""

    oracle_calls: int = 2000
    seconds: float = 1800.0


@dataclass(frozen=True)
class Verified:
    """How a minimized script was shown to still test the reported bug, and on which releases.

    `differential`: it fails as reported on `affected` and passes on `fixed`. `stand-in`: it fails
    as reported on `affected`, and not with `packages` replaced by an empty stand-in module.
    """

    how: str  # "differential" or "stand-in"
    affected: str
    fixed: str | None = None
    packages: tuple[str, ...] = ()
