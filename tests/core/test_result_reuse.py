"""The lean append's bookkeeping: results reused only once let go of, decisions kept as nodes.

``Buffer.append`` records its commonest decisions (the message it appends
first, each eviction) as the node itself and reuses the result object the
previous append returned when nobody holds it any more. Neither may ever
be visible: a held result never changes, a reused one carries nothing over,
and the decisions read back are the ones the append made.
"""

from __future__ import annotations

import sys

import pytest

from flowdrop_core import Buffer
from flowdrop_core.events import EventKind
from flowdrop_core.messages import PLACEHOLDER_CONTENT


def _user(k: int) -> dict[str, str]:
    return {"role": "user", "content": f"m{k}"}


def test_a_held_result_never_changes_when_the_buffer_appends_again() -> None:
    buf = Buffer(max_messages=2)
    held = [buf.append(_user(k)) for k in range(5)]
    later = [buf.append(_user(k)) for k in range(5, 9)]
    for k, result in enumerate(held):
        assert (result.count, result.appended, result.appended_any) == (min(k + 1, 2), 1, True)
        assert result.events[0].entry == {"role": "user", "content": f"m{k}", "metadata": {}}
    assert len({id(r) for r in held + later}) == len(held) + len(later)


@pytest.mark.skipif(sys.implementation.name != "cpython", reason="reuse needs reference counts")
def test_a_result_let_go_of_is_reused_and_carries_nothing_over() -> None:
    buf = Buffer(max_messages=1)
    first = buf.append(_user(0))
    first.messages = [{"role": "user", "content": "stale"}]
    first.events  # noqa: B018  # made and kept as a tuple
    address = id(first)
    del first
    second = buf.append([_user(1), _user(2)])
    assert id(second) == address  # the same object, filled afresh
    assert second.messages is None
    assert (second.count, second.appended, second.max_messages) == (1, 2, 1)
    assert [e.kind for e in second.events] == [
        EventKind.APPENDED,
        EventKind.APPENDED,
        EventKind.EVICTED,
        EventKind.EVICTED,
    ]
    assert [e.position for e in second.events[:2]] == [1, 2]


def test_the_appended_node_reads_back_at_its_position_after_several_evictions() -> None:
    buf = Buffer([_user(k) for k in range(5)], max_messages=2)  # loaded over its window
    result = buf.append(_user(5))
    first, *evicted = result.decisions()
    assert first[:4] == (EventKind.APPENDED, "MEM-14", 0, 5)
    assert [d[0] for d in evicted] == [EventKind.EVICTED] * 4
    assert result.events[0].position == 5 and result.count == 2


def test_reassigning_count_does_not_move_the_recorded_position() -> None:
    buf = Buffer([_user(0), _user(1)])
    result = buf.append(_user(2))
    result.count = 99
    assert result.events[0].position == 2


def test_a_batch_records_its_first_appended_message_where_it_went() -> None:
    buf = Buffer([_user(0)])
    result = buf.append([_user(1), {"role": "assistant", "content": "a"}])
    assert [d[:4] for d in result.decisions()] == [
        (EventKind.APPENDED, "MEM-14", 0, 1),
        (EventKind.APPENDED, "MEM-14", 1, 2),
    ]


def test_a_healed_result_appended_keeps_its_own_entry_after_a_real_one_replaces_it() -> None:
    call = {"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{}"}}
    buf = Buffer([{"role": "assistant", "content": None, "tool_calls": [call]}])
    healed = {
        "role": "tool",
        "content": PLACEHOLDER_CONTENT,
        "metadata": {"tool_call_id": "c1", "healed": True},
    }
    first = buf.append(healed)
    buf.append({"role": "tool", "content": "real", "tool_call_id": "c1"})  # MEM-10
    assert buf.messages()[1]["content"] == "real"
    event = first.events[0]
    assert event.kind is EventKind.APPENDED and event.entry is not None
    assert event.entry["content"] == PLACEHOLDER_CONTENT


@pytest.mark.parametrize(
    ("implementation", "version", "gil", "source", "proven"),
    [
        ("cpython", (3, 11), True, "engine.py", True),
        ("cpython", (3, 13), True, "engine.py", True),
        ("cpython", (3, 10), True, "engine.py", False),  # below requires-python
        ("cpython", (3, 14), True, "engine.py", False),  # may borrow a local
        ("cpython", (3, 12), False, "engine.py", False),  # free-threaded
        ("cpython", (3, 12), True, "engine.cpython-312-x86_64-linux-gnu.so", False),  # mypyc
        ("pypy", (3, 11), True, "engine.py", False),
    ],
)
def test_reuse_by_count_only_where_the_count_is_proven(
    implementation: str, version: tuple[int, int], gil: bool, source: str, proven: bool
) -> None:
    from flowdrop_core import engine

    assert engine._reuse_proven(implementation, version, gil, source) is proven


def _holds(holder: object, obj: object) -> bool:
    """Whether ``holder`` references ``obj`` (the garbage collector's view)."""
    import gc

    return any(ref is holder for ref in gc.get_referrers(obj))


@pytest.mark.skipif(sys.implementation.name != "cpython", reason="reuse needs reference counts")
def test_a_large_batch_result_is_not_kept_so_the_next_append_frees_nothing() -> None:
    """The buffer keeps a result for reuse only when it is small: a caller letting go of
    a large batch's result frees its events then, not during the next append."""
    buf = Buffer()
    big = buf.append([_user(k) for k in range(1_000)])
    assert big.appended == 1_000
    assert not _holds(buf, big)
    del big
    small = buf.append(_user(1_000))
    assert _holds(buf, small)  # a one-message result is still kept for reuse
    assert small.events[0].position == 1_000


def test_a_large_result_of_the_conversation_layer_is_not_kept_by_its_slot() -> None:
    from flowdrop_core.conversation import ConversationBuffer

    conv = ConversationBuffer()
    big = conv.append([_user(k) for k in range(1_000)], {"session_id": "s"})
    assert big.appended == 1_000 and big.count == 1_000
    import gc

    assert not any(type(ref).__name__ == "_ScopedBuffer" for ref in gc.get_referrers(big))
