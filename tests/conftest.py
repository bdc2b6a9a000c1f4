"""Shared test setup: the oracle on the path, and the store fixture every storage test uses."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from postgres_server import PostgresServer, require_postgres_bin
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


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[PostgresServer]:
    """One throwaway Postgres cluster for the session (own port and folder); skips without one."""
    pytest.importorskip("psycopg", reason="psycopg is not installed (the 'postgres' extra)")
    server = PostgresServer(require_postgres_bin())
    server.start()
    yield server
    server.remove()


@pytest.fixture
def postgres_url(postgres_server: PostgresServer) -> str:
    """The session server's URL, its ``flowdrop`` schema dropped before the test."""
    import psycopg

    if postgres_server.proc is None:  # a test stopped it and failed before restarting
        postgres_server.start()
    with psycopg.connect(postgres_server.url, autocommit=True) as conn:
        conn.execute("DROP SCHEMA IF EXISTS flowdrop CASCADE")
    return postgres_server.url


@pytest.fixture(params=["memory", "sqlite", "redis", "postgres"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Store]:
    """Each backend in turn: in memory, a real SQLite file, a real Redis and Postgres server."""
    if request.param == "memory":
        yield MemoryStore()
    elif request.param == "sqlite":
        s = SQLiteStore(tmp_path / "buffers.sqlite3")
        yield s
        s.close()
    elif request.param == "redis":
        from flowdrop_core.storage.redis_store import RedisStore

        r = RedisStore(request.getfixturevalue("redis_url"))
        yield r
        r.close()
    else:
        url = request.getfixturevalue("postgres_url")
        from flowdrop_core.storage.postgres import PostgresStore

        p = PostgresStore(url)
        yield p
        p.close()
