"""MEM-12: serialized appends across threads and processes, bounded waits, crash safety."""

from __future__ import annotations

import json
import logging
import os
import signal
import sqlite3
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from concurrency_helpers import (
    LONG_WAIT,
    MARGIN,
    append_from_threads,
    check_one_chain,
    user,
)
from concurrency_helpers import python_child as _python

from flowdrop_core.conversation import ConversationBuffer
from flowdrop_core.events import EventKind
from flowdrop_core.storage import MemoryStore, SQLiteStore, StorageError, Store

CTX = {"session_id": "s1", "node_id": "n1", "pipeline_id": "p1", "workflow_id": "wf1"}

# Timing asserts never use tight absolute times (a loaded CI machine can stall for seconds).
# A wait that must not happen is made long (LONG_WAIT) and the assert allows a wide margin
# below it (MARGIN): passing proves the wait did not happen, however slow the machine.


# -- threads ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kind", "window"),
    [("memory", 0), ("sqlite", 50)],
    ids=["memory-unbounded", "sqlite-window50"],
)
def test_eight_threads_lose_nothing(kind: str, window: int, tmp_path: Path) -> None:
    """8 x 250 appends to one slot. Every append must see the one before it.

    Each result's buffer ends with its own message, preceded by the message of
    the append it read from. In a serialized history those links form a single
    chain through all 2000 messages; a lost update shows up as two appends
    linked to the same predecessor (and a broken chain). The unbounded run also
    checks that the final count and the sum of ``appended`` agree (MEM-14); the
    SQLite run uses a window of 50 only to keep the test fast.
    """
    threads, per_thread = 8, 250
    store: Store = MemoryStore() if kind == "memory" else SQLiteStore(tmp_path / "db.sqlite3")
    buf = ConversationBuffer(store=store, max_messages=window, lock_timeout=30)
    run = append_from_threads(buf, CTX, threads, per_thread)
    assert run.unserialized == 0
    assert run.appended == threads * per_thread
    final = [m["content"] for m in buf.messages(CTX)]
    check_one_chain(run.links, final, threads, per_thread, window)
    if not window:
        assert buf.read(CTX).count == run.appended


# -- processes ---------------------------------------------------------------------------------

WORKER = """
import json, os, sys, time
from flowdrop_core.conversation import ConversationBuffer
from flowdrop_core.storage import SQLiteStore
path, wid, n, go = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
buf = ConversationBuffer(store=SQLiteStore(path), lock_timeout=30)
ctx = {"session_id": "s1"}
print("ready", flush=True)
while not os.path.exists(go):
    time.sleep(0.001)
appended = unserialized = 0
for j in range(n):
    res = buf.append({"role": "user", "content": f"{wid}:{j}"}, ctx)
    appended += res.appended
    unserialized += not res.serialized
print(json.dumps({"appended": appended, "unserialized": unserialized}), flush=True)
"""


def test_four_processes_lose_nothing(tmp_path: Path) -> None:
    procs, per_proc = 4, 100
    path = tmp_path / "shared.sqlite3"
    SQLiteStore(path).close()  # create schema and WAL once
    go = tmp_path / "go"
    children = [_python(WORKER, str(path), str(p), str(per_proc), str(go)) for p in range(procs)]
    for c in children:  # all imported and connected: start together
        assert c.stdout is not None and c.stdout.readline().strip() == "ready", c.stderr
    go.touch()
    reports = []
    for c in children:
        out, err = c.communicate(timeout=120)
        assert c.returncode == 0, err
        reports.append(json.loads(out.strip().splitlines()[-1]))
    assert sum(r["unserialized"] for r in reports) == 0
    final = ConversationBuffer(store=SQLiteStore(path)).read({"session_id": "s1"})
    assert final.count == sum(r["appended"] for r in reports) == procs * per_proc
    contents = [m["content"] for m in final.messages or []]
    for p in range(procs):
        assert [c for c in contents if c.startswith(f"{p}:")] == [
            f"{p}:{j}" for j in range(per_proc)
        ]


# -- bounded wait ------------------------------------------------------------------------------


def _assert_unserialized_but_landed(res: Any, caplog: pytest.LogCaptureFixture) -> None:
    assert res.serialized is False
    assert (res.appended, res.appended_any) == (1, True)
    assert (res.events[0].kind, res.events[0].rule) == (EventKind.UNSERIALIZED, "MEM-12")
    warnings = [
        r.getMessage()
        for r in caplog.records
        if r.name == "flowdrop_core" and r.levelno == logging.WARNING
    ]
    assert len(warnings) == 1 and "MEM-12" in warnings[0]


def test_lock_held_past_bound_warns_and_append_lands(
    store: Store, caplog: pytest.LogCaptureFixture
) -> None:
    buf = ConversationBuffer(store=store, lock_timeout=0.05)
    buf.append(user("before"), CTX)
    with store.lock("session", "s1", "chat_history", 1.0) as held:
        assert held
        start = time.monotonic()
        with caplog.at_level(logging.WARNING, logger="flowdrop_core"):
            res = buf.append(user("late"), CTX)
        elapsed = time.monotonic() - start
    # Bounded: the holder only lets go after the append returns, so an unbounded wait
    # would never end; this one waited its bound and went on.
    assert elapsed < MARGIN
    _assert_unserialized_but_landed(res, caplog)
    assert [m["content"] for m in buf.messages(CTX)] == ["before", "late"]
    # and the lock is usable again afterwards
    assert buf.append(user("after"), CTX).serialized is True


HOLDER = """
import sys, time
from flowdrop_core.storage import SQLiteStore
store = SQLiteStore(sys.argv[1])
with store.lock("session", "s1", "chat_history", 5.0) as held:
    print("held" if held else "not held", flush=True)
    time.sleep(float(sys.argv[2]))
"""


def test_lock_held_by_another_process_is_bounded(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = tmp_path / "db.sqlite3"
    store = SQLiteStore(path)
    holder = _python(HOLDER, str(path), str(10 * LONG_WAIT))  # killed below, long before
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        buf = ConversationBuffer(store=store, lock_timeout=0.2)
        start = time.monotonic()
        with caplog.at_level(logging.WARNING, logger="flowdrop_core"):
            res = buf.append(user("while another process holds the slot"), CTX)
        # it waited its own bound (0.2 s), not for the holder (which holds for minutes)
        assert 0.15 < time.monotonic() - start < LONG_WAIT
        _assert_unserialized_but_landed(res, caplog)
        # a different slot in the same file does not wait on the held one
        other = buf.append(user("other slot"), {"session_id": "s2"})
        assert other.serialized is True
    finally:
        holder.kill()
        holder.wait()
    # the kernel released the dead holder's lock
    assert (
        ConversationBuffer(store=store, lock_timeout=5).append(user("after"), CTX).serialized
        is True
    )


# -- release on every path -------------------------------------------------------------------


class FailingOnce(MemoryStore):
    """A memory store whose next write fails (its appends take the lock and the write)."""

    fail_next = True
    apply_live = None  # type: ignore[assignment]  # no live appends: they would skip the failing write

    def apply(self, scope: str, scope_id: str, key: str, delta: Any, **kw: Any) -> str:
        if self.fail_next:
            self.fail_next = False
            raise StorageError("disk on fire", scope=scope, scope_id=scope_id, key=key)
        return super().apply(scope, scope_id, key, delta, **kw)


def _failing_sqlite(tmp_path: Path) -> SQLiteStore:
    state = {"fail": True}

    def boom(slot: Any) -> None:
        if state["fail"]:
            state["fail"] = False
            raise OSError("disk on fire")

    return SQLiteStore(tmp_path / "db.sqlite3", on_write=boom)


@pytest.mark.parametrize("kind", ["memory", "sqlite"])
def test_failing_write_releases_the_lock(kind: str, tmp_path: Path) -> None:
    store: Store = FailingOnce() if kind == "memory" else _failing_sqlite(tmp_path)
    buf = ConversationBuffer(store=store, lock_timeout=LONG_WAIT)
    with pytest.raises((StorageError, OSError), match="disk on fire"):
        buf.append(user("lost with an error, not silently"), CTX)
    assert buf.read(CTX).count == 0  # the failed write left nothing behind
    start = time.monotonic()
    res = buf.append(user("next"), CTX)
    # A leaked lock would make it wait the whole LONG_WAIT and land unserialized.
    assert time.monotonic() - start < MARGIN
    assert res.serialized is True and res.count == 1


def test_invalid_message_releases_the_lock(store: Store) -> None:
    buf = ConversationBuffer(store=store, lock_timeout=LONG_WAIT)
    with pytest.raises(ValueError):
        buf.append({"content": "no role"}, CTX)
    start = time.monotonic()
    assert buf.append(user("next"), CTX).serialized is True  # a leaked lock: False
    assert time.monotonic() - start < MARGIN  # and a leaked lock: the whole LONG_WAIT


def test_different_slots_never_wait(store: Store) -> None:
    buf = ConversationBuffer(store=store, lock_timeout=LONG_WAIT)
    other_key = ConversationBuffer(key="other", store=store, lock_timeout=LONG_WAIT)
    other_scope = ConversationBuffer(scope="user", store=store, lock_timeout=LONG_WAIT)
    with store.lock("session", "s1", "chat_history", 1.0) as held:
        assert held
        start = time.monotonic()
        # Waiting on the held slot would take LONG_WAIT and end unserialized.
        assert buf.append(user("s2"), {"session_id": "s2"}).serialized is True
        assert other_key.append(user("same id, other key"), CTX).serialized is True
        assert other_scope.append(user("u"), {"user_id": "s1"}).serialized is True
        assert time.monotonic() - start < MARGIN


# -- crash safety --------------------------------------------------------------------------------

KILLED_IN_TXN = """
import sys, time
from flowdrop_core.conversation import ConversationBuffer
from flowdrop_core.storage import SQLiteStore

def pause(slot):
    print("in-transaction", flush=True)
    time.sleep(60)

buf = ConversationBuffer(store=SQLiteStore(sys.argv[1], on_write=pause))
buf.append({"role": "user", "content": "new"}, {"session_id": "s1"})
"""


def _integrity_ok(path: Path) -> None:
    raw = sqlite3.connect(path)
    assert raw.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    raw.close()


def test_killed_mid_write_leaves_old_buffer(tmp_path: Path) -> None:
    path = tmp_path / "db.sqlite3"
    buf = ConversationBuffer(store=SQLiteStore(path))
    buf.append(user("old"), {"session_id": "s1"})
    child = _python(KILLED_IN_TXN, str(path))
    assert child.stdout is not None and child.stdout.readline().strip() == "in-transaction", (
        child.stderr
    )
    child.send_signal(signal.SIGKILL)
    child.wait()
    assert child.returncode == -signal.SIGKILL
    _integrity_ok(path)
    fresh = ConversationBuffer(store=SQLiteStore(path), lock_timeout=LONG_WAIT)
    assert [m["content"] for m in fresh.messages({"session_id": "s1"})] == ["old"]
    start = time.monotonic()  # neither the slot lock nor SQLite's write lock is left held
    res = fresh.append(user("after crash"), {"session_id": "s1"})
    assert res.serialized is True and time.monotonic() - start < MARGIN
    assert res.count == 2


APPEND_FOREVER = """
import sys
from flowdrop_core.conversation import ConversationBuffer
from flowdrop_core.storage import SQLiteStore
buf = ConversationBuffer(store=SQLiteStore(sys.argv[1]))
print("started", flush=True)
i = 0
while True:
    buf.append({"role": "user", "content": str(i)}, {"session_id": "s1"})
    i += 1
"""


@pytest.mark.parametrize("delay", [0.05, 0.13, 0.21])
def test_killed_at_random_point_leaves_a_whole_buffer(tmp_path: Path, delay: float) -> None:
    path = tmp_path / "db.sqlite3"
    SQLiteStore(path).close()
    child = _python(APPEND_FOREVER, str(path))
    assert child.stdout is not None and child.stdout.readline().strip() == "started", child.stderr
    time.sleep(delay)
    child.send_signal(signal.SIGKILL)
    child.wait()
    _integrity_ok(path)
    contents = [
        m["content"]
        for m in ConversationBuffer(store=SQLiteStore(path)).messages({"session_id": "s1"})
    ]
    assert contents == [str(i) for i in range(len(contents))]  # old or new, never torn


def test_removed_lock_directory_is_recreated(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "db.sqlite3")
    buf = ConversationBuffer(store=store)
    buf.append(user("one"), CTX)
    for f in store.lock_dir.iterdir():
        f.unlink()
    store.lock_dir.rmdir()
    res = buf.append(user("two"), CTX)
    assert res.serialized is True and res.count == 2
    assert store.lock_dir.is_dir()


def _forked_append(store: SQLiteStore) -> None:
    res = ConversationBuffer(store=store, lock_timeout=5).append(user("from child"), CTX)
    sys.exit(0 if res.serialized and res.count == 2 else 1)


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
def test_store_survives_fork(tmp_path: Path) -> None:
    """A store created before a fork gets fresh connections and locks in the child."""
    import multiprocessing as mp

    store = SQLiteStore(tmp_path / "db.sqlite3")
    buf = ConversationBuffer(store=store)
    with store.lock("session", "other", "chat_history", 1.0):  # held in the parent at fork time
        buf.append(user("from parent"), CTX)
        child = mp.get_context("fork").Process(target=_forked_append, args=(store,))
        child.start()
        child.join(30)
    assert child.exitcode == 0
    assert [m["content"] for m in buf.messages(CTX)] == ["from parent", "from child"]
