"""OpenTelemetry GenAI import: what a user sees for single spans, OTLP values and bad fields.

Complements the OTel cases in test_importers_edges.py: every origin locates
its message in the file, every bad field is an exact located error.
"""

from __future__ import annotations

from typing import Any

import pytest
from test_importers_edges import error, imported, notes, rows

USER = {"role": "user", "parts": [{"type": "text", "content": "hi"}]}
ASSISTANT = {"role": "assistant", "parts": [{"type": "text", "content": "yo"}]}


def kv(key: str, value: Any) -> dict[str, Any]:
    return {"key": key, "value": value}


def test_otel_one_span_document_origins_start_at_its_attributes() -> None:
    got = imported({"name": "chat", "attributes": {"gen_ai.input.messages": [USER]}}, "otel-genai")
    assert rows(got) == [("user", "hi", None, None)]
    assert got.origins == ["attributes['gen_ai.input.messages'][0]"]


def test_otel_otlp_attribute_values_already_plain_json_are_read_as_they_are() -> None:
    """Some exporters write an attribute's value unwrapped (a plain list, a plain object)."""
    span = {
        "attributes": [
            kv("gen_ai.input.messages", [USER]),
            kv("gen_ai.output.messages", {"arrayValue": {"values": [ASSISTANT]}}),
        ]
    }
    got = imported({"resourceSpans": [{"scopeSpans": [{"spans": [span]}]}]}, "otel-genai")
    assert rows(got) == [("user", "hi", None, None), ("assistant", "yo", None, None)]
    at = "resourceSpans[0].scopeSpans[0].spans[0].attributes"
    assert got.origins == [
        f"{at}['gen_ai.input.messages'][0]",
        f"{at}['gen_ai.output.messages'][0]",
    ]


PREFIX = "<text> is not valid otel-genai: "


@pytest.mark.parametrize(
    ("document", "problem"),
    [
        (
            {"resourceSpans": [{"scopeSpans": [{"spans": [{"attributes": "x"}]}]}]},
            "resourceSpans[0].scopeSpans[0].spans[0].attributes: "
            "expected a list or object, got string",
        ),
        (
            {"gen_ai.input.messages": {"role": "user"}},
            "gen_ai.input.messages: expected a list of messages, got object",
        ),
        (
            {"name": "chat", "attributes": {"gen_ai.output.messages": 5}},
            "attributes['gen_ai.output.messages']: expected a list of messages, got number",
        ),
    ],
)
def test_otel_bad_attribute_is_a_located_error(document: Any, problem: str) -> None:
    assert error(document, "otel-genai") == PREFIX + problem


def test_otel_spans_without_a_readable_start_time_count_as_earliest() -> None:
    """The conversation is what the last timed span saw; a span with no or an
    unreadable start time sorts first (file order among them), a span without
    messages is skipped, and earlier spans' messages are notes naming their span."""

    def span(content: str, **fields: Any) -> dict[str, Any]:
        user = {"role": "user", "parts": [{"type": "text", "content": content}]}
        return {**fields, "attributes": [kv("gen_ai.input.messages", [user])]}

    spans = [
        {"name": "tool", "startTimeUnixNano": "0", "attributes": [kv("other", 1)]},
        span("timed", name="late", startTimeUnixNano="1"),
        span("unreadable", name="bad", startTimeUnixNano="soon"),
        span("untimed"),
    ]
    got = imported({"resourceSpans": [{"scopeSpans": [{"spans": spans}]}]}, "otel-genai")
    assert rows(got) == [("user", "timed", None, None)]
    at = "resourceSpans[0].scopeSpans[0].spans"
    why = "an earlier model call held it; the last call does not"
    assert notes(got) == [
        (f"{at}[2].attributes['gen_ai.input.messages'][0]", "message of span 'bad'", why),
        (f"{at}[3].attributes['gen_ai.input.messages'][0]", f"message of span {at}[3]", why),
    ]


def test_otel_otlp_attributes_with_plain_or_missing_values_are_read_not_a_crash() -> None:
    span = {
        "attributes": [
            {"key": "gen_ai.operation.name"},
            kv("gen_ai.usage.input_tokens", 12),
            kv("gen_ai.input.messages", {"stringValue": '[{"role": "user", "parts": []}]'}),
        ]
    }
    got = imported({"resourceSpans": [{"scopeSpans": [{"spans": [span]}]}]}, "otel-genai")
    assert rows(got) == [("user", "", None, None)]


def test_otel_message_field_otel_does_not_read_is_a_note_with_its_content() -> None:
    message = {
        "role": "assistant",
        "parts": [{"type": "text", "content": "a"}],
        "name": "bot",
        "finish_reason": "stop",
        "tool_calls": [{"id": "c1"}],
    }
    got = imported([message], "otel-genai")
    assert rows(got) == [("assistant", "a", None, None)]
    assert notes(got) == [("[0].tool_calls", "field 'tool_calls'", "otel-genai does not read it")]
    assert got.notes[0].content == '[{"id": "c1"}]'
    assert got.notes[0].unknown


def test_otel_unknown_part_note_is_marked_unknown_content() -> None:
    """The inspector and detection tell content a reader did not recognise from a
    deliberate skip (a reasoning part) by the note's 'unknown' flag."""
    parts = [{"type": "reasoning", "content": "think"}, {"type": "widget", "content": "w"}]
    got = imported([{"role": "assistant", "parts": parts}], "otel-genai")
    assert rows(got) == [("assistant", "w", None, None)]
    assert [(row["where"], row["unknown"]) for row in got.notes_as_dicts()] == [
        ("[0].parts[0]", False),
        ("[0].parts[1]", True),
    ]
