"""Format detection of nested values (a trace's inputs and outputs) and the registry's API.

A trace (Langfuse) holds messages in any format; each nested value is read by
the format that reads it completely, its origins sit under the value's place
in the file, and when no format reads it the note names the format that read
furthest.
"""

from __future__ import annotations

import dataclasses
import json
import re
import sys
import threading
from typing import Any

import pytest
from test_importers_edges import generation, imported, notes, rows

from flowdrop_core.importers import (
    FORMATS,
    REGISTRY,
    Claim,
    ConversationFormatError,
    Miss,
    load_conversation,
    parse_conversation,
)

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
            "no format reads it (expected a list of parts (nearest format: gemini))",
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

    def run() -> None:
        try:
            parse_conversation(text)
        except ConversationFormatError as exc:
            got.append(exc)

    old = sys.getrecursionlimit()
    sys.setrecursionlimit(140)
    try:
        worker = threading.Thread(target=run)
        worker.start()
        worker.join()
    finally:
        sys.setrecursionlimit(old)
    (error,) = got
    assert error.problems["langfuse"] == (
        "no message: all 1 items read are notes "
        "(the first: [0].input: generation input in no known format)"
    )


# --------------------------------------------------------------------------- positive detection


def test_every_format_declares_its_claim_next_to_its_reader() -> None:
    """A format is a module with NAME, EXPECTS, claims and read (or read_text)."""
    for spec in REGISTRY:
        assert callable(spec.claims), spec.name
        assert (spec.read is None) != (spec.read_text is None), spec.name


def test_only_claiming_formats_are_read_and_the_rest_say_what_they_lacked() -> None:
    """A list of role + parts messages with text in 'text' (no format's shape): before,
    Chat 'read' it as messages with content null; now nobody claims it, and the error
    names the nearest formats with what each lacks."""
    document = [{"id": "m1", "role": "user", "parts": [{"type": "text", "text": "hi"}]}]
    with pytest.raises(ConversationFormatError) as info:
        parse_conversation(json.dumps(document), source_name="ui.json")
    message = str(info.value)
    assert message.startswith("no known format matched ui.json:\n")
    assert "- otel-genai: [0].parts[0]: a text part without a string 'content'" in message
    assert "- openai-chat: [0]: no 'content', 'tool_calls' or 'tool_call_id'" in message
    assert info.value.problems["gemini"] == (
        "[0].parts[0]: a typed part (Gemini parts have no 'type' or 'part_kind')"
    )


def test_a_plain_role_list_is_not_claimed_by_langchain() -> None:
    """Plain role dicts are Chat's; LangChain claims a list only with a LangChain-typed message."""
    plain = [{"role": "user", "content": "hi"}]
    verdicts = {spec.name: spec.claims(plain) for spec in REGISTRY if spec.read is not None}
    assert isinstance(verdicts["langchain"], Miss)
    assert isinstance(verdicts["openai-chat"], Claim)
    typed = [*plain, {"type": "ai", "content": "yo"}]
    assert isinstance(REGISTRY[FORMATS.index("langchain")].claims(typed), Claim)


@pytest.mark.parametrize(
    ("document", "problem"),
    [
        ([], "an empty list"),
        ({"messages": []}, "messages: an empty list"),
        ({"output": [{"type": "reasoning", "summary": []}]}, "no message: all 1 items read"),
    ],
)
def test_an_import_with_no_message_is_an_error(document: Any, problem: str) -> None:
    with pytest.raises(ConversationFormatError, match=re.escape(problem)):
        parse_conversation(json.dumps(document))
