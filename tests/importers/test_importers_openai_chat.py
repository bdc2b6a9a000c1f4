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


def test_a_legacy_call_repeated_by_a_later_request_is_one_message_of_the_recording() -> None:
    """A legacy function_call's made-up id is its place, which differs between two requests
    of a recording: the last request holding the same call leaves no note."""
    call = {"role": "assistant", "content": None, "function_call": {"name": "f", "arguments": "{}"}}
    result = {"role": "function", "name": "f", "content": "r"}
    question = {"role": "user", "content": "q"}

    def reply(text: str) -> dict[str, Any]:
        return {"choices": [{"message": {"role": "assistant", "content": text}}]}

    got = imported(
        [
            {"messages": [question, call, result]},
            reply("done"),
            {"messages": [{"role": "system", "content": "s"}, question, call, result]},
            reply("bye"),
        ]
    )
    made_up = "[2].messages[2].function_call"
    assert got.messages[2:] == [
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {"id": made_up, "type": "function", "function": {"name": "f", "arguments": "{}"}}
            ],
        },
        {"role": "tool", "content": "r", "tool_call_id": made_up},
        {"role": "assistant", "content": "bye"},
    ]
    assert [(n.where, n.what) for n in got.notes] == [("[1].choices[0]", "message of call [0]")]
