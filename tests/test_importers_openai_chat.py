"""How the OpenAI Chat reader treats the shapes it meets (issue 12 survivors).

Each test states the exact messages, origins, notes or error text a user gets back.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from flowdrop_core.importers import (
    ConversationFormatError,
    ImportedConversation,
    parse_conversation,
)


def imported(document: Any) -> ImportedConversation:
    return parse_conversation(json.dumps(document), format="openai-chat")


def error(document: Any) -> str:
    with pytest.raises(ConversationFormatError) as info:
        imported(document)
    return str(info.value).removeprefix("<text> is not valid openai-chat: ")


def test_a_document_that_is_one_message_is_read_as_that_message() -> None:
    got = imported({"role": "user", "content": "hi"})
    assert got.messages == [{"role": "user", "content": "hi"}]
    assert got.origins == ["(top level)"]


@pytest.mark.parametrize(
    ("document", "problem"),
    [
        ({"foo": 1}, "no 'messages' or 'choices' at the top level"),
        ("hi", "expected a list of messages or an object with 'messages', got string"),
    ],
)
def test_a_document_with_no_messages_is_refused_saying_what_it_lacks(
    document: Any, problem: str
) -> None:
    assert error(document) == problem


def test_function_result_with_a_name_that_is_no_text_answers_the_oldest_call() -> None:
    got = imported(
        [
            {"role": "assistant", "content": None, "function_call": {"name": "f"}},
            {"role": "function", "name": 5, "content": "r"},
            {"role": "function", "name": 5, "content": "r2"},
        ]
    )
    assert got.messages[1:] == [
        {"role": "tool", "content": "r", "tool_call_id": "[0].function_call"},
        {"role": "tool", "content": "r2", "tool_call_id": None},
    ]
    assert [(n.where, n.what, n.why, n.content) for n in got.notes] == [
        (
            "[2]",
            "function result without a call",
            "no earlier function_call named 5 is open; imported with no tool_call_id",
            "",
        )
    ]


def test_an_empty_refusal_adds_nothing_and_audio_without_a_transcript_is_a_marker() -> None:
    got = imported(
        [
            {"role": "assistant", "content": "x", "refusal": ""},
            {"role": "assistant", "content": "y", "audio": {"id": "a1", "transcript": 5}},
        ]
    )
    assert got.messages == [
        {"role": "assistant", "content": "x"},
        {"role": "assistant", "content": "y\n[audio a1]"},
    ]
    assert got.notes == []
