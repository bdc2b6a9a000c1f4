"""The async API on a store's native async client, on real servers.

On Redis ``aappend``/``aread`` await ``redis.asyncio``, on Postgres
``psycopg.AsyncConnection``, and never reach the store's sync methods or a
worker thread; and for the same input the async
path stores exactly what the sync path stores, with the same journal and
the same MEM-14 reports (the two run the very same append steps).
"""

from __future__ import annotations

import asyncio
import json
import threading
import uuid
from collections.abc import Iterator
from typing import Any

import pytest

from flowdrop_core.conversation import ConversationBuffer, ScopedAppendResult

TURNS: list[Any] = [
    {"role": "user", "content": "q"},
    {"role": "assistant", "content": "", "tool_calls": [{"id": "c1", "name": "f"}]},
    {"role": "user", "content": "next"},  # heals c1 (MEM-3)
    {"role": "tool", "tool_call_id": "c1", "content": "late"},  # replaces it (MEM-10)
    {"role": "tool", "tool_call_id": "c1", "content": "again"},  # dropped (MEM-1)
    [{"role": "user", "content": "a"}, {"role": "assistant", "content": "b"}],
    {"role": "user", "content": "c"},  # the window (4) evicts
]


@pytest.fixture(params=["redis", "postgres"])
def native_store(request: pytest.FixtureRequest) -> Iterator[Any]:
    """A store whose async API is native, on a fresh namespace/schema of a real server."""
    store: Any
    if request.param == "redis":
        from flowdrop_core.storage.redis_store import RedisStore

        url = request.getfixturevalue("redis_url")
        store = RedisStore(url, namespace=f"n{uuid.uuid4().hex[:8]}")
    else:
        from flowdrop_core.storage.postgres import PostgresStore

        store = PostgresStore(
            request.getfixturevalue("postgres_url"), schema=f"n{uuid.uuid4().hex[:8]}"
        )
        store.create_tables()  # a new schema's tables are made once, on a worker thread
    assert store.native_async()
    yield store
    store.close()


def _record(text: Any) -> dict[str, Any]:
    """A journal record without what differs between two runs (time, revisions, key)."""
    record = json.loads(text.decode() if isinstance(text, bytes) else text)
    for field in ("at", "revision", "revision_before", "key"):
        record.pop(field, None)
    return dict(record)


def test_the_async_path_stores_what_the_sync_path_stores(native_store: Any) -> None:
    """Same reports, same stored entries, same journal records, turn by turn."""
    sync = ConversationBuffer(store=native_store, key="sync", journal=50, max_messages=4)
    asy = ConversationBuffer(store=native_store, key="async", journal=50, max_messages=4)
    ctx = {"session_id": "same"}

    async def run() -> list[ScopedAppendResult]:
        return [await asy.aappend(t, ctx) for t in TURNS]

    got = asyncio.run(run())
    want = [sync.append(t, ctx) for t in TURNS]

    def shape(r: ScopedAppendResult) -> dict[str, Any]:
        d = r.to_dict()
        d.pop("key")
        return d

    assert [shape(r) for r in got] == [shape(r) for r in want]
    stored = native_store.read("session", "same", "sync")
    assert native_store.read("session", "same", "async").value == stored.value
    assert asyncio.run(asy.aread(ctx)).messages == stored.value
    records = native_store.journal_records
    assert [(seq, _record(t)) for seq, t in records("session", "same", "async")] == [
        (seq, _record(t)) for seq, t in records("session", "same", "sync")
    ]
    assert len(records("session", "same", "sync")) == len(TURNS)


def test_the_native_path_uses_no_sync_call_and_no_thread(
    native_store: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``aappend``/``aread`` under contention never call the sync store nor start a thread."""
    sync_calls: list[str] = []
    for name in ("apply", "read", "revision", "lock", "journal_last", "set"):
        original = getattr(native_store, name)

        def refuse(*args: Any, _name: str = name, _original: Any = original, **kw: Any) -> Any:
            sync_calls.append(_name)
            return _original(*args, **kw)

        setattr(native_store, name, refuse)
    buf = ConversationBuffer(store=native_store, journal=5)
    started: list[str] = []
    start = threading.Thread.start

    def watched(thread: threading.Thread) -> None:
        started.append(thread.name)
        start(thread)

    monkeypatch.setattr(threading.Thread, "start", watched)

    async def run() -> list[list[dict[str, Any]]]:
        await asyncio.gather(
            *(
                buf.aappend({"role": "user", "content": f"{s}-{n}"}, {"session_id": f"s{s}"})
                for n in range(3)
                for s in range(10)
            )
        )
        return [await buf.amessages({"session_id": f"s{s}"}) for s in range(10)]

    rows = asyncio.run(run())
    assert [sorted(r["content"] for r in got) for got in rows] == [
        [f"{s}-{n}" for n in range(3)] for s in range(10)
    ]
    assert sync_calls == []
    assert started == []


def test_a_lease_held_elsewhere_is_waited_for_then_given_up_unserialized(
    native_store: Any, caplog: pytest.LogCaptureFixture
) -> None:
    """The lease is taken with the write: one held by another writer is still MEM-12's lock.

    Held past ``lock_timeout``, the append lands unserialized (event and warning);
    released within it, the append waits for it and runs serialized. Nothing is lost.
    """
    import logging
    import time

    from flowdrop_core.events import EventKind

    held, release = threading.Event(), threading.Event()

    def holder() -> None:
        with native_store.lock("session", "h", "chat_history", 5.0) as got:
            assert got
            held.set()
            release.wait(10)

    ctx = {"session_id": "h"}
    thread = threading.Thread(target=holder)
    thread.start()
    try:
        assert held.wait(10)
        short = ConversationBuffer(store=native_store, lock_timeout=0.2, journal=5)
        with caplog.at_level(logging.WARNING, logger="flowdrop_core"):
            res = asyncio.run(short.aappend({"role": "user", "content": "while held"}, ctx))
        assert res.serialized is False and res.appended == 1
        assert (res.events[0].kind, res.events[0].rule) == (EventKind.UNSERIALIZED, "MEM-12")
        assert any("MEM-12" in r.getMessage() for r in caplog.records)
        patient = ConversationBuffer(store=native_store, lock_timeout=10.0)

        async def after_release() -> ScopedAppendResult:
            task = asyncio.create_task(patient.aappend({"role": "user", "content": "after"}, ctx))
            await asyncio.sleep(0.3)
            assert not task.done()  # waiting for the lease
            release.set()
            return await task

        start = time.monotonic()
        res = asyncio.run(after_release())
        assert res.serialized is True and time.monotonic() - start < 5
    finally:
        release.set()
        thread.join()
    assert [m["content"] for m in native_store.read("session", "h", "chat_history").value] == [
        "while held",
        "after",
    ]
    record = json.loads(native_store.journal_records("session", "h", "chat_history")[-1][1])
    assert record["serialized"] is False  # the journal says what the report says


def _named_store(redis_url: str, connections: int) -> tuple[Any, Any]:
    """A Redis store whose connections carry a fresh client name, and a count of them."""
    import redis

    from flowdrop_core.storage.redis_store import RedisStore

    name = f"fd_loops_{uuid.uuid4().hex[:8]}"
    store = RedisStore(f"{redis_url}?client_name={name}", max_connections=connections)

    def count() -> int:
        with redis.Redis.from_url(redis_url) as watcher:
            clients: Any = watcher.client_list()
        return sum(1 for c in clients if c.get("name") == name)

    return store, count


async def _ten_appends(buf: ConversationBuffer, run: int) -> None:
    """Ten concurrent appends, one per session."""
    await asyncio.gather(
        *(
            buf.aappend({"role": "user", "content": f"{run}"}, {"session_id": f"s{s}"})
            for s in range(10)
        )
    )


def test_an_event_loop_s_connections_end_with_it(redis_url: str) -> None:
    """``asyncio.run`` after ``asyncio.run`` on one store: a finished loop's pool is closed.

    The async pool is per event loop; a loop that has ended can never use it again, so
    it must not stay open: the process stays within ``max_connections`` however many
    loops appended.
    """
    store, count = _named_store(redis_url, 4)
    buf = ConversationBuffer(store=store)
    try:
        for run in range(5):
            asyncio.run(_ten_appends(buf, run))
            assert count() == 0, run  # closed as the loop ended, not later
        assert [len(buf.messages({"session_id": f"s{s}"})) for s in range(10)] == [5] * 10
    finally:
        store.close()


def test_a_loop_closed_by_hand_does_not_keep_its_connections(redis_url: str) -> None:
    """A loop closed without ``shutdown_asyncgens``: its pool is let go when the next loop opens one."""
    import gc
    import time
    import warnings

    store, count = _named_store(redis_url, 4)
    buf = ConversationBuffer(store=store)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ResourceWarning)  # sockets closed by the collector
            for run in range(5):
                loop = asyncio.new_event_loop()
                loop.run_until_complete(_ten_appends(buf, run))
                loop.close()
            gc.collect()
            deadline = time.monotonic() + 5
            while count() > 4 and time.monotonic() < deadline:
                time.sleep(0.01)
        assert count() <= 4
    finally:
        store.close()


def test_aclose_closes_the_loop_s_connections(redis_url: str) -> None:
    """``await store.aclose()`` closes this loop's pool, not only its lease connection."""
    store, count = _named_store(redis_url, 4)
    buf = ConversationBuffer(store=store)

    async def run() -> tuple[int, int]:
        await _ten_appends(buf, 0)
        opened = count()
        await store.aclose()
        return opened, count()

    try:
        opened, left = asyncio.run(run())
    finally:
        store.close()
    assert opened > 1 and left == 0, (opened, left)
