from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from store.stores import ENGINES, store_url


@pytest.fixture(params=ENGINES)
def url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """The store's location, once per engine: every test here is part of the store's contract."""
    with store_url(request.param, tmp_path) as where:
        yield where
