"""MEM-12 with conditional writes: no lost turn even unserialized, bounded busy waits, deltas.

Every write of a slot is a compare and set on the revision the append read;
these tests show the unserialized fallback can no longer overwrite another
turn (processes, threads, a slow serialized writer), that SQLite's own busy
wait is bounded by ``lock_timeout``, that an append writes only its rows and
that what the stores hold equals the engine's buffer.
"""

from __future__ import annotations

import json
import os
import random
import sqlite3
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from test_concurrency import MARGIN, _python

from flowdrop_core.conversation import STALL_FLOOR, ConversationBuffer
from flowdrop_core.engine import Buffer
from flowdrop_core.storage import (
    Delta,
    MemoryStore,
    Op,
    RevisionConflict,
    Snapshot,
    SQLiteStore,
    StorageError,
    Store,
    StoreBusyError,
    apply_ops,
    delta_from_events,
)

CTX = {"session_id": "s1"}
SLOT = ("session", "s1", "chat_history")


def user(text: str) -> dict[str, Any]:
    return {"role": "user", "content": text}


def contents(msgs: list[dict[str, Any]] | None) -> list[Any]:
    return [m["content"] for m in msgs or []]


# -- the reproduction: 8 processes x 200 appends, lock_timeout 0.01 ---------------------

WRITER = """
import json, os, sys, time
from flowdrop_core.conversation import STALL_FLOOR, ConversationBuffer
from flowdrop_core.storage import SQLiteStore
path, wid, n, go = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
buf = ConversationBuffer(store=SQLiteStore(path), lock_timeout=0.01)
print("ready", flush=True)
while not os.path.exists(go):
    time.sleep(0.001)
appended = unserialized = 0
for j in range(n):
    res = buf.append({"role": "user", "content": f"{wid}:{j}"}, {"session_id": "s1"})
    appended += res.appended
    unserialized += not res.serialized
print(json.dumps({"appended": appended, "unserialized": unserialized}), flush=True)
"""


def test_eight_processes_with_a_tiny_lock_timeout_lose_no_turn(tmp_path: Path) -> None:
    """796 of 1,600 turns were stored; now all 1,600, once each, each writer in order."""
    procs, per_proc = 8, 200
    path = tmp_path / "shared.sqlite3"
    SQLiteStore(path).close()
    go = tmp_path / "go"
    children = [_python(WRITER, str(path), str(p), str(per_proc), str(go)) for p in range(procs)]
    for c in children:
        assert c.stdout is not None and c.stdout.readline().strip() == "ready", c.stderr
    go.touch()
    reports = []
    for c in children:
        out, err = c.communicate(timeout=300)
        assert c.returncode == 0, err
        reports.append(json.loads(out.strip().splitlines()[-1]))
    assert sum(r["appended"] for r in reports) == procs * per_proc  # every report told the truth
    stored = contents(ConversationBuffer(store=SQLiteStore(path)).messages(CTX))
    assert len(stored) == len(set(stored)) == procs * per_proc  # all of them, exactly once
    for p in range(procs):
        assert [c for c in stored if c.startswith(f"{p}:")] == [f"{p}:{j}" for j in range(per_proc)]


@pytest.mark.parametrize("kind", ["memory", "sqlite"])
def test_unserialized_threads_lose_no_turn(kind: str, tmp_path: Path) -> None:
    """``lock_timeout=0``: most appends run unserialized; compare and set keeps every turn."""
    threads, per_thread = 6, 60
    store: Store = MemoryStore() if kind == "memory" else SQLiteStore(tmp_path / "db.sqlite3")
    buf = ConversationBuffer(store=store, lock_timeout=0)
    appended = [0] * threads
    errors: list[BaseException] = []

    def work(t: int) -> None:
        try:
            for j in range(per_thread):
                appended[t] += buf.append(user(f"{t}:{j}"), CTX).appended
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    workers = [threading.Thread(target=work, args=(t,)) for t in range(threads)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    assert errors == []
    stored = contents(buf.messages(CTX))
    assert sum(appended) == len(stored) == len(set(stored)) == threads * per_thread
    for t in range(threads):
        assert [c for c in stored if c.startswith(f"{t}:")] == [
            f"{t}:{j}" for j in range(per_thread)
        ]


# -- a slow serialized writer and an unserialized one ------------------------------------------


class SlowAfterRead(SQLiteStore):
    """A store whose first read stalls: a serialized append slowed between read and write."""

    def __init__(self, *args: Any, stall: float, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.stall = stall
        self.has_read = threading.Event()

    def read(self, scope: str, scope_id: str, key: str) -> Snapshot:
        snap = super().read(scope, scope_id, key)
        if not self.has_read.is_set():
            self.has_read.set()
            time.sleep(self.stall)
        return snap


def test_slot_lock_held_past_the_bound_loses_nothing(tmp_path: Path) -> None:
    """The holder of the slot lock read, stalls past ``lock_timeout`` and then writes.

    The other append gives up waiting after ``lock_timeout``, lands unserialized,
    and the slow writer's conditional write then conflicts, so it re-reads and
    re-applies: both turns are stored, and each report describes what was stored.
    """
    path = tmp_path / "db.sqlite3"
    lock_timeout = 0.2
    ConversationBuffer(store=SQLiteStore(path)).append(user("before"), CTX)
    slow_store = SlowAfterRead(path, stall=4 * lock_timeout)
    slow = ConversationBuffer(store=slow_store, lock_timeout=5)
    slow_result: list[Any] = []
    holder = threading.Thread(target=lambda: slow_result.append(slow.append(user("slow"), CTX)))
    holder.start()
    assert slow_store.has_read.wait(10)  # it holds the slot lock and has read "before"
    fast = ConversationBuffer(store=SQLiteStore(path), lock_timeout=lock_timeout)
    start = time.monotonic()
    res = fast.append(user("fast"), CTX)
    elapsed = time.monotonic() - start
    holder.join()
    assert res.serialized is False and contents(res.messages) == ["before", "fast"]
    assert lock_timeout * 0.9 < elapsed < lock_timeout + MARGIN  # waited its bound, no more
    (late,) = slow_result
    assert late.serialized is True and late.appended == 1
    assert contents(late.messages) == ["before", "fast", "slow"]  # re-read, re-applied
    assert contents(fast.messages(CTX)) == ["before", "fast", "slow"]


def _hold_write_transaction(path: Path, seconds: float, started: threading.Event) -> None:
    raw = sqlite3.connect(path, isolation_level=None)
    raw.execute("BEGIN IMMEDIATE")
    started.set()
    time.sleep(seconds)
    raw.execute("COMMIT")
    raw.close()


def test_open_write_transaction_waits_lock_timeout_plus_one_retry(tmp_path: Path) -> None:
    """A writer stalled in its transaction: the append waits ``lock_timeout``, retries once.

    Before, it waited SQLite's own 30 s busy timeout whatever ``lock_timeout``
    said. Here the transaction is held for 1.5 x ``lock_timeout``: the first
    attempt gives up after ``lock_timeout``, the retry gets through.
    """
    path = tmp_path / "db.sqlite3"
    lock_timeout = 1.0
    buf = ConversationBuffer(store=SQLiteStore(path), lock_timeout=lock_timeout)
    buf.append(user("before"), CTX)
    started = threading.Event()
    holder = threading.Thread(
        target=_hold_write_transaction, args=(path, 1.5 * lock_timeout, started)
    )
    holder.start()
    assert started.wait(10)
    start = time.monotonic()
    res = buf.append(user("after a stalled writer"), CTX)
    elapsed = time.monotonic() - start
    holder.join()
    assert res.appended == 1 and res.serialized is True
    assert lock_timeout < elapsed < 2 * lock_timeout + MARGIN
    assert contents(buf.messages(CTX)) == ["before", "after a stalled writer"]


def test_write_transaction_held_for_good_fails_loudly_and_writes_nothing(tmp_path: Path) -> None:
    """Held with no commit for 2 x ``lock_timeout`` (and STALL_FLOOR): an error, not a hang."""
    path = tmp_path / "db.sqlite3"
    lock_timeout = 0.2
    hold = 2.5 * max(2 * lock_timeout, STALL_FLOOR)
    buf = ConversationBuffer(store=SQLiteStore(path), lock_timeout=lock_timeout)
    buf.append(user("before"), CTX)
    started = threading.Event()
    holder = threading.Thread(
        target=_hold_write_transaction, args=(path, 30 * lock_timeout, started)
    )
    holder.start()
    assert started.wait(10)
    start = time.monotonic()
    with pytest.raises(StoreBusyError, match="scope_id='s1'"):
        buf.append(user("cannot be written now"), CTX)
    elapsed = time.monotonic() - start
    assert STALL_FLOOR <= elapsed < hold  # gave up on the stalled writer, did not wait it out
    holder.join()
    assert contents(buf.messages(CTX)) == ["before"]  # nothing half-written
    assert buf.append(user("later"), CTX).count == 2  # the cache was not left ahead


def test_conflict_makes_the_report_describe_what_was_stored() -> None:
    """A stale cached buffer would call a re-fired result new; the re-read says duplicate."""
    store = MemoryStore()
    mine, theirs = ConversationBuffer(store=store), ConversationBuffer(store=store)
    call = {"role": "assistant", "content": None, "tool_calls": [{"id": "c1"}]}
    result = {"role": "tool", "content": "r", "tool_call_id": "c1"}
    mine.append(call, CTX)
    theirs.append(result, CTX)  # mine's cache does not know
    res = mine.append(result, CTX)
    assert (res.appended, res.changed, res.count) == (0, False, 2)
    assert [e.kind for e in res.events] == ["duplicate_result"]


# -- the store protocol --------------------------------------------------------------------------


def test_conditional_set_apply_delete(store: Store) -> None:
    with pytest.raises(RevisionConflict):
        store.set(*SLOT, [user("a")], expected="nope")
    first = store.set(*SLOT, [user("a")], expected=None)  # only if empty
    with pytest.raises(RevisionConflict):
        store.set(*SLOT, [user("b")], expected=None)
    second = store.apply(*SLOT, Delta((Op("insert", 1, user("b")),), 2), expected=first)
    with pytest.raises(RevisionConflict) as err:
        store.apply(*SLOT, Delta((Op("insert", 2, user("c")),), 3), expected=first)
    assert (err.value.expected, err.value.actual) == (first, second)
    with pytest.raises(RevisionConflict):
        store.delete(*SLOT, expected=first)
    assert contents(store.get(*SLOT)[0]) == ["a", "b"]  # the refused writes changed nothing
    assert store.read(*SLOT) == Snapshot([user("a"), user("b")], True, second)
    assert store.delete(*SLOT, expected=second) is True
    assert store.read(*SLOT) == Snapshot(None, False, None)


def test_apply_is_all_or_nothing(store: Store) -> None:
    rev = store.set(*SLOT, [user("a")])
    bad = Delta((Op("insert", 1, user("b")), Op("delete", 5)), 1)
    with pytest.raises(StorageError, match="delete at 5"):
        store.apply(*SLOT, bad, expected=rev)
    with pytest.raises(StorageError, match="count says 7"):
        store.apply(*SLOT, Delta((Op("insert", 1, user("b")),), 7), expected=rev)
    assert store.read(*SLOT) == Snapshot([user("a")], True, rev)
    store.set("global", "", "note", {"plain": "value"})
    with pytest.raises(StorageError, match="not a conversation buffer"):
        store.apply(
            "global", "", "note", Delta((), 0), expected=store.revision("global", "", "note")
        )


@pytest.mark.parametrize("seed", range(4))
def test_random_deltas_match_a_list(store: Store, seed: int) -> None:
    """Random ops, with long runs of inserts at one spot (the SQLite key gaps run out)."""
    rng = random.Random(seed)
    model: list[dict[str, Any]] = []
    rev = None
    for step in range(150):
        ops: list[Op] = []
        size = len(model)
        for k in range(rng.randint(1, 4)):
            r = rng.random()
            if size and r < 0.2:
                ops.append(Op("delete", 0 if rng.random() < 0.6 else rng.randrange(size)))
                size -= 1
            elif size and r < 0.3:
                ops.append(Op("replace", rng.randrange(size), {"n": f"r{step}.{k}"}))
            elif size and r < 0.6:  # a hot spot: keep inserting just before the last entry
                ops.append(Op("insert", max(0, size - 1), {"n": f"i{step}.{k}"}))
                size += 1
            else:
                ops.append(Op("insert", rng.randint(0, size), {"n": f"i{step}.{k}"}))
                size += 1
        apply_ops(model, ops)
        rev = store.apply(*SLOT, Delta(tuple(ops), len(model)), expected=rev)
        assert store.get(*SLOT)[0] == model


def test_sqlite_append_writes_only_its_rows(tmp_path: Path) -> None:
    """An append at 2,000 entries changes a handful of rows, not 2,000."""
    path = tmp_path / "db.sqlite3"
    buf = ConversationBuffer(store=SQLiteStore(path), max_messages=2000)
    buf.append([user(str(i)) for i in range(2000)], CTX)
    raw = sqlite3.connect(path)
    before = raw.total_changes
    raw.close()
    changes: list[int] = []

    def count(slot: Any) -> None:
        conn = buf.store._conn()  # type: ignore[attr-defined]
        changes.append(conn.total_changes)

    store = SQLiteStore(path, on_write=count)
    buf = ConversationBuffer(store=store, max_messages=2000)
    buf.append(user("x"), CTX)  # first append on this instance: reads, then writes
    base = changes[-1]
    buf.append(user("y"), CTX)  # evicts one, appends one, updates the slot row
    assert changes[-1] - base <= 8, changes  # rows touched, triggers included
    assert before >= 0 and contents(buf.messages(CTX))[-2:] == ["x", "y"]
    assert buf.read(CTX).count == 2000


def test_delta_from_events_rebuilds_the_engine_buffer() -> None:
    rng = random.Random(5)
    engine = Buffer(max_messages=7)
    stored: list[dict[str, Any]] = []
    for n in range(400):
        kind = rng.choice(["user", "calls", "tool", "user_empty"])
        if kind == "user":
            msg: dict[str, Any] = user(f"u{n}")
        elif kind == "user_empty":
            msg = user("")
        elif kind == "calls":
            msg = {"role": "assistant", "content": None, "tool_calls": [{"id": f"c{n}"}]}
        else:
            msg = {"role": "tool", "content": "r", "tool_call_id": f"c{rng.randrange(max(1, n))}"}
        res = engine.append(msg)
        delta = delta_from_events(res.events, res.count)
        apply_ops(stored, delta.ops)
        assert stored == engine.messages() and delta.count == len(stored)


# -- surrogates, read-only files, bad stored entries ---------------------------------


def test_lone_surrogate_is_a_storage_error_naming_slot_and_field(tmp_path: Path) -> None:
    buf = ConversationBuffer(store=SQLiteStore(tmp_path / "db.sqlite3"))
    buf.append(user("fine"), CTX)
    with pytest.raises(StorageError) as err:
        buf.append(user("bad \ud800 half"), CTX)
    text = str(err.value)
    assert "scope_id='s1'" in text and "entry at position 1.content" in text
    assert "surrogate" in text and "nothing was written" in text
    assert not isinstance(err.value, UnicodeError)
    meta = {"role": "user", "content": "x", "metadata": {"note": "\udfff"}}
    with pytest.raises(StorageError, match=r"position 1\.metadata\.note"):
        buf.append(meta, CTX)
    with pytest.raises(StorageError, match=r"entry 0\.content"):
        buf.store.set(*SLOT, [user("\ud83d")])
    assert contents(buf.append(user("next"), CTX).messages) == ["fine", "next"]


def test_read_only_database_opens_for_reads(tmp_path: Path) -> None:
    path = tmp_path / "db.sqlite3"
    with SQLiteStore(path) as store:
        ConversationBuffer(store=store).append(user("kept"), CTX)
    reader = SQLiteStore(path, readonly=True)
    assert contents(ConversationBuffer(store=reader).messages(CTX)) == ["kept"]
    with pytest.raises(StorageError, match="read-only"):
        reader.set(*SLOT, [])
    with pytest.raises(StorageError, match="read-only"):
        ConversationBuffer(store=reader, lock_timeout=0.05).append(user("no"), CTX)
    assert contents(ConversationBuffer(store=SQLiteStore(path)).messages(CTX)) == ["kept"]


@pytest.mark.skipif(os.name != "posix", reason="file modes are POSIX")
def test_file_without_write_permission_opens_read_only(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A file the process may not write opens read-only: reads work, every write is refused.

    The store decides with ``os.access``; root passes that check whatever the
    mode, so as root (CI) ``os.access`` is made to answer as it would for an
    ordinary user on a 0o444 file. SQLite itself then really has the file
    open with ``mode=ro``: a raw write on its connection fails too.
    """
    path = tmp_path / "db.sqlite3"
    with SQLiteStore(path) as store:
        store.set(*SLOT, [user("kept")])
    path.chmod(0o444)
    if os.geteuid() == 0:
        real_access = os.access

        def access(target: Any, mode: int, *args: Any, **kwargs: Any) -> bool:
            if mode & os.W_OK and Path(target) == path:
                return bool(path.stat().st_mode & 0o200)  # what a non-root owner gets
            return real_access(target, mode, *args, **kwargs)

        monkeypatch.setattr(os, "access", access)
    try:
        store = SQLiteStore(path)
        assert store.readonly and contents(store.get(*SLOT)[0]) == ["kept"]
        with pytest.raises(StorageError, match="opened read-only"):
            store.set(*SLOT, [])
        with pytest.raises(sqlite3.OperationalError, match="readonly"):
            store._conn().execute("CREATE TABLE probe (x)")
        store.close()
    finally:
        path.chmod(0o644)
    assert contents(SQLiteStore(path).get(*SLOT)[0]) == ["kept"]  # nothing was lost


def test_bad_stored_entry_is_reported_as_stored_not_incoming(store: Store) -> None:
    store.set(*SLOT, [user("ok"), {"role": "wizard", "content": "?"}])
    buf = ConversationBuffer(store=store)
    with pytest.raises(StorageError) as err:
        buf.append(user("a perfectly good message"), CTX)
    text = str(err.value)
    assert "stored buffer holds a bad entry" in text and "scope_id='s1'" in text
    assert "buffer[1]" in text  # the stored entry's index, not the incoming message's
    store.set(*SLOT, [user("ok"), "not an object"])
    with pytest.raises(StorageError, match="entry 1 is str"):
        buf.append(user("again"), CTX)


# -- lazy messages -------------------------------------------------------------------------------


def test_result_messages_are_built_on_read_and_stay_put(store: Store) -> None:
    buf = ConversationBuffer(store=store)
    first = buf.append(user("a"), CTX)
    second = buf.append(user("b"), CTX)  # changes the live buffer the first result came from
    assert contents(first.messages) == ["a"]  # the kept result kept its own buffer
    assert contents(second.messages) == ["a", "b"]
    third = buf.append(user("c"), CTX)
    dumped = third.to_dict()
    assert contents(dumped["messages"]) == ["a", "b", "c"]
    assert third == third.replace() and "messages=" in repr(third)
    assert contents(second.messages) == ["a", "b"]
