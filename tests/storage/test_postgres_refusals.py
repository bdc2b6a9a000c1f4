"""Postgres as production may run it: serializable isolation, a frozen server.

Real throwaway clusters (tests/postgres_server.py): a database whose default
isolation is ``serializable``, and a server of the test's own that is frozen
(SIGSTOP on every process of the cluster) under a connected store.
"""

from __future__ import annotations

import os
import signal
import threading
import time
from collections.abc import Iterator
from contextlib import suppress
from pathlib import Path

import pytest
from postgres_server import PostgresServer, require_postgres_bin

from flowdrop_core.conversation import ConversationBuffer
from flowdrop_core.journal import journal_for
from flowdrop_core.storage import StorageError
from flowdrop_core.storage.postgres import PostgresStore

psycopg = pytest.importorskip("psycopg", reason="psycopg is not installed (the 'postgres' extra)")


@pytest.fixture
def serializable_url(postgres_server: PostgresServer) -> Iterator[str]:
    """A fresh database whose default transaction isolation is ``serializable``."""
    if postgres_server.proc is None:
        postgres_server.start()
    with psycopg.connect(postgres_server.url, autocommit=True) as conn:
        conn.execute("DROP DATABASE IF EXISTS serial WITH (FORCE)")
        conn.execute("CREATE DATABASE serial")
        conn.execute("ALTER DATABASE serial SET default_transaction_isolation = 'serializable'")
    url = postgres_server.url.rsplit("/", 1)[0] + "/serial"
    yield url
    with psycopg.connect(postgres_server.url, autocommit=True) as conn:
        conn.execute("DROP DATABASE IF EXISTS serial WITH (FORCE)")


def test_serialization_failures_are_retried_like_any_conflict(serializable_url: str) -> None:
    """600 contended appends at serializable isolation: none raises, none is lost or doubled."""
    with psycopg.connect(serializable_url) as conn:
        assert conn.execute("SHOW transaction_isolation").fetchone() == ("serializable",)
    store = PostgresStore(serializable_url)
    store.create_tables()
    writers, per_writer, slots = 6, 100, 3
    acked: dict[int, list[str]] = {w: [] for w in range(writers)}
    errors: list[BaseException] = []
    barrier = threading.Barrier(writers)

    def work(w: int) -> None:
        buf = ConversationBuffer(store=store, journal=10_000, lock_timeout=5)
        barrier.wait()
        for n in range(per_writer):
            try:
                buf.append({"role": "user", "content": f"{w}:{n}"}, {"session_id": f"s{w % slots}"})
            except Exception as exc:  # every failure is counted
                errors.append(exc)
                continue
            acked[w].append(f"{w}:{n}")

    threads = [threading.Thread(target=work, args=(w,)) for w in range(writers)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    for s in range(slots):
        slot = ("session", f"s{s}", "chat_history")
        got = [m["content"] for m in store.get(*slot)[0]]
        want = [turn for w in range(s, writers, slots) for turn in acked[w]]
        assert sorted(got) == sorted(want) and len(set(got)) == len(got)
        for w in range(s, writers, slots):  # each writer's turns in its order
            assert [t for t in got if t.startswith(f"{w}:")] == acked[w]
        assert [r.seq for r in journal_for(store).read(slot)] == list(range(1, len(got) + 1))
    store.close()


def test_unconditional_writes_are_tried_again_at_serializable(serializable_url: str) -> None:
    """``set``/``delete`` with no condition: a serialization failure is not the caller's."""
    store = PostgresStore(serializable_url)
    store.create_tables()
    slot = ("session", "s", "chat_history")
    errors: list[BaseException] = []
    barrier = threading.Barrier(4)

    def work(w: int) -> None:
        barrier.wait()
        for n in range(40):
            try:
                if n % 10 == 9:
                    store.delete(*slot)
                else:
                    store.set(*slot, [{"role": "user", "content": f"{w}:{n}"}])
            except Exception as exc:  # every failure is counted
                errors.append(exc)

    threads = [threading.Thread(target=work, args=(w,)) for w in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    store.close()


# -- a frozen server -------------------------------------------------------------------------


@pytest.fixture
def own_server() -> Iterator[PostgresServer]:
    """A cluster of this test's own, since the test freezes it."""
    server = PostgresServer(require_postgres_bin())
    server.start()
    yield server
    for pid in _cluster_pids(server):
        with_suppressed_kill(pid, signal.SIGCONT)
    server.remove()


def with_suppressed_kill(pid: int, sig: int) -> None:
    with suppress(ProcessLookupError):
        os.kill(pid, sig)


def _cluster_pids(server: PostgresServer) -> list[int]:
    """The postmaster and every process it started (backends, background workers)."""
    if server.proc is None:
        return []
    root = server.proc.pid
    pids = [root]
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        ppid = int(stat.rsplit(")", 1)[1].split()[1])
        if ppid == root:
            pids.append(int(entry.name))
    return pids


@pytest.mark.parametrize("call", ["append", "read", "listing"])
def test_a_frozen_server_is_a_clear_error_within_a_bounded_time(
    own_server: PostgresServer, call: str
) -> None:
    """SIGSTOP on the cluster under a connected store: the call fails within its deadline.

    The worker thread connects first (each thread has its own connection), so
    the call waits on a connection the server accepted and then stopped
    answering, the case no connect timeout covers.
    """
    store = PostgresStore(own_server.url, io_timeout=1, connect_timeout=1)
    buf = ConversationBuffer(store=store, journal=10, lock_timeout=1)
    connected, frozen = threading.Event(), threading.Event()
    outcome: list[BaseException | object] = []
    took: list[float] = []

    def run() -> None:
        buf.append({"role": "user", "content": "before"}, {"session_id": "s"})
        connected.set()
        frozen.wait()
        started = time.monotonic()
        try:
            if call == "append":
                buf.append({"role": "user", "content": "frozen"}, {"session_id": "s"})
            elif call == "read":
                store.get("session", "s", "chat_history")
            else:
                store.listing()
            outcome.append("returned")
        except BaseException as exc:  # the test inspects it
            outcome.append(exc)
        took.append(time.monotonic() - started)

    worker = threading.Thread(target=run, daemon=True)
    worker.start()
    assert connected.wait(timeout=30)
    for pid in _cluster_pids(own_server):
        os.kill(pid, signal.SIGSTOP)
    frozen.set()
    worker.join(timeout=20)
    hung = worker.is_alive()
    for pid in _cluster_pids(own_server):
        os.kill(pid, signal.SIGCONT)
    worker.join(timeout=30)
    assert not hung, f"{call} still waiting after 20 s on a frozen server"
    # lock wait 1 s + io_timeout 1 s, + connect_timeout 1 s for the unserialized retry's
    # reconnect and the "did it land?" question, with slack for a loaded machine
    assert took[0] < 8, took
    (exc,) = outcome
    assert isinstance(exc, StorageError), exc
    assert "scope_id='s'" in str(exc) or call == "listing"
    assert "io_timeout=1 s" in str(exc) or "timeout expired" in str(exc), str(exc)
    # Once the server runs again, the same store works, and the frozen append is whole or absent.
    buf.append({"role": "user", "content": "after"}, {"session_id": "s"})
    got = [m["content"] for m in store.get("session", "s", "chat_history")[0]]
    assert got in (["before", "after"], ["before", "frozen", "after"])
    store.close()


@pytest.mark.parametrize("call", ["aappend", "aread"])
def test_a_frozen_server_is_a_clear_error_on_the_async_path_too(
    own_server: PostgresServer, call: str
) -> None:
    """The native async path (``psycopg.AsyncConnection``) has the same bound: a timer on
    the loop cuts the frozen connection at lock wait + ``io_timeout``, the loop keeps
    running meanwhile, and once the server runs again the same store works."""
    import asyncio

    store = PostgresStore(own_server.url, io_timeout=1, connect_timeout=1)
    assert store.native_async()
    buf = ConversationBuffer(store=store, journal=10, lock_timeout=1)
    ctx = {"session_id": "s"}
    connected, frozen = threading.Event(), threading.Event()
    outcome: list[BaseException | object] = []
    took: list[float] = []
    ticks: list[float] = []

    async def scenario() -> None:
        await buf.aappend({"role": "user", "content": "before"}, ctx)
        connected.set()
        while not frozen.is_set():
            await asyncio.sleep(0.01)

        async def tick() -> None:
            while True:
                ticks.append(time.monotonic())
                await asyncio.sleep(0.05)

        ticker = asyncio.create_task(tick())
        started = time.monotonic()
        try:
            if call == "aappend":
                await buf.aappend({"role": "user", "content": "frozen"}, ctx)
            else:
                await buf.aread(ctx)
            outcome.append("returned")
        except BaseException as exc:  # the test inspects it
            outcome.append(exc)
        took.append(time.monotonic() - started)
        ticker.cancel()

    worker = threading.Thread(target=asyncio.run, args=(scenario(),), daemon=True)
    worker.start()
    assert connected.wait(timeout=30)
    for pid in _cluster_pids(own_server):
        os.kill(pid, signal.SIGSTOP)
    frozen.set()
    worker.join(timeout=20)
    hung = worker.is_alive()
    for pid in _cluster_pids(own_server):
        os.kill(pid, signal.SIGCONT)
    worker.join(timeout=30)
    assert not hung, f"{call} still waiting after 20 s on a frozen server"
    assert took[0] < 8, took
    (exc,) = outcome
    assert isinstance(exc, StorageError), exc
    assert "scope_id='s'" in str(exc), str(exc)
    assert "io_timeout=1 s" in str(exc) or "timeout expired" in str(exc), str(exc)
    assert len(ticks) >= took[0] / 0.05 / 2, "the event loop was blocked by the frozen call"
    after = asyncio.run(buf.aappend({"role": "user", "content": "after"}, ctx))
    assert after.appended == 1
    got = [m["content"] for m in store.get("session", "s", "chat_history")[0]]
    assert got in (["before", "after"], ["before", "frozen", "after"])
    store.close()
