"""Shared test setup: the oracle on the path, and the store fixture every storage test uses."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from redis_server import RedisServer, require_redis_server

from flowdrop_core.storage import MemoryStore, SQLiteStore, Store


@pytest.fixture(scope="session")
def redis_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RedisServer]:
    """One real ``redis-server`` for the session (own port and folder); skips without one."""
    server = RedisServer(require_redis_server(), tmp_path_factory.mktemp("redis"))
    server.start()
    yield server
    server.stop()


@pytest.fixture
def redis_url(redis_server: RedisServer) -> str:
    """The session server's URL, emptied before the test."""
    from flowdrop_core.storage.redis_store import RedisStore

    with RedisStore(redis_server.url) as s:
        s.client.flushdb()
    return redis_server.url


@pytest.fixture(params=["memory", "sqlite", "redis"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Store]:
    """Each backend in turn: in memory, a real SQLite file, a real Redis server."""
    if request.param == "memory":
        yield MemoryStore()
    elif request.param == "sqlite":
        s = SQLiteStore(tmp_path / "buffers.sqlite3")
        yield s
        s.close()
    else:
        from flowdrop_core.storage.redis_store import RedisStore

        r = RedisStore(request.getfixturevalue("redis_url"))
        yield r
        r.close()
