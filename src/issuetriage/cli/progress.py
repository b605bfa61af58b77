"""Progress on a terminal (stderr), nothing otherwise: long commands say what they are doing."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

Steps = Callable[[str, int, int | None], None]  # (step, done, total: None when not known)


def on_terminal() -> bool:
    return sys.stderr.isatty()


@contextmanager
def working(what: str) -> Iterator[None]:
    """A spinner with the time elapsed while one long call runs (it reports no steps)."""
    if not on_terminal():
        yield
        return
    from rich.console import Console  # lazy: only on a terminal
    from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

    with Progress(SpinnerColumn(), TextColumn("{task.description}"), TimeElapsedColumn(),
                  console=Console(stderr=True), transient=True) as bar:
        bar.add_task(what, total=None)
        yield


@contextmanager
def steps() -> Iterator[Steps]:
    """A bar per named step, each updated with (done, total)."""
    if not on_terminal():
        yield lambda step, done, total: None
        return
    from rich.console import Console  # lazy: only on a terminal
    from rich.progress import Progress

    tasks: dict[str, Any] = {}
    with Progress(console=Console(stderr=True), transient=True) as bar:

        def update(step: str, done: int, total: int | None) -> None:
            if step not in tasks:
                tasks[step] = bar.add_task(step, total=total)
            bar.update(tasks[step], completed=done, total=total)

        yield update
