"""Session fixtures: the shipped policy and the shared dev data (skipped when absent)."""

from __future__ import annotations

from pathlib import Path

import pytest

from builders import SHARED
from issuetriage.policy import Policy, load_profile


@pytest.fixture(scope="session")
def policy() -> Policy:
    return load_profile("pytorch")


@pytest.fixture(scope="session")
def dev_data() -> Path:
    path = SHARED / "data" / "pytorch-issues-dev.jsonl"
    if not path.exists():
        pytest.skip("../shared/data is not present")
    return path
