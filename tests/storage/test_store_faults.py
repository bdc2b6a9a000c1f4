"""Faults on the shared backends (SQLite, Redis, Postgres): killed writers, racing writers, a stopped server.

- A writer killed with SIGKILL mid-append, 20 times, leaves whole turns and
  a journal with no gap (its records replay to the run's reports).
- 4 processes x 150 appends at ``lock_timeout`` 0 and 0.001, each caller
  retrying once on any error, store every turn exactly once in each
  writer's order, and an append that raised stored nothing.
- Postgres: 4 processes x 250 and 8 threads x 250 appends lose no turn
  (the predecessor chain), and a stopped server fails appends clearly and
  serves them again after a restart, without restarting the caller.
"""

from __future__ import annotations

import itertools
import json
import os
import random
import signal
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from concurrency_helpers import (
    LONG_WAIT,
    MARGIN,
    append_from_threads,
    check_one_chain,
    python_child,
    user,
)

from flowdrop_core.conversation import ConversationBuffer
from flowdrop_core.journal import journal_for
from flowdrop_core.journal.replay import replay_journal
from flowdrop_core.storage import SQLiteStore, StorageError, Store

CTX = {"session_id": "s1"}
SLOT = ("session", "s1", "chat_history")

#: How a child process opens the backend named by argv[1] at argv[2].
OPEN = """
import sys
def open_store(kind, target):
    if kind == "sqlite":
        from flowdrop_core.storage import SQLiteStore
        return SQLiteStore(target)
    if kind == "redis":
        from flowdrop_core.storage.redis_store import RedisStore
        return RedisStore(target)
    from flowdrop_core.storage.postgres import PostgresStore
    return PostgresStore(target)
"""


def open_store(kind: str, target: str) -> Store:
    namespace: dict[str, Any] = {}
    exec(OPEN, namespace)  # the very code the children run
    store: Store = namespace["open_store"](kind, target)
    return store


@pytest.fixture(params=["sqlite", "redis", "postgres"])
def shared(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[tuple[str, str]]:
    """A backend several processes share: ``(kind, target)``, empty."""
    if request.param == "sqlite":
        path = tmp_path / "shared.sqlite3"
        SQLiteStore(path).close()
        yield "sqlite", str(path)
    elif request.param == "redis":
        yield "redis", request.getfixturevalue("redis_url")
    else:
        yield "postgres", request.getfixturevalue("postgres_url")


# -- SIGKILL mid-append ------------------------------------------------------------------------


def _append_forever(kind: str, target: str, wid: str, started: int) -> None:
    """The forked writer: connect, say so on the pipe, then append turn + reply until killed."""
    try:
        buf = ConversationBuffer(store=open_store(kind, target), lock_timeout=30, journal=100000)
        buf.store.revision(*SLOT)  # connected
        os.write(started, b"s")
        i = 0
        while True:
            buf.append(
                [user(f"{wid}:{i}"), {"role": "assistant", "content": f"{wid}:{i} reply"}], CTX
            )
            i += 1
    finally:
        os._exit(1)  # never back into pytest in the child


def _fork_writer(kind: str, target: str, wid: str) -> int:
    """Fork a writer (no interpreter start-up: the kill lands while it appends); its pid."""
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child
        os.close(read_end)
        _append_forever(kind, target, wid, write_end)
    os.close(write_end)
    assert os.read(read_end, 1) == b"s", "the writer died before it connected"
    os.close(read_end)
    return pid


def test_writer_killed_mid_append_twenty_times(shared: tuple[str, str]) -> None:
    """SIGKILL a journaling writer 20 times: whole turns, and a journal with no gap or orphan.

    Every append writes a turn and its reply together, so a torn write shows
    as a turn without its reply; every stored append has exactly one record
    (numbered 1, 2, ... with no gap) and every record its change. After each
    kill the next append lands serialized and quickly: the dead writer's
    lock is released (SQLite, Postgres) or its Redis lease taken over, not
    sat out.
    """
    kind, target = shared
    rng = random.Random(21)
    store = open_store(kind, target)
    checker = ConversationBuffer(store=store, lock_timeout=LONG_WAIT, journal=100000)
    expected: list[str] = []
    appends = 0
    for kill in range(20):
        pid = _fork_writer(kind, target, f"w{kill}")
        time.sleep(rng.uniform(0.01, 0.15))
        os.kill(pid, signal.SIGKILL)
        _, status = os.waitpid(pid, 0)
        assert os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGKILL
        contents = [m["content"] for m in checker.messages(CTX)]
        assert contents[: len(expected)] == expected  # what was there is still there
        written = contents[len(expected) :]
        pairs = [[f"w{kill}:{i}", f"w{kill}:{i} reply"] for i in range(len(written) // 2)]
        assert written == [c for pair in pairs for c in pair]  # whole turns, in order
        start = time.monotonic()
        res = checker.append(user(f"check {kill}"), CTX)
        assert res.serialized is True and time.monotonic() - start < MARGIN / 2
        expected = [*contents, f"check {kill}"]
        appends += len(pairs) + 1
    assert appends > 20  # the writers did write between the kills (20 are the checks)
    records = journal_for(store).read(SLOT)
    assert [r.seq for r in records] == list(range(1, appends + 1))  # one record per append
    for before, after in itertools.pairwise(records):
        assert after.revision_before == before.revision  # no write outside the journal
    assert records[-1].revision == store.revision(*SLOT)
    replayed = replay_journal(records)
    assert replayed.notes == [] and replayed.check.passed
    assert replayed.timeline.buffer_after(len(replayed.timeline.steps)) == checker.messages(CTX)


# -- racing writers that retry once ------------------------------------------------------------

RETRY_ONCE = (
    OPEN
    + """
import json, os, time
from flowdrop_core.conversation import ConversationBuffer
kind, target, wid, n, go, lock_timeout = sys.argv[1:7]
buf = ConversationBuffer(store=open_store(kind, target), lock_timeout=float(lock_timeout),
                         journal=100000)
buf.store.revision("session", "s1", "chat_history")
print("ready", flush=True)
while not os.path.exists(go):
    time.sleep(0.001)
outcome = {}
for j in range(int(n)):
    turn = f"{wid}:{j}"
    for attempt in (1, 2):
        try:
            buf.append({"role": "user", "content": turn}, {"session_id": "s1"})
            outcome[turn] = "stored" if attempt == 1 else "stored on retry"
            break
        except Exception as exc:
            outcome[turn] = f"raised: {type(exc).__name__}: {exc}"
print(json.dumps(outcome), flush=True)
"""
)


@pytest.mark.parametrize("lock_timeout", [0.0, 0.001])
def test_four_processes_retrying_once_store_every_turn_once(
    shared: tuple[str, str], tmp_path: Path, lock_timeout: float
) -> None:
    """An append that raised stored nothing (its retry never duplicates), one that returned stored."""
    kind, target = shared
    procs, per_proc = 4, 150
    go = tmp_path / "go"
    children = [
        python_child(RETRY_ONCE, kind, target, f"p{p}", str(per_proc), str(go), str(lock_timeout))
        for p in range(procs)
    ]
    for c in children:
        assert c.stdout is not None and c.stdout.readline().strip() == "ready", c.stderr
    go.touch()
    outcomes: dict[str, str] = {}
    for c in children:
        out, err = c.communicate(timeout=600)
        assert c.returncode == 0, err
        outcomes.update(json.loads(out.strip().splitlines()[-1]))
    store = open_store(kind, target)
    final = [m["content"] for m in store.get(*SLOT)[0]]
    assert len(final) == len(set(final))  # no turn stored twice
    stored = {t for t, o in outcomes.items() if o.startswith("stored")}
    assert set(final) == stored  # every reported success is there, every failure is not
    for p in range(procs):  # each writer's turns in its own order
        mine = [t for t in final if t.startswith(f"p{p}:")]
        assert mine == sorted(mine, key=lambda t: int(t.split(":")[1]))
    failed = {t: o for t, o in outcomes.items() if not o.startswith("stored")}
    assert len(failed) <= procs * per_proc // 10, failed  # failures are rare and reported
    records = journal_for(store).read(SLOT)
    assert [r.seq for r in records] == list(range(1, len(final) + 1))
    assert [r.incoming[0]["content"] for r in records] == final


@pytest.mark.parametrize("lock_timeout", [0.0, 0.001])
def test_four_threads_retrying_once_on_the_memory_store(lock_timeout: float) -> None:
    """The memory store is process-local: its 4 racing writers are threads, same checks."""
    from flowdrop_core.storage import MemoryStore

    store = MemoryStore()
    buf = ConversationBuffer(store=store, lock_timeout=lock_timeout, journal=100000)
    outcomes: dict[str, str] = {}
    barrier = threading.Barrier(4)

    def work(w: int) -> None:
        barrier.wait()
        for j in range(150):
            turn = f"p{w}:{j}"
            for attempt in (1, 2):
                try:
                    buf.append(user(turn), CTX)
                    outcomes[turn] = "stored" if attempt == 1 else "stored on retry"
                    break
                except StorageError as exc:
                    outcomes[turn] = f"raised: {exc}"

    workers = [threading.Thread(target=work, args=(w,)) for w in range(4)]
    for t in workers:
        t.start()
    for t in workers:
        t.join()
    final = [m["content"] for m in store.get(*SLOT)[0]]
    assert sorted(final) == sorted(t for t, o in outcomes.items() if o.startswith("stored"))
    assert len(final) == len(set(final)) == 600
    for w in range(4):
        assert [t for t in final if t.startswith(f"p{w}:")] == [f"p{w}:{j}" for j in range(150)]
    records = journal_for(store).read(SLOT)
    assert [r.incoming[0]["content"] for r in records] == final


# -- Postgres: no lost turn --------------------------------------------------------------------

CHAIN_WORKER = (
    OPEN
    + """
import json, os, time
from flowdrop_core.conversation import ConversationBuffer
kind, target, wid, n, go = sys.argv[1:6]
buf = ConversationBuffer(store=open_store(kind, target), lock_timeout=30)
buf.store.revision("session", "s1", "chat_history")
print("ready", flush=True)
while not os.path.exists(go):
    time.sleep(0.001)
links, unserialized = {}, 0
for j in range(int(n)):
    res = buf.append({"role": "user", "content": f"{wid}:{j}"}, {"session_id": "s1"})
    msgs = res.messages
    links[msgs[-1]["content"]] = msgs[-2]["content"] if len(msgs) > 1 else None
    unserialized += not res.serialized
print(json.dumps({"links": links, "unserialized": unserialized}), flush=True)
"""
)


def test_postgres_four_processes_lose_no_turn(postgres_url: str, tmp_path: Path) -> None:
    procs, per_proc = 4, 250
    go = tmp_path / "go"
    children = [
        python_child(CHAIN_WORKER, "postgres", postgres_url, str(p), str(per_proc), str(go))
        for p in range(procs)
    ]
    for c in children:
        assert c.stdout is not None and c.stdout.readline().strip() == "ready", c.stderr
    go.touch()
    links: dict[str, str | None] = {}
    for c in children:
        out, err = c.communicate(timeout=600)
        assert c.returncode == 0, err
        report = json.loads(out.strip().splitlines()[-1])
        assert report["unserialized"] == 0
        links.update(report["links"])
    final = [m["content"] for m in open_store("postgres", postgres_url).get(*SLOT)[0]]
    check_one_chain(links, final, procs, per_proc)


def test_postgres_eight_threads_lose_no_turn(postgres_url: str) -> None:
    threads, per_thread = 8, 250
    buf = ConversationBuffer(store=open_store("postgres", postgres_url), lock_timeout=30)
    run = append_from_threads(buf, CTX, threads, per_thread)
    assert run.unserialized == 0
    check_one_chain(run.links, [m["content"] for m in buf.messages(CTX)], threads, per_thread)


def test_postgres_stopped_mid_run_fails_clearly_and_recovers(
    postgres_url: str, postgres_server: Any
) -> None:
    """Appends while the server is down raise a StorageError naming the slot; nothing half-written."""
    buf = ConversationBuffer(store=open_store("postgres", postgres_url), journal=100)
    for n in range(5):
        buf.append(user(f"before {n}"), CTX)
    postgres_server.stop()
    try:
        for n in range(3):
            with pytest.raises(StorageError) as err:
                buf.append(user(f"while down {n}"), CTX)
            text = str(err.value)
            assert "Postgres" in text and "scope_id='s1'" in text, text
            assert "@" not in text.split("Postgres", 1)[1].split(" ", 2)[1]  # no credentials
    finally:
        postgres_server.start()
    for n in range(5):  # the same buffer and store: the connection is made again
        buf.append(user(f"after {n}"), CTX)
    contents = [m["content"] for m in buf.messages(CTX)]
    assert contents == [f"before {n}" for n in range(5)] + [f"after {n}" for n in range(5)]
    records = journal_for(buf.store).read(SLOT)
    assert [r.seq for r in records] == list(range(1, 11))


def test_postgres_stopped_mid_run_fails_clearly_and_recovers_on_the_async_path(
    postgres_url: str, postgres_server: Any
) -> None:
    """The same on ``aappend`` (psycopg.AsyncConnection): each append while the server is
    down is a StorageError naming the slot, and the same store reconnects after."""
    import asyncio

    store = open_store("postgres", postgres_url)
    assert store.native_async()  # type: ignore[attr-defined]
    buf = ConversationBuffer(store=store, journal=100)

    async def appends(label: str) -> None:
        for n in range(5):
            await buf.aappend(user(f"{label} {n}"), CTX)

    asyncio.run(appends("before"))
    postgres_server.stop()
    try:

        async def while_down() -> list[str]:
            texts = []
            for n in range(3):
                with pytest.raises(StorageError) as err:
                    await buf.aappend(user(f"while down {n}"), CTX)
                texts.append(str(err.value))
            return texts

        for text in asyncio.run(while_down()):
            assert "Postgres" in text and "scope_id='s1'" in text, text
    finally:
        postgres_server.start()
    asyncio.run(appends("after"))
    contents = [m["content"] for m in buf.messages(CTX)]
    assert contents == [f"before {n}" for n in range(5)] + [f"after {n}" for n in range(5)]
    records = journal_for(buf.store).read(SLOT)
    assert [r.seq for r in records] == list(range(1, 11))
