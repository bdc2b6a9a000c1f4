"""The plain result types: their dicts match their JSON Schema, and read back the same."""

from __future__ import annotations

import json
import logging
import pickle

import pytest

from flowdrop_core import (
    AppendResult,
    Buffer,
    ConversationBuffer,
    MemoryReadResult,
    ScopedAppendResult,
    read_memory,
)
from flowdrop_core._result_schema import (
    AppendResultDict,
    MemoryReadResultDict,
    ScopedAppendResultDict,
    schema_model,
)
from flowdrop_core.storage import MemoryStore

CTX = {"session_id": "s1"}


def _rich_results() -> list[AppendResult]:
    """Results of every shape: evictions, heals, a refusal, a read, a scoped append."""
    buf = Buffer(max_messages=2)
    turn = {"role": "assistant", "content": None, "tool_calls": [{"id": "c1"}]}
    results: list[AppendResult] = [
        buf.append([{"role": "user", "content": "a"}, turn]),
        buf.append({"role": "user", "content": "b"}),  # heals c1, evicts
        buf.append([]),
    ]
    conv = ConversationBuffer(max_messages=3)
    results.append(conv.append([{"role": "user", "content": "x"}, turn], CTX))
    results.append(conv.read(CTX))
    logging.disable(logging.WARNING)
    try:
        results.append(conv.append({"role": "user", "content": "y"}, {}))  # refused (MEM-7)
    finally:
        logging.disable(logging.NOTSET)
    return results


def test_every_result_dict_is_valid_under_its_schema_model_and_reads_back() -> None:
    for result in _rich_results():
        data = json.loads(result.to_json())
        assert data == json.loads(json.dumps(result.to_dict()))
        model = schema_model(type(result))
        assert model is (
            ScopedAppendResultDict if isinstance(result, ScopedAppendResult) else AppendResultDict
        )
        parsed = model.model_validate(data)  # extra="forbid": no field the schema misses
        assert parsed.count == result.count
        again = type(result).from_dict(data)
        assert again == result.replace(events=again.events) and again.events == result.events
        assert pickle.loads(pickle.dumps(result)) == result


def test_the_json_schema_names_every_field_and_the_event_kinds() -> None:
    schema = ScopedAppendResult.json_schema()
    assert set(schema["properties"]) == set(ScopedAppendResult.FIELDS)
    assert set(schema["required"]) >= {"count", "appended", "appended_any", "scope", "key"}
    kinds = schema["$defs"]["EventKind"]["enum"]
    assert "placeholder_inserted" in kinds and "refused" in kinds
    assert schema["$defs"]["Scope"]["enum"][-1] == "user"


def test_a_memory_read_is_frozen_and_serializes() -> None:
    store = MemoryStore()
    store.set("user", "7", "prefs", {"lang": "pt"})
    res = read_memory(store, "user", "prefs", None, {"user_id": 7})
    assert (res.value, res.found, res.resolved_scope_id) == ({"lang": "pt"}, True, "7")
    with pytest.raises(AttributeError, match="frozen"):
        res.found = False  # type: ignore[misc]
    data = json.loads(res.to_json())
    assert data["scope"] == "user" and MemoryReadResultDict.model_validate(data).found
    assert MemoryReadResult.from_dict(data) == res
    assert pickle.loads(pickle.dumps(res)) == res
    assert set(MemoryReadResult.json_schema()["properties"]) == set(MemoryReadResult.FIELDS)
    assert repr(res).startswith("MemoryReadResult(value={'lang': 'pt'}, found=True")


def test_results_are_slotted_and_their_events_are_made_once() -> None:
    """Plain slotted results (no per-result ``__dict__``), events built on first read and kept."""
    for res in _rich_results():
        assert not hasattr(res, "__dict__"), type(res).__name__
        with pytest.raises(AttributeError):
            res.not_a_field = 1  # type: ignore[attr-defined]
        assert res.events is res.events  # made once, then the same tuple


def test_a_conversation_buffer_says_what_it_is_in_its_repr() -> None:
    """A log line or a debugger shows the scope, key, window and store, not an address."""
    from flowdrop_core import ConversationBuffer

    text = repr(ConversationBuffer(scope="user", key="chat", max_messages=7))
    assert text.startswith("ConversationBuffer(scope='user', key='chat', max_messages=7, store=")
