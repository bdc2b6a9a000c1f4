"""The memory store's live slot: an append as one read-modify-write under the store's guard.

On a :class:`~flowdrop_core.storage.LiveStore` (the memory store) a
``ConversationBuffer`` append runs through ``apply_live``: no slot lock, no
conditional write, the slot kept as its engine buffer. These tests show it
gives exactly what the general path (lock, read, conditional write) gives,
that every other read and write of the store sees it and is seen by it, that
a held slot lock still serializes (MEM-12), and that bad input changes
nothing.
"""

from __future__ import annotations

import threading
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from strategies import conversations, examples, stored_buffers, windows
from test_storage import SpyStore

from flowdrop_core.conversation import ConversationBuffer
from flowdrop_core.messages import InvalidMessagesError
from flowdrop_core.storage import (
    Delta,
    LiveStore,
    MemoryStore,
    Op,
    RevisionConflict,
    StorageError,
    Store,
)

CTX = {"session_id": "s1"}
SLOT = ("session", "s1", "chat_history")


def user(text: str) -> dict[str, Any]:
    return {"role": "user", "content": text}


class NoLiveWrites(MemoryStore):
    """A memory store whose live path must not be used (it fails the test if it is)."""

    def apply(self, *args: Any, **kwargs: Any) -> str:
        raise AssertionError("a live append called apply")

    def lock(self, *args: Any, **kwargs: Any) -> Any:
        raise AssertionError("a live append took the slot lock")


def _report(res: Any) -> tuple[Any, ...]:
    return (res.count, res.appended, res.appended_any, res.events, res.serialized, res.refused)


def test_an_append_on_the_memory_store_is_one_live_step() -> None:
    store = NoLiveWrites()
    assert isinstance(store, LiveStore) and not isinstance(SpyStore(), LiveStore)
    buf = ConversationBuffer(store=store)
    first = buf.append(user("one"), CTX)
    second = buf.append([user("two"), user("three")], CTX)
    assert [m["content"] for m in first.messages or []] == ["one"]  # its own buffer, kept
    assert [m["content"] for m in second.messages or []] == ["one", "two", "three"]
    assert second.serialized is True and second.resolved_scope_id == "s1"
    assert store.read(*SLOT).value == second.messages
    assert store.listing() == {SLOT: (3, None)}


@given(
    batches=st.lists(conversations, min_size=1, max_size=6),
    window=windows,
    start=stored_buffers,
    read_late=st.booleans(),
)
@settings(max_examples=examples(150), deadline=None)
def test_the_live_path_reports_what_the_general_path_reports(
    batches: list[list[dict[str, Any]]],
    window: int,
    start: list[dict[str, Any]],
    read_late: bool,
) -> None:
    live_store, general_store = MemoryStore(), SpyStore()  # SpyStore has no apply_live
    live_store.set(*SLOT, start)
    general_store.set(*SLOT, start)
    live = ConversationBuffer(store=live_store, max_messages=window)
    general = ConversationBuffer(store=general_store, max_messages=window)
    kept: list[tuple[Any, Any]] = []
    for batch in batches:
        a, b = live.append(batch, CTX), general.append(batch, CTX)
        assert _report(a) == _report(b)
        if read_late:
            kept.append((a, b))  # messages read only after the later appends
        else:
            assert a.messages == b.messages
    for a, b in kept:
        assert a.messages == b.messages
    assert live_store.read(*SLOT).value == general_store.read(*SLOT).value


def test_every_other_read_and_write_sees_the_live_slot_and_is_seen() -> None:
    store = MemoryStore()
    buf = ConversationBuffer(store=store)
    buf.append([user("a"), user("b")], CTX)
    rev = store.revision(*SLOT)
    got, found = store.get(*SLOT)
    assert found and [m["content"] for m in got] == ["a", "b"]
    got.append(user("not stored"))  # a read is a new list
    assert len(store.read(*SLOT).value) == 2
    # a conditional write on the live slot (what the OpenAI Agents session's pop does)
    last = store.read(*SLOT).value[-1]
    store.apply(*SLOT, Delta((Op("delete", 1, last),), 1), expected=rev)
    assert [m["content"] for m in buf.append(user("c"), CTX).messages or []] == ["a", "c"]
    store.set(*SLOT, [user("replaced")])
    assert [m["content"] for m in buf.append(user("d"), CTX).messages or []] == ["replaced", "d"]
    assert store.delete(*SLOT) is True
    assert [m["content"] for m in buf.append(user("e"), CTX).messages or []] == ["e"]


def test_buffers_with_other_windows_share_the_slot() -> None:
    store = MemoryStore()
    wide = ConversationBuffer(store=store, max_messages=0)
    narrow = ConversationBuffer(store=store, max_messages=2)
    wide.append([user("1"), user("2"), user("3")], CTX)
    res = narrow.append(user("4"), CTX)
    assert [m["content"] for m in res.messages or []] == ["3", "4"]
    assert [e.kind.value for e in res.events].count("evicted") == 2
    assert [m["content"] for m in wide.append(user("5"), CTX).messages or []] == ["3", "4", "5"]


def test_a_bad_message_changes_nothing() -> None:
    store = MemoryStore()
    buf = ConversationBuffer(store=store)
    buf.append(user("kept"), CTX)
    rev = store.revision(*SLOT)
    with pytest.raises(InvalidMessagesError):
        buf.append([user("fine"), {"role": "robot", "content": "x"}], CTX)
    assert store.revision(*SLOT) == rev
    assert [m["content"] for m in store.read(*SLOT).value] == ["kept"]


def test_an_append_that_changes_nothing_creates_no_slot() -> None:
    store = MemoryStore()
    res = ConversationBuffer(store=store).append(user(""), CTX)  # MEM-16: a pure read
    assert res.count == 0 and res.appended == 0
    assert store.read(*SLOT).found is False and store.revision(*SLOT) is None


@pytest.mark.parametrize(
    ("value", "what"),
    [({"not": "a list"}, "dict"), ([user("ok"), "text"], "entry 1 is str")],
)
def test_a_bad_stored_value_is_a_located_error(value: Any, what: str) -> None:
    store = MemoryStore()
    store.set(*SLOT, value)
    rev = store.revision(*SLOT)
    with pytest.raises(StorageError, match=what) as err:
        ConversationBuffer(store=store).append(user("x"), CTX)
    assert "s1" in str(err.value)  # names the slot
    assert store.revision(*SLOT) == rev


def test_a_held_slot_lock_still_serializes_a_live_append() -> None:
    """MEM-12: while a holder has the slot lock, the append waits for it (no live step)."""
    store: Store = MemoryStore()
    buf = ConversationBuffer(store=store, lock_timeout=5.0)
    buf.append(user("before"), CTX)
    landed = threading.Event()

    def append() -> None:
        buf.append(user("after the holder"), CTX)
        landed.set()

    with store.lock(*SLOT, 1.0) as held:
        assert held
        worker = threading.Thread(target=append)
        worker.start()
        assert not landed.wait(0.3)  # it waits for the lock instead of appending live
        value = store.read(*SLOT).value
        store.set(*SLOT, [*value, user("holder")])  # the holder's own read-modify-write
    worker.join(5)
    assert landed.is_set()
    contents = [m["content"] for m in store.read(*SLOT).value]
    assert contents == ["before", "holder", "after the holder"]


def test_threads_appending_live_lose_no_turn() -> None:
    store = MemoryStore()
    buf = ConversationBuffer(store=store)

    def run(n: int) -> None:
        for i in range(200):
            buf.append(user(f"{n}-{i}"), CTX)

    threads = [threading.Thread(target=run, args=(n,)) for n in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    contents = [m["content"] for m in store.read(*SLOT).value]
    assert sorted(contents) == sorted(f"{n}-{i}" for n in range(4) for i in range(200))
    for n in range(4):  # each thread's turns in its own order
        mine = [c for c in contents if c.startswith(f"{n}-")]
        assert mine == [f"{n}-{i}" for i in range(200)]


def test_a_live_append_moves_the_revision_a_reader_holds() -> None:
    """A live append marks the slot changed; its new token is made when first asked for."""
    store = MemoryStore()
    buf = ConversationBuffer(store=store)
    buf.append({"role": "user", "content": "a"}, CTX)
    slot = next(iter(store.slots()))
    before = store.revision(*slot)
    assert before is not None and store.revision(*slot) == before  # asked twice: one token
    buf.append({"role": "user", "content": "b"}, CTX)
    buf.append({"role": "user", "content": "c"}, CTX)
    after = store.revision(*slot)
    assert after is not None and after != before
    assert store.read(*slot).revision == after
    with pytest.raises(RevisionConflict):  # a write based on what was read before
        store.set(*slot, [], expected=before)
    buf.append({"role": "user", "content": ""}, CTX)  # a pure read: nothing changed
    assert store.revision(*slot) == after
    store.set(*slot, [], expected=after)
    assert store.read(*slot).value == []
