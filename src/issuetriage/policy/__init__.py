"""Policy profiles: label catalog, forbidden patterns, queues, templates and rules, loaded as data.

The models and the loader live in `policy.loader`; this front imports them (and pydantic) only
when a name is used, so `from issuetriage.policy import load_profile` at the top of a command
module costs nothing until a command loads a profile (`issuetriage --help` never does).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from issuetriage.policy.loader import (
        FILES,
        BotLabels,
        Catalog,
        Families,
        Forbidden,
        LabelSpec,
        Live,
        Meta,
        Policy,
        PT2Queue,
        Queues,
        RedirectQueue,
        Redundancy,
        RedundancyPair,
        Release,
        Route,
        Rules,
        Stale,
        Template,
        Templates,
        Thresholds,
        TransferTarget,
        load_profile_dir,
        profile_problems,
    )

__all__ = ["FILES", "PROFILES_DIR", "TEMPLATE_MARKER", "BotLabels", "Catalog", "Families", "Forbidden",
           "LabelSpec", "Live", "Meta", "PT2Queue", "Policy", "Queues", "RedirectQueue", "Redundancy",
           "RedundancyPair", "Release", "Route", "Rules", "Stale", "Template", "Templates", "Thresholds",
           "TransferTarget", "load_profile", "load_profile_dir", "profile_problems"]

PROFILES_DIR = Path(__file__).parent / "profiles"
TEMPLATE_MARKER = "<!-- issuetriage:template={name} -->"


def load_profile(name_or_path: str | Path = "pytorch") -> Policy:
    """A shipped profile by name, or a profile folder by path (validated: `loader.load_profile`)."""
    from issuetriage.policy.loader import (
        load_profile as load,  # lazy: start-up: the compiled profile's fast path skips pydantic validation
    )

    return load(name_or_path)


def __getattr__(name: str) -> Any:
    """Every other name comes from `policy.loader`, imported on first use."""
    if name not in __all__:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from issuetriage.policy import loader  # lazy: start-up: the compiled profile's fast path skips pydantic validation

    value = getattr(loader, name)
    globals()[name] = value
    return value
