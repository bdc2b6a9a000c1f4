"""ConversationBuffer's live cache: reused while the store's revision is its own, never stale.

An append keeps the slot's engine Buffer next to the revision its write
returned; the next append reuses it, and its conditional write (compare and
set) fails when the store is at another revision, which makes it re-read.
These tests show the cache is used (no ``read``), that every
other writer (another instance, a direct ``store.set``, another SQLiteStore
on the file, another process) invalidates it, that failures leave nothing
stale behind, and that results are identical to the pure engine's.
"""

from __future__ import annotations

import logging
import os
import random
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from test_storage import SpyStore

from flowdrop_core.conversation import ConversationBuffer
from flowdrop_core.engine import append_messages
from flowdrop_core.messages import InvalidMessagesError
from flowdrop_core.storage import MemoryStore, SQLiteStore, StorageError, Store

REPO = Path(__file__).resolve().parents[2]
CTX = {"session_id": "s1"}
SLOT = ("session", "s1", "chat_history")


def user(text: str) -> dict[str, Any]:
    return {"role": "user", "content": text}


def contents(msgs: list[dict[str, Any]] | None) -> list[Any]:
    return [m["content"] for m in msgs or []]


# -- the cache is used ---------------------------------------------------------------------


def test_second_append_reuses_the_live_buffer() -> None:
    spy = SpyStore()
    buf = ConversationBuffer(store=spy)
    buf.append(user("one"), CTX)
    spy.calls.clear()
    res = buf.append(user("two"), CTX)
    # no read, no rebuild, not even a revision check: the write is conditional on the
    # cached revision, so a stale cache would make it fail instead of being trusted
    assert spy.kinds() == ["lock", "apply"]
    assert contents(res.messages) == ["one", "two"] and res.count == 2
    spy.calls.clear()
    assert contents(buf.read(CTX).messages) == ["one", "two"]
    assert "read" not in spy.kinds()  # a read is served from the cache too


def test_duplicate_keeps_the_cache() -> None:
    spy = SpyStore()
    buf = ConversationBuffer(store=spy)
    call = {"role": "assistant", "content": "", "tool_calls": [{"id": "c1", "type": "function"}]}
    buf.append([call, {"role": "tool", "content": "r", "tool_call_id": "c1"}], CTX)
    spy.calls.clear()
    assert (
        buf.append({"role": "tool", "content": "again", "tool_call_id": "c1"}, CTX).changed is False
    )
    spy.calls.clear()
    assert buf.append(user("next"), CTX).count == 3
    assert "read" not in spy.kinds()


def test_unserialized_append_uses_the_cache_with_a_conditional_write(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """MEM-12 fallback: without the lock the write is still conditional, so the cache is safe."""
    spy = SpyStore()
    buf = ConversationBuffer(store=spy, lock_timeout=0.01)
    buf.append(user("one"), CTX)
    with spy.inner.lock(*SLOT, 1.0) as held, caplog.at_level(logging.WARNING):
        assert held
        spy.calls.clear()
        res = buf.append(user("two"), CTX)
    assert res.serialized is False and contents(res.messages) == ["one", "two"]
    assert spy.kinds() == ["lock", "apply"]
    spy.inner.set(*SLOT, [user("someone else")])  # a write the cache does not know
    spy.calls.clear()
    with spy.inner.lock(*SLOT, 1.0):
        res = buf.append(user("three"), CTX)
    assert contents(res.messages) == ["someone else", "three"]  # re-read, re-applied
    assert spy.kinds() == ["lock", "apply", "read", "apply"]  # the stale write was refused
    assert contents(spy.inner.get(*SLOT)[0]) == ["someone else", "three"]


# -- other writers invalidate it ---------------------------------------------------------------


def test_another_instance_write_is_seen(store: Store) -> None:
    mine = ConversationBuffer(store=store)
    theirs = ConversationBuffer(store=store, tier="admin")  # it clears (MEM-15)
    mine.append(user("a"), CTX)
    theirs.append(user("b"), CTX)
    assert contents(mine.append(user("c"), CTX).messages) == ["a", "b", "c"]
    assert contents(theirs.read(CTX).messages) == ["a", "b", "c"]
    theirs.clear(CTX)
    if getattr(store, "apply_live", None) is None:  # a live store's buffers keep no cache
        assert SLOT in mine._cache and SLOT not in theirs._cache  # clear drops its own entry
    assert contents(mine.read(CTX).messages) == []
    assert contents(mine.append(user("d"), CTX).messages) == ["d"]


def test_direct_store_set_is_seen(store: Store) -> None:
    buf = ConversationBuffer(store=store)
    buf.append([user("a"), user("b")], CTX)
    store.set(*SLOT, [user("written directly")])
    assert contents(buf.read(CTX).messages) == ["written directly"]
    assert contents(buf.append(user("c"), CTX).messages) == ["written directly", "c"]
    store.delete(*SLOT)
    store.set(*SLOT, [user("after a delete")])
    assert contents(buf.append(user("d"), CTX).messages) == ["after a delete", "d"]


def test_second_sqlite_store_on_the_same_file_is_seen(tmp_path: Path) -> None:
    path = tmp_path / "db.sqlite3"
    with SQLiteStore(path) as one, SQLiteStore(path) as two:
        mine = ConversationBuffer(store=one)
        theirs = ConversationBuffer(store=two)
        mine.append(user("a"), CTX)
        theirs.append(user("b"), CTX)
        assert contents(mine.append(user("c"), CTX).messages) == ["a", "b", "c"]
        two.set(*SLOT, [user("replaced")])
        assert contents(mine.read(CTX).messages) == ["replaced"]
        assert contents(mine.append(user("d"), CTX).messages) == ["replaced", "d"]


OTHER_PROCESS = """
import sys
from flowdrop_core.conversation import ConversationBuffer
from flowdrop_core.storage import SQLiteStore
ConversationBuffer(store=SQLiteStore(sys.argv[1])).append(
    {"role": "user", "content": "from another process"}, {"session_id": "s1"}
)
"""


def test_another_process_write_is_seen(tmp_path: Path) -> None:
    path = tmp_path / "db.sqlite3"
    buf = ConversationBuffer(store=SQLiteStore(path))
    buf.append(user("a"), CTX)
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")]),
    }
    subprocess.run(
        [sys.executable, "-c", OTHER_PROCESS, str(path)], env=env, check=True, timeout=60
    )
    res = buf.append(user("c"), CTX)
    assert contents(res.messages) == ["a", "from another process", "c"]


def test_cache_holds_at_most_cache_slots_slots() -> None:
    spy = SpyStore()
    buf = ConversationBuffer(store=spy, cache_slots=2)
    for sid in ["a", "b", "c"]:
        buf.append(user(sid), {"session_id": sid})
    assert sorted(slot[1] for slot in buf._cache) == ["b", "c"]  # "a" was least recently written
    spy.calls.clear()
    assert contents(buf.append(user("a2"), {"session_id": "a"}).messages) == ["a", "a2"]
    assert "read" in spy.kinds()
    assert sorted(slot[1] for slot in buf._cache) == ["a", "c"]
    off = ConversationBuffer(store=spy, cache_slots=0)
    off.append(user("x"), CTX)
    assert off._cache == {}
    with pytest.raises(ValueError):
        ConversationBuffer(cache_slots=-1)


def test_changed_window_is_not_reused() -> None:
    buf = ConversationBuffer(store=MemoryStore())
    buf.append([user("a"), user("b"), user("c")], CTX)
    buf.max_messages = 2
    res = buf.append(user("d"), CTX)
    assert contents(res.messages) == ["c", "d"] and res.count == 2


# -- failures leave nothing stale ---------------------------------------------------------------


class FailingSpy(SpyStore):
    fail_next = False

    def apply(self, scope: str, scope_id: str, key: str, delta: Any, **kw: Any) -> str:
        if self.fail_next:
            self.fail_next = False
            raise StorageError("disk on fire", scope=scope, scope_id=scope_id, key=key)
        return super().apply(scope, scope_id, key, delta, **kw)


def test_failed_write_leaves_no_stale_cache() -> None:
    spy = FailingSpy()
    buf = ConversationBuffer(store=spy)
    buf.append(user("a"), CTX)
    spy.fail_next = True
    with pytest.raises(StorageError, match="disk on fire"):
        buf.append(user("lost"), CTX)
    spy.calls.clear()
    res = buf.append(user("b"), CTX)
    assert contents(res.messages) == ["a", "b"]  # not ["a", "lost", "b"]
    assert "read" in spy.kinds()  # re-read from the store
    assert contents(buf.read(CTX).messages) == ["a", "b"]


def test_failed_sqlite_write_leaves_no_stale_cache(tmp_path: Path) -> None:
    state = {"fail": False}

    def boom(slot: Any) -> None:
        if state["fail"]:
            state["fail"] = False
            raise OSError("disk on fire")

    buf = ConversationBuffer(store=SQLiteStore(tmp_path / "db.sqlite3", on_write=boom))
    buf.append(user("a"), CTX)
    state["fail"] = True
    with pytest.raises(OSError, match="disk on fire"):
        buf.append(user("lost"), CTX)
    assert contents(buf.append(user("b"), CTX).messages) == ["a", "b"]


def test_invalid_message_leaves_the_buffer_unchanged(store: Store) -> None:
    buf = ConversationBuffer(store=store)
    buf.append(user("a"), CTX)
    with pytest.raises(InvalidMessagesError):
        buf.append([user("would land"), {"content": "no role"}], CTX)
    assert contents(buf.append(user("b"), CTX).messages) == ["a", "b"]


# -- identical results with and without the cache -------------------------------------------------


def _random_message(rng: random.Random, next_call: list[int]) -> Any:
    ids = [f"c{k}" for k in range(max(0, next_call[0] - 4), next_call[0] + 1)]
    kind = rng.choice(["user", "user", "assistant", "calls", "tool", "tool", "healed", "empty"])
    if kind == "user":
        return user(f"u{rng.randrange(1000)}")
    if kind == "empty":
        return user("")
    if kind == "assistant":
        return {"role": "assistant", "content": "ok"}
    if kind == "calls":
        next_call[0] += 1
        fresh = f"c{next_call[0]}"
        picked = [fresh] if rng.random() < 0.7 else [rng.choice(ids)]
        if rng.random() < 0.3:
            picked.append(rng.choice(ids))
        return {
            "role": "assistant",
            "content": None,
            "tool_calls": [{"id": c, "type": "function"} for c in dict.fromkeys(picked)],
        }
    msg: dict[str, Any] = {"role": "tool", "content": "r", "tool_call_id": rng.choice(ids)}
    if kind == "healed":
        msg["healed"] = True
    return msg


@pytest.mark.parametrize("seed", range(6))
def test_cached_results_match_the_pure_engine(seed: int, tmp_path: Path) -> None:
    """Random steps (single messages and batches) against ``append_messages`` on the stored list.

    Other writers interleave: a second instance with another window, a
    direct ``set`` and a ``clear``; a quarter of the seeds use SQLite.
    """
    rng = random.Random(seed)
    store: Store = SQLiteStore(tmp_path / "db.sqlite3") if seed % 4 == 3 else MemoryStore()
    window = rng.choice([0, 0, 3, 7])
    buf = ConversationBuffer(store=store, max_messages=window, tier="admin")  # it clears
    other = ConversationBuffer(store=store, max_messages=5)
    expected: list[dict[str, Any]] = []
    next_call = [0]
    for _ in range(300):
        r = rng.random()
        if r < 0.04:
            expected = other.append(user("other"), CTX).messages or []
            continue
        if r < 0.06:
            expected = [user("direct")]
            store.set(*SLOT, expected)
            continue
        if r < 0.07:
            buf.clear(CTX)
            expected = []
            continue
        if r < 0.09:
            buf.max_messages = window = rng.choice([0, 2, 4])
        incoming = (
            [_random_message(rng, next_call) for _ in range(rng.randint(0, 3))]
            if rng.random() < 0.2
            else _random_message(rng, next_call)
        )
        want = append_messages(expected, incoming, window)
        got = buf.append(incoming, CTX)
        assert got.messages == want.messages
        assert (got.count, got.appended, got.appended_any) == (
            want.count,
            want.appended,
            want.appended_any,
        )
        assert [(e.kind, e.rule, e.position) for e in got.events] == [
            (e.kind, e.rule, e.position) for e in want.events
        ]
        assert buf.read(CTX).messages == want.messages
        expected = want.messages or []
    assert store.get(*SLOT, [])[0] == expected
    if isinstance(store, SQLiteStore):
        store.close()
