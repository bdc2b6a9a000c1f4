"""Gemini contents: what a user gets back for shapes the other importer tests leave out.

Each test states the exact messages, notes or call pairing a user sees.
"""

from __future__ import annotations

import json
from typing import Any

from flowdrop_core.importers import ImportedConversation, parse_conversation

USER = {"role": "user", "parts": [{"text": "weather?"}]}


def imported(document: Any) -> ImportedConversation:
    return parse_conversation(json.dumps(document), format="gemini")


def notes(got: ImportedConversation) -> list[tuple[str, str, str, bool]]:
    return [(n.where, n.what, n.content, n.unknown) for n in got.notes]


def call(call_id: str, name: str = "f", arguments: str = "{}") -> dict[str, Any]:
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}


def test_a_content_field_gemini_does_not_read_is_an_unknown_note() -> None:
    got = imported({"contents": [{"role": "user", "parts": [{"text": "hi"}], "text": "also"}]})
    assert got.messages == [{"role": "user", "content": "hi"}]
    assert notes(got) == [("contents[0].text", "field 'text'", "also", True)]


def test_a_content_with_no_parts_is_an_empty_turn_not_dropped() -> None:
    got = imported({"contents": [{"role": "user", "parts": []}]})
    assert got.messages == [{"role": "user", "content": ""}]
    assert got.origins == ["contents[0]"]


def test_model_text_beside_a_call_is_the_content_of_the_call_message() -> None:
    got = imported(
        {
            "contents": [
                USER,
                {
                    "role": "model",
                    "parts": [{"text": "Checking."}, {"functionCall": {"name": "f"}}],
                },
            ]
        }
    )
    assert got.messages[1] == {
        "role": "assistant",
        "content": "Checking.",
        "tool_calls": [call("contents[1].parts[1]")],
    }


def test_an_empty_or_non_text_call_id_is_replaced_by_the_call_origin_and_answered_by_name() -> None:
    """An id that is no usable text does not name the call: its origin does, and a response
    with an empty id answers the oldest open call of its name."""
    got = imported(
        {
            "contents": [
                USER,
                {
                    "role": "model",
                    "parts": [
                        {"functionCall": {"id": "", "name": "f"}},
                        {"functionCall": {"id": 7, "name": "g"}},
                    ],
                },
                {
                    "role": "user",
                    "parts": [
                        {"functionResponse": {"id": "", "name": "g", "response": "sunny"}},
                        {"functionResponse": {"id": "", "name": "f", "response": "cold"}},
                    ],
                },
            ]
        }
    )
    assert got.messages[1:] == [
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                call("contents[1].parts[0]", "f"),
                call("contents[1].parts[1]", "g"),
            ],
        },
        {"role": "tool", "content": "sunny", "tool_call_id": "contents[1].parts[1]"},
        {"role": "tool", "content": "cold", "tool_call_id": "contents[1].parts[0]"},
    ]
    assert got.notes == []


def test_a_response_without_a_call_notes_the_function_name() -> None:
    response = {"functionResponse": {"name": "lookup", "response": {"r": 1}}}
    got = imported({"contents": [USER, {"role": "user", "parts": [response]}]})
    assert got.messages[1] == {"role": "tool", "content": '{"r": 1}', "tool_call_id": None}
    assert notes(got) == [
        ("contents[1].parts[0]", "function response without a call", "lookup", False)
    ]
