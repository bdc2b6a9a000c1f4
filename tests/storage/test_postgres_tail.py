"""The one-statement Postgres append against the reference semantics, on a real server.

The usual append (entries appended at the end, the window evicting from the
front) is one SQL statement (``PostgresStore._tail_steps``); any other change
is the transaction of several. Random changes of that shape, applied through
the store, must leave exactly what :func:`apply_ops` leaves on a list, and a
buffer on Postgres must report and store what the same buffer on the memory
store reports and stores, journal included.
"""

from __future__ import annotations

import uuid
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from strategies import conversations, examples, windows

from flowdrop_core.conversation import ConversationBuffer
from flowdrop_core.journal import journal_for
from flowdrop_core.storage import Delta, MemoryStore, Op, Snapshot
from flowdrop_core.storage._base import apply_ops

pytest.importorskip("psycopg", reason="psycopg is not installed (the 'postgres' extra)")

from flowdrop_core.storage.postgres import PostgresStore, _tail_shape

CTX = {"session_id": "tail"}


def _user(text: str) -> dict[str, Any]:
    return {"role": "user", "content": text}


@st.composite
def _tail_deltas(draw: st.DrawFn, size: int) -> Delta:
    """Appends at the end and deletions of the first entry, in any order."""
    ops = []
    running = size
    for n in range(draw(st.integers(1, 6))):
        if running and draw(st.booleans()):
            ops.append(Op("delete", 0, None))
            running -= 1
        else:
            ops.append(Op("insert", running, _user(f"added {n}")))
            running += 1
    return Delta(tuple(ops), running)


@pytest.fixture(scope="module")
def tail_store(postgres_server: Any) -> Any:
    """A store on a schema of its own (every example uses its own slot)."""
    if postgres_server.proc is None:  # a test stopped it and failed before restarting
        postgres_server.start()
    store = PostgresStore(postgres_server.url, schema=f"tail_{uuid.uuid4().hex[:8]}")
    yield store
    store.close()


@settings(
    max_examples=examples(40),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(data=st.data())
def test_tail_changes_leave_what_the_reference_leaves(tail_store: Any, data: Any) -> None:
    slot = ("session", uuid.uuid4().hex, "k")
    start = [_user(f"e{k}") for k in range(data.draw(st.integers(1, 5)))]
    rev = tail_store.set(*slot, start)
    expected = list(start)
    for _ in range(3):
        delta = data.draw(_tail_deltas(len(expected)))
        rev = tail_store.apply(*slot, delta, expected=rev)
        apply_ops(expected, delta.ops)
        assert tail_store.read(*slot) == Snapshot(expected, True, rev)


@settings(
    max_examples=examples(30),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(batches=st.lists(conversations, min_size=1, max_size=6), window=windows)
def test_a_buffer_on_postgres_reports_and_stores_what_it_does_in_memory(
    tail_store: Any, batches: list[list[dict[str, Any]]], window: int
) -> None:
    key = uuid.uuid4().hex
    memory = MemoryStore()
    on_pg = ConversationBuffer(store=tail_store, key=key, max_messages=window, journal=3)
    in_memory = ConversationBuffer(store=memory, key=key, max_messages=window, journal=3)
    for batch in batches:
        a, b = on_pg.append(batch, CTX), in_memory.append(batch, CTX)
        assert (a.count, a.appended, a.events) == (b.count, b.appended, b.events)
        assert a.messages == b.messages
    slot = ("session", "tail", key)
    assert tail_store.read(*slot).value == memory.read(*slot).value
    assert [r.seq for r in journal_for(tail_store).read(slot)] == [
        r.seq for r in journal_for(memory).read(slot)
    ]


def test_the_shape_is_the_usual_append_only() -> None:
    """Evictions first or last, several appends; anything else is the general path."""
    a, b = _user("a"), _user("b")
    assert _tail_shape(Delta((Op("insert", 3, a),), 4)) == (0, 3, [0])
    assert _tail_shape(Delta((Op("insert", 3, a), Op("delete", 0, None)), 3)) == (1, 3, [0])
    assert _tail_shape(Delta((Op("delete", 0, None), Op("insert", 2, a)), 3)) == (1, 3, [1])
    assert _tail_shape(Delta((Op("insert", 1, a), Op("insert", 2, b)), 3)) == (0, 1, [0, 1])
    assert _tail_shape(Delta((Op("insert", 2, a),), 4)) is None  # not at the end: count says 4
    assert _tail_shape(Delta((Op("replace", 0, a),), 1)) is None  # MEM-10 in place
    assert _tail_shape(Delta((Op("delete", 0, None),), 2)) is None  # nothing appended
    assert _tail_shape(Delta((Op("insert", 0, a), Op("delete", 0, None)), 0)) is None  # own
