"""The importers' shared pieces, as callers see them: notes and the JSON text of left-out values."""

from __future__ import annotations

import dataclasses
import json
from typing import Any

import pytest

from flowdrop_core.importers import ConversationFormatError, ImportNote, parse_conversation
from flowdrop_core.importers.base import Out, Problem, as_text, json_text, last_call, parts_text


def test_import_notes_are_values_that_cannot_be_changed_after_the_import() -> None:
    """An import's notes may be shared (a trace's earlier calls): no caller can alter one."""
    document = {"messages": [{"role": "user", "content": [{"type": "thinking", "thinking": "x"}]}]}
    got = parse_conversation(json.dumps(document), format="anthropic")
    (note,) = got.notes
    with pytest.raises(dataclasses.FrozenInstanceError):
        note.where = "elsewhere"  # type: ignore[misc]
    assert note.where == "messages[0].content[0]"
    same = ImportNote(note.where, note.what, note.why, note.content, note.unknown)
    assert {note, same} == {note}


def test_a_value_json_cannot_write_is_shown_as_its_str() -> None:
    """Helpers never crash on a left-out value: what JSON cannot write is shown as ``str``."""
    assert json_text(b"raw") == "b'raw'"
    assert as_text({1, 2}) == "{1, 2}"
    loop: list[object] = []
    loop.append(loop)
    assert json_text(loop) == "[[...]]"
    assert json_text({"a": ["é", 1]}) == '{"a": ["é", 1]}'


def test_anthropic_system_blocks_must_be_objects_a_bare_string_is_refused() -> None:
    """Only formats that allow bare strings as parts (LangChain) read them as text."""
    document = {"system": ["be brief"], "messages": [{"role": "user", "content": "hi"}]}
    with pytest.raises(ConversationFormatError) as info:
        parse_conversation(json.dumps(document), format="anthropic")
    assert str(info.value) == (
        "<text> is not valid anthropic: system[0]: expected a content part object, got string"
    )


def test_parts_with_bare_strings_allowed_join_every_part() -> None:
    out = Out()
    parts = ["a", {"type": "text", "text": "b"}, "c"]
    assert parts_text(parts, "content", out, "fmt", {"text": "text"}, strings=True) == "a\nb\nc"
    assert out.notes == []


def test_the_last_call_of_no_calls_is_a_problem_not_a_crash() -> None:
    with pytest.raises(Problem) as info:
        last_call([], Out(), "why")
    assert str(info.value) == "no model call with messages in the trace"


def request(*messages: dict[str, Any]) -> dict[str, Any]:
    return {"model": "gpt-4o", "messages": list(messages)}


def test_a_message_only_earlier_calls_held_is_one_note_however_many_held_it() -> None:
    gone = {"role": "user", "content": "forgotten"}
    kept = {"role": "user", "content": "kept"}
    got = parse_conversation(json.dumps([request(gone), request(gone), request(kept)]))
    assert got.format == "openai-chat"
    assert got.messages == [kept]
    assert [(n.where, n.what, n.content) for n in got.notes] == [
        ("[0].messages[0]", "message of call [0]", json.dumps(gone)),
    ]


def test_a_note_repeated_by_earlier_calls_is_kept_once() -> None:
    odd = {"role": "user", "content": [{"type": "sticker", "text": "wave"}]}
    kept = {"role": "user", "content": "kept"}
    got = parse_conversation(
        json.dumps([request(odd), request(odd), request(kept)]), format="openai-chat"
    )
    assert got.messages == [kept]
    assert [(n.where, n.what) for n in got.notes] == [
        ("[0].messages[0]", "message of call [0]"),
        ("[0].messages[0].content[0]", "unknown content part type 'sticker'"),
    ]


def test_legacy_function_calls_repeated_by_each_request_are_the_same_messages() -> None:
    """Made-up call ids differ per request; the call and its result still match the last one's."""
    asked = {"role": "user", "content": "weather?"}
    calls = {
        "role": "assistant",
        "content": None,
        "function_call": {"name": "f", "arguments": "{}"},
    }
    result = {"role": "function", "name": "f", "content": "cold"}
    first = request(asked, calls, result)
    last = request(asked, calls, result, {"role": "assistant", "content": "It is cold."})
    got = parse_conversation(json.dumps([first, last]))
    made_up = "[1].messages[1].function_call"
    assert got.messages[2] == {"role": "tool", "content": "cold", "tool_call_id": made_up}
    assert len(got.messages) == 4
    assert got.notes == []


def test_a_text_part_without_string_text_is_a_located_error() -> None:
    document = {"system": [{"type": "text", "text": 5}], "messages": []}
    with pytest.raises(ConversationFormatError) as info:
        parse_conversation(json.dumps(document), format="anthropic")
    assert str(info.value) == (
        "<text> is not valid anthropic: system[0]: text part without a string 'text'"
    )
