"""What every browser test module shares: one Chromium per module (see ``serving.py``)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from serving import chromium


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    """Debian's Chromium driven by Playwright, started once for the module's tests."""
    with chromium() as browser:
        yield browser
