"""Builders for scrub tests: issues with code blocks, and a fake library with versions."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from builders import scrub_issue as make_issue  # noqa: F401 - the one issue builder, with scrub defaults
from issuetriage.scrub.model import Interpreter
from issuetriage.scrub.sandbox import isolation_mode

FENCE = "```"

needs_sandbox = pytest.mark.skipif(isolation_mode() is None, reason="bwrap does not work here")


def block(code: str, info: str = "python") -> str:
    return f"{FENCE}{info}\n{code.strip()}\n{FENCE}\n"


# A library whose `combine` breaks in versions below 2.0 and is fixed from 2.0 on.
FAKE_LIB = '''
VERSION = {version!r}

def combine(a, b):
    if VERSION < "2.0" and len(a) != len(b):
        raise ValueError(f"combine: length mismatch between operands ({{len(a)}} vs {{len(b)}})")
    return [x + y for x, y in zip(a, b)]
'''


def fake_library(root: Path, version: str) -> Interpreter:
    """An interpreter label `fakelib-VERSION` whose PYTHONPATH holds that version of fakelib."""
    folder = root / f"fakelib-{version}"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "fakelib.py").write_text(FAKE_LIB.format(version=version))
    return Interpreter(f"fakelib-{version}", Path(sys.executable), (folder,))
