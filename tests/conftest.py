"""Shared test setup: the oracle on the path, and the store fixture every storage test uses."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from flowdrop_core.storage import MemoryStore, SQLiteStore, Store


@pytest.fixture(params=["memory", "sqlite"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Store]:
    """Each backend in turn: the in-memory store and a real SQLite file."""
    if request.param == "memory":
        yield MemoryStore()
    else:
        s = SQLiteStore(tmp_path / "buffers.sqlite3")
        yield s
        s.close()
