"""Nesting depth stays inside the error tree: a message nested deeper than the library
reads is refused with one located ``FlowdropError`` on every store, with or without the
journal, and nothing is written; a message at the limit is stored and read back."""

from __future__ import annotations

from typing import Any

import pytest

from flowdrop_core._errors import FlowdropError
from flowdrop_core.conversation import ConversationBuffer
from flowdrop_core.journal import journal_for
from flowdrop_core.messages import InvalidMessagesError, read_message
from flowdrop_core.nesting import MAX_ENTRY_DEPTH, MAX_MESSAGE_DEPTH
from flowdrop_core.storage import StorageError, Store

CTX = {"session_id": "s1"}
SLOT = ("session", "s1", "chat_history")


def nested(levels: int) -> Any:
    """A value that is ``levels`` containers deep (lists and objects by turns)."""
    value: Any = "leaf"
    for n in range(levels):
        value = {"a": value} if n % 2 else [value]
    return value


def message(total: int) -> dict[str, Any]:
    """A user message nesting ``total`` levels in all (the message itself is level 1)."""
    return {"role": "user", "content": "hi", "extra": nested(total - 1)}


@pytest.mark.parametrize(
    ("journal", "levels"),
    # Past the interpreter's recursion limit with and without the journal (the message is
    # refused before either writes), and far past it once (the walk never recurses).
    [(0, 1_200), (10, 1_200), (0, 100_000)],
    ids=["no-journal-1200", "journal-1200", "no-journal-100000"],
)
def test_a_message_nested_too_deep_is_a_located_error_and_writes_nothing(
    store: Store, journal: int, levels: int
) -> None:
    buf = ConversationBuffer(scope="session", store=store, journal=journal)
    buf.append({"role": "user", "content": "before"}, CTX)
    before = store.get(*SLOT)
    records = journal_for(store).read(SLOT)
    with pytest.raises(FlowdropError) as err:
        buf.append([{"role": "assistant", "content": "ok"}, message(levels)], CTX)
    assert isinstance(err.value, InvalidMessagesError)
    text = str(err.value)
    assert "incoming[1]" in text
    assert f"nested more than {MAX_MESSAGE_DEPTH} levels" in text
    assert "extra" in text  # the path to where it goes too deep
    assert store.get(*SLOT) == before
    assert journal_for(store).read(SLOT) == records


@pytest.mark.parametrize("journal", [0, 10], ids=["no-journal", "journal"])
def test_a_message_at_the_limit_is_stored_and_read_back(store: Store, journal: int) -> None:
    buf = ConversationBuffer(scope="session", store=store, journal=journal)
    deepest = message(MAX_MESSAGE_DEPTH)
    assert not isinstance(read_message(deepest), str)
    buf.append(deepest, CTX)
    value, found = store.get(*SLOT)
    assert found and value[0]["extra"] == deepest["extra"]
    assert buf.read(CTX).messages == value


def test_a_call_list_moved_under_metadata_is_still_readable(store: Store) -> None:
    """The stored row puts ``tool_calls`` one level deeper, within the entries' bound."""
    function: dict[str, Any] = {"name": "f", "arguments": "{}", "x": nested(MAX_MESSAGE_DEPTH - 4)}
    call = {"id": "c1", "type": "function", "function": function}
    turn = {"role": "assistant", "content": None, "tool_calls": [call]}
    assert not isinstance(read_message(turn), str)
    buf = ConversationBuffer(scope="session", store=store)
    buf.append([{"role": "user", "content": "go"}, turn], CTX)
    value, _ = store.get(*SLOT)
    assert value[1]["metadata"]["tool_calls"] == [call]


def test_read_message_and_the_engine_agree_on_depth() -> None:
    too_deep = message(MAX_MESSAGE_DEPTH + 1)
    problem = read_message(too_deep)
    assert isinstance(problem, str) and f"more than {MAX_MESSAGE_DEPTH} levels" in problem
    for shape in (
        {"role": "user", "content": nested(MAX_MESSAGE_DEPTH)},  # the commonest shape
        {"role": "tool", "content": nested(MAX_MESSAGE_DEPTH), "tool_call_id": "c1"},
        {"role": "user", "content": "x", "metadata": {"m": nested(MAX_MESSAGE_DEPTH - 1)}},
    ):
        assert isinstance(read_message(shape), str)
        with pytest.raises(InvalidMessagesError, match="nested more than"):
            ConversationBuffer(scope="session").append(shape, CTX)


def test_set_refuses_a_value_deeper_than_a_read_accepts(store: Store) -> None:
    if store.kind == "memory":  # type: ignore[attr-defined]
        pytest.skip("the memory store keeps Python objects; nothing is encoded or decoded")
    with pytest.raises(StorageError, match=f"nested more than {MAX_ENTRY_DEPTH} levels"):
        store.set(*SLOT, [{"role": "user", "content": nested(1_200)}])
    with pytest.raises(StorageError, match=f"nested more than {MAX_ENTRY_DEPTH} levels"):
        store.set(*SLOT, [{"role": "user", "content": nested(MAX_ENTRY_DEPTH)}])
    assert store.get(*SLOT) == (None, False)
    store.set(*SLOT, [{"role": "user", "content": nested(MAX_ENTRY_DEPTH - 1)}])
    assert store.get(*SLOT)[1]
