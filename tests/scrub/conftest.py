"""Fixtures for scrub tests (helpers live in scrub_helpers)."""

from __future__ import annotations

from pathlib import Path

import pytest
from scrub_helpers import fake_library

from issuetriage.scrub.model import Interpreter


@pytest.fixture
def fakelib(tmp_path: Path) -> Interpreter:
    return fake_library(tmp_path, "1.4")
