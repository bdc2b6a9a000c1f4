"""Format detection of nested values (a trace's inputs and outputs) and the registry's API.

A trace (Langfuse) holds messages in any format; each nested value is read by
the format that reads it completely, its origins sit under the value's place
in the file, and when no format reads it the note names the format that read
furthest.
"""

from __future__ import annotations

import dataclasses
import json
import sys
import threading
from typing import Any

import pytest
from test_importers_edges import generation, imported, notes, rows

from flowdrop_core.importers import REGISTRY, load_conversation, parse_conversation

OTEL_USER = {"role": "user", "parts": [{"type": "text", "content": "hi"}]}
GEMINI_MODEL = {"role": "model", "parts": [{"text": "yo"}]}


def test_nested_messages_are_read_by_the_format_that_reads_them_completely() -> None:
    """OpenAI Chat reads OTel or Gemini messages only with a note (their 'parts' left
    out); detection goes on to the format that reads them with none."""
    got = imported([generation(input=[OTEL_USER], output=[GEMINI_MODEL])], "langfuse")
    assert rows(got) == [("user", "hi", None, None), ("assistant", "yo", None, None)]
    assert got.origins == ["[0].input[0]", "[0].output[0]"]
    assert notes(got) == []


def test_a_whole_nested_value_read_as_one_message_is_located_at_the_value() -> None:
    got = imported(
        {
            "trace": {"id": "t", "output": {"role": "assistant", "content": "a"}},
            "observations": [generation()],
        },
        "langfuse",
    )
    assert rows(got) == [("assistant", "a", None, None)]
    assert got.origins == ["trace.output"]


def test_nested_value_no_format_reads_names_the_format_that_read_furthest() -> None:
    """Gemini reads this output as far as contents[0].parts; every other format
    refuses it at the top, so the note gives Gemini's problem."""
    output = {"contents": [{"role": "model", "parts": 5}]}
    got = imported([generation(input="q", output=output)], "langfuse")
    assert rows(got) == [("user", "q", None, None)]
    assert notes(got) == [
        (
            "[0].output",
            "generation output in no known format",
            "no format reads it (expected a list, got number (read as gemini))",
        )
    ]
    assert got.notes[0].content == json.dumps(output)


def test_orphan_result_in_a_file_is_imported_unless_strict_is_asked(tmp_path: Any) -> None:
    path = tmp_path / "orphan.json"
    path.write_text(
        json.dumps([{"role": "user", "content": "hi"}, {"role": "tool", "tool_call_id": "x", "content": "r"}]),
        encoding="utf-8",
    )  # fmt: skip
    got = load_conversation(path)
    assert got.messages[1] == {"role": "tool", "content": "r", "tool_call_id": "x"}
    with pytest.raises(ValueError, match="tool result for call 'x' whose call never appears"):
        load_conversation(path, strict=True)


def test_formats_and_imported_conversations_cannot_be_changed_by_a_caller() -> None:
    got = imported([{"role": "user", "content": "hi"}], "openai-chat")
    with pytest.raises(dataclasses.FrozenInstanceError):
        got.format = "anthropic"  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        REGISTRY[0].name = "other"  # type: ignore[misc]


def test_trace_nested_past_the_stack_keeps_the_unread_part_in_a_note_never_a_half_read() -> None:
    """Traces nest traces (a generation's input may be a trace); a caller with little
    stack left (here a thread with a low recursion limit) must get the part no
    reader could finish as a note, not a reader's half-done output taken as read."""
    value: Any = [{"role": "user", "content": "hi"}]
    for level in range(45):  # 90 JSON levels: the parser needs ~100 frames, the readers ~180
        value = [generation(id=f"g{level}", input=value)]
    text = json.dumps(value)
    got: list[Any] = []
    old = sys.getrecursionlimit()
    sys.setrecursionlimit(140)
    try:
        worker = threading.Thread(target=lambda: got.append(parse_conversation(text)))
        worker.start()
        worker.join()
    finally:
        sys.setrecursionlimit(old)
    (conversation,) = got
    assert conversation.format == "langfuse"
    assert conversation.messages == []
    assert [n.what for n in conversation.notes] == ["generation input in no known format"]
    assert '"content": "hi"' in conversation.notes[0].content
