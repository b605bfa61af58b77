"""Help without the parts of rich it never uses.

typer renders help with `typer.rich_utils`, which imports two rich modules at its top for
features this app does not use: `rich.markdown` (markdown-it; only for `rich_markup_mode=
"markdown"`, and the app's mode is "rich") and `rich.traceback` (pygments and attrs; only for
pretty exceptions, which the app turns off). They are about a third of what `issuetriage --help`
costs. `load_renderer` imports `typer.rich_utils` while those two names are placeholder classes
that import the real class the moment they are called or asked for an attribute, so the help is
the same byte for byte, and so is anything typer might do with them; afterwards the real modules
import as usual.
"""

from __future__ import annotations

import importlib
import sys
import types
from typing import Any

DEFERRED = {"rich.markdown": "Markdown", "rich.traceback": "Traceback"}


class _Deferred(type):
    """A class standing for `module.name`: calling it or reading an attribute imports the real one."""

    _where: tuple[str, str]

    def _real(cls) -> Any:
        module, name = cls._where
        return getattr(importlib.import_module(module), name)

    def __call__(cls, *args: Any, **kwargs: Any) -> Any:
        return cls._real()(*args, **kwargs)

    def __getattr__(cls, attr: str) -> Any:
        return getattr(cls._real(), attr)


def wants_help(argv: list[str]) -> bool:
    """Whether typer will print help: no arguments, or -h/--help before a `--`."""
    head = argv[:argv.index("--")] if "--" in argv else argv
    return not argv or "-h" in head or "--help" in head


def load_renderer() -> None:
    """Import typer's help renderer without rich.markdown and rich.traceback (see above)."""
    if "typer.rich_utils" in sys.modules:
        return
    placed: dict[str, types.ModuleType] = {}
    for module, name in DEFERRED.items():
        if module not in sys.modules:
            stand_in = types.ModuleType(module)
            setattr(stand_in, name, _Deferred(name, (), {"_where": (module, name)}))
            sys.modules[module] = placed[module] = stand_in
    try:
        importlib.import_module("typer.rich_utils")
    finally:
        for module, stand_in in placed.items():
            if sys.modules.get(module) is stand_in:
                del sys.modules[module]
