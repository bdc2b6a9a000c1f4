"""The async API and pooled connections, on real servers: nothing lost, order kept, bounded.

200 concurrent ``aappend`` tasks over 50 sessions on one store whose pool
holds 8 connections: every turn is stored once, each session's stored order
is the order its appends were acknowledged in, and the server never sees
more than 8 connections from this process (counted by the server itself:
``pg_stat_activity`` / ``CLIENT LIST``, polled while the tasks run).
"""

from __future__ import annotations

import asyncio
import gc
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from flowdrop_core.conversation import ConversationBuffer, ScopedAppendResult
from flowdrop_core.storage import MemoryStore, SQLiteStore, Store

SESSIONS = 50
PER_SESSION = 4
POOL = 8


def _msg(session: int, n: int) -> dict[str, Any]:
    return {"role": "user", "content": f"s{session}-turn{n}"}


async def _append_all(buf: ConversationBuffer) -> list[tuple[int, dict[str, Any], Any]]:
    """200 concurrent aappends (4 per session, all started at once); their reports."""

    async def one(session: int, n: int) -> tuple[int, dict[str, Any], ScopedAppendResult]:
        message = _msg(session, n)
        return session, message, await buf.aappend(message, {"session_id": f"s{session}"})

    return await asyncio.gather(*(one(s, n) for n in range(PER_SESSION) for s in range(SESSIONS)))


def _check(buf: ConversationBuffer, done: list[tuple[int, dict[str, Any], Any]]) -> None:
    """Every turn stored once, at the position its report gave (acknowledged order kept)."""
    assert len(done) == SESSIONS * PER_SESSION
    stored = {s: buf.messages({"session_id": f"s{s}"}) for s in range(SESSIONS)}
    for session, message, result in done:
        rows = stored[session]
        assert result.serialized and result.appended == 1
        assert rows[result.count - 1]["content"] == message["content"]
    for session, rows in stored.items():
        assert sorted(r["content"] for r in rows) == sorted(
            _msg(session, n)["content"] for n in range(PER_SESSION)
        )


class _Peak:
    """Polls ``count()`` in a thread while the block runs; ``peak`` is the most it saw."""

    def __init__(self, count: Callable[[], int]) -> None:
        self.count = count
        self.peak = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._poll, daemon=True)

    def _poll(self) -> None:
        while not self._stop.is_set():
            self.peak = max(self.peak, self.count())
            time.sleep(0.005)

    def __enter__(self) -> _Peak:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()
        self.peak = max(self.peak, self.count())


def test_postgres_pool_of_8_keeps_every_turn_in_order_within_8_connections(
    postgres_url: str,
) -> None:
    import psycopg

    from flowdrop_core.storage.postgres import PostgresStore

    name = f"fd_pool_{uuid.uuid4().hex[:8]}"
    sep = "&" if "?" in postgres_url else "?"
    store = PostgresStore(f"{postgres_url}{sep}application_name={name}", pool_size=POOL)
    buf = ConversationBuffer(store=store, lock_timeout=30.0)
    with psycopg.connect(postgres_url, autocommit=True) as watcher:

        def count() -> int:
            row = watcher.execute(
                "SELECT count(*) FROM pg_stat_activity WHERE application_name = %s", (name,)
            ).fetchone()
            assert row is not None
            return int(row[0])

        try:
            with _Peak(count) as peak:
                done = asyncio.run(_append_all(buf))
            _check(buf, done)
        finally:
            store.close()
    assert 1 < peak.peak <= POOL, peak.peak


def test_redis_pool_of_8_keeps_every_turn_in_order_within_8_connections(redis_url: str) -> None:
    import redis

    from flowdrop_core.storage.redis_store import RedisStore

    name = f"fd_pool_{uuid.uuid4().hex[:8]}"
    sep = "&" if "?" in redis_url else "?"
    store = RedisStore(f"{redis_url}{sep}client_name={name}", max_connections=POOL)
    buf = ConversationBuffer(store=store, lock_timeout=30.0)
    watcher = redis.Redis.from_url(redis_url)

    def count() -> int:
        clients: Any = watcher.client_list()
        return sum(1 for c in clients if c.get("name") == name)

    try:
        with _Peak(count) as peak:
            done = asyncio.run(_append_all(buf))
        _check(buf, done)
    finally:
        store.close()
        watcher.close()
    assert 1 < peak.peak <= POOL, peak.peak


def test_redis_takes_the_callers_client(redis_url: str) -> None:
    import redis

    from flowdrop_core.storage.redis_store import RedisStore

    client = redis.Redis.from_url(redis_url)
    store = RedisStore(client=client)
    assert store.client is client
    buf = ConversationBuffer(store=store)
    asyncio.run(buf.aappend({"role": "user", "content": "hi"}, {"session_id": "c"}))
    assert client.keys(f"{store.namespace}:*")  # written through the caller's client
    store.close()
    assert client.ping()  # the caller's client stays the caller's: not closed by the store
    client.close()


def test_postgres_takes_the_callers_connection(postgres_url: str) -> None:
    import psycopg

    from flowdrop_core.storage.postgres import PostgresStore

    with psycopg.connect(postgres_url, autocommit=True) as conn:
        pid = conn.info.backend_pid
        store = PostgresStore(connection=conn)
        buf = ConversationBuffer(store=store, lock_timeout=30.0)

        async def run() -> None:
            await asyncio.gather(
                *(buf.aappend(_msg(s, 0), {"session_id": f"s{s}"}) for s in range(20))
            )

        asyncio.run(run())
        assert [len(buf.messages({"session_id": f"s{s}"})) for s in range(20)] == [1] * 20
        store.close()
        assert not conn.closed and conn.info.backend_pid == pid  # never closed, never replaced


def test_postgres_takes_the_callers_pool(postgres_url: str) -> None:
    import psycopg_pool

    from flowdrop_core.storage.postgres import PostgresStore

    with psycopg_pool.ConnectionPool(postgres_url, min_size=1, max_size=3, open=True) as pool:
        store = PostgresStore(pool=pool)
        buf = ConversationBuffer(store=store, lock_timeout=30.0)

        async def run() -> None:
            await asyncio.gather(
                *(buf.aappend(_msg(s, 0), {"session_id": f"s{s}"}) for s in range(20))
            )

        asyncio.run(run())
        assert [len(buf.messages({"session_id": f"s{s}"})) for s in range(20)] == [1] * 20
        assert pool.get_stats()["pool_size"] <= 3


def test_a_pool_size_must_be_positive() -> None:
    from flowdrop_core.storage.postgres import PostgresStore

    with pytest.raises(ValueError, match="pool_size"):
        PostgresStore("postgresql://u@127.0.0.1/db", pool_size=0)


@pytest.fixture(params=["memory", "sqlite"])
def local_store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Store]:
    if request.param == "memory":
        yield MemoryStore()
    else:
        s = SQLiteStore(tmp_path / "buffers.sqlite3")
        yield s
        s.close()


def test_aappend_and_aread_match_the_sync_path(local_store: Store) -> None:
    """The same report, journal and stored rows as ``append`` / ``read``."""
    sync = ConversationBuffer(store=local_store, key="sync", journal=10, max_messages=3)
    asy = ConversationBuffer(store=local_store, key="async", journal=10, max_messages=3)
    turns: list[Any] = [
        {"role": "user", "content": "q"},
        {"role": "assistant", "content": "", "tool_calls": [{"id": "c1", "name": "f"}]},
        {"role": "user", "content": "next"},  # heals c1 (MEM-3)
        {"role": "tool", "tool_call_id": "c1", "content": "late"},  # replaces it (MEM-10)
        {"role": "tool", "tool_call_id": "c1", "content": "again"},  # dropped (MEM-1)
    ]
    ctx = {"session_id": "same"}

    async def run() -> list[ScopedAppendResult]:
        return [await asy.aappend(t, ctx) for t in turns]

    got = asyncio.run(run())
    want = [sync.append(t, ctx) for t in turns]

    def shape(r: ScopedAppendResult) -> dict[str, Any]:
        d = r.to_dict()
        d.pop("key")
        return d

    assert [shape(r) for r in got] == [shape(r) for r in want]
    assert asyncio.run(asy.aread(ctx)).messages == sync.read(ctx).messages
    journal = local_store.journal_records  # type: ignore[attr-defined]
    assert len(journal("session", "same", "async")) == len(journal("session", "same", "sync"))


def test_a_refused_scope_never_reaches_the_store(caplog: pytest.LogCaptureFixture) -> None:
    class Untouchable(MemoryStore):
        def __getattribute__(self, name: str) -> Any:
            if name in {"read", "apply", "lock", "revision", "apply_live"}:
                raise AssertionError(f"store.{name} called under a refused scope")
            return super().__getattribute__(name)

    buf = ConversationBuffer(scope="user", store=Untouchable())
    result = asyncio.run(buf.aappend({"role": "user", "content": "x"}, {"user_id": ""}))
    assert result.refused and result.count == 0
    assert asyncio.run(buf.aread({"user_id": ""})).refused


@pytest.mark.parametrize("backend", ["sqlite", "postgres", "redis"])
def test_the_event_loop_keeps_ticking_while_100_tasks_append(
    backend: str, request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    """A 10 ms heartbeat never stalls past 100 ms while 100 tasks append 5 turns each."""
    store: Any
    if backend == "sqlite":
        store = SQLiteStore(tmp_path / "b.sqlite3")
    elif backend == "postgres":
        from flowdrop_core.storage.postgres import PostgresStore

        store = PostgresStore(request.getfixturevalue("postgres_url"), pool_size=POOL)
    else:
        from flowdrop_core.storage.redis_store import RedisStore

        store = RedisStore(request.getfixturevalue("redis_url"), max_connections=POOL)
    buf = ConversationBuffer(store=store, lock_timeout=30.0)

    async def run() -> float:
        gaps: list[float] = []
        stop = asyncio.Event()

        async def heartbeat() -> None:
            last = time.perf_counter()
            while not stop.is_set():
                await asyncio.sleep(0.01)
                now = time.perf_counter()
                gaps.append(now - last)
                last = now

        async def worker(w: int) -> None:
            for n in range(5):
                await buf.aappend(_msg(w, n), {"session_id": f"w{w}"})

        # The heap a long test run has built is frozen first: a full collection of it
        # (hundreds of ms late in the suite) would stall the loop whatever the library does.
        gc.collect()
        gc.freeze()
        try:
            beat = asyncio.create_task(heartbeat())
            await asyncio.sleep(0.02)
            await asyncio.gather(*(worker(w) for w in range(100)))
            stop.set()
            await beat
        finally:
            gc.unfreeze()
        assert len(gaps) > 5  # it ran while the tasks appended
        return max(gaps)

    try:
        worst = asyncio.run(run())
        assert [len(buf.messages({"session_id": f"w{w}"})) for w in range(100)] == [5] * 100
    finally:
        store.close()
    assert worst < 0.1, f"the event loop stalled {worst * 1000:.0f} ms"


def test_postgres_32_threads_share_a_pool_of_4(postgres_url: str) -> None:
    """The sync path too: threads wait for a pooled connection instead of opening their own."""
    import psycopg

    from flowdrop_core.storage.postgres import PostgresStore

    name = f"fd_thr_{uuid.uuid4().hex[:8]}"
    sep = "&" if "?" in postgres_url else "?"
    store = PostgresStore(f"{postgres_url}{sep}application_name={name}", pool_size=4)
    buf = ConversationBuffer(store=store, lock_timeout=30.0)

    def work(t: int) -> None:
        for n in range(5):
            assert buf.append(_msg(t, n), {"session_id": f"t{t % 8}"}).serialized

    with psycopg.connect(postgres_url, autocommit=True) as watcher:

        def count() -> int:
            row = watcher.execute(
                "SELECT count(*) FROM pg_stat_activity WHERE application_name = %s", (name,)
            ).fetchone()
            assert row is not None
            return int(row[0])

        try:
            with _Peak(count) as peak:
                threads = [threading.Thread(target=work, args=(t,)) for t in range(32)]
                for thread in threads:
                    thread.start()
                for thread in threads:
                    thread.join()
            assert sum(len(buf.messages({"session_id": f"t{s}"})) for s in range(8)) == 160
        finally:
            store.close()
    assert 1 < peak.peak <= 4, peak.peak


def test_postgres_connections_of_ended_event_loops_are_closed(postgres_url: str) -> None:
    """Each ``asyncio.run`` gets its own pool; as its loop ends its connections close, so
    five runs on one store never leave more than one pool's connections on the server."""
    import psycopg

    from flowdrop_core.storage.postgres import PostgresStore

    name = f"fd_loops_{uuid.uuid4().hex[:8]}"
    sep = "&" if "?" in postgres_url else "?"
    store = PostgresStore(f"{postgres_url}{sep}application_name={name}", pool_size=4)
    buf = ConversationBuffer(store=store)

    async def burst(run: int) -> None:
        await asyncio.gather(
            *(
                buf.aappend({"role": "user", "content": f"{run}-{s}"}, {"session_id": f"s{s}"})
                for s in range(8)
            )
        )

    with psycopg.connect(postgres_url, autocommit=True) as watcher:

        def count() -> int:
            row = watcher.execute(
                "SELECT count(*) FROM pg_stat_activity WHERE application_name = %s", (name,)
            ).fetchone()
            assert row is not None
            return int(row[0])

        try:
            for run in range(5):
                asyncio.run(burst(run))
            deadline = time.monotonic() + 5
            while count() > 0 and time.monotonic() < deadline:
                time.sleep(0.02)  # the server notices a closed socket within moments
            assert count() == 0
            assert sorted(m["content"] for m in buf.messages({"session_id": "s3"})) == [
                f"{run}-3" for run in range(5)
            ]
        finally:
            store.close()


def test_a_task_lock_is_waited_for_within_its_timeout_behind_those_already_queued() -> None:
    """acquire_within: a free lock at once; a held lock, or a free one another task queues
    for (just released to it), is waited for in turn, and given up after the timeout."""
    from flowdrop_core.storage._base import acquire_within

    async def run() -> tuple[bool, bool, bool, bool]:
        lock = asyncio.Lock()
        first = await acquire_within(lock, 1.0)  # free
        held = await acquire_within(lock, 0.02)  # held by this task: times out
        queued = asyncio.create_task(acquire_within(lock, 1.0))
        await asyncio.sleep(0)  # the task queues for the lock
        lock.release()  # handed to the queued task, which has not run yet
        late = await acquire_within(lock, 0.03)  # must not jump the queue nor wait past 0.03 s
        got_queued = await queued
        lock.release()
        return first, held, late, got_queued

    began = time.monotonic()
    first, held, late, got_queued = asyncio.run(asyncio.wait_for(run(), 2.0))
    assert (first, held, late, got_queued) == (True, False, False, True)
    assert time.monotonic() - began < 1.0
