"""The a recording of OpenAI Responses requests and responses: real public examples imported to their exact messages.

The files are in ``sample_data/fresh/`` (sources in its ``SOURCES.md``).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from flowdrop_core.importers import (
    ConversationFormatError,
    ImportedConversation,
    load_conversation,
    parse_conversation,
)
from flowdrop_core.importers import (
    _responses_log as responses_log,
)
from flowdrop_core.importers._claims import Claim, Miss

FRESH = Path(__file__).resolve().parents[2] / "sample_data" / "fresh"


def imported(name: str) -> ImportedConversation:
    """A corpus file, its format detected."""
    return load_conversation(FRESH / name, name=name)


def test_cassette_openai_responses_background_mode_with_tool_vcr() -> None:
    got = imported("cassette_openai_responses_background_mode_with_tool_vcr.json")
    assert got.format == "responses-log"

    assert got.messages == [
        {"role": "user", "content": "What is the weather in Paris? Use the get_weather tool."},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "call_JcaYgcpgGGTn4GjzjNDDB1xE",
                    "type": "function",
                    "function": {"name": "get_weather", "arguments": '{"city":"Paris"}'},
                }
            ],
        },
        {
            "role": "tool",
            "content": "Sunny and 72F in Paris",
            "tool_call_id": "call_JcaYgcpgGGTn4GjzjNDDB1xE",
        },
        {
            "role": "assistant",
            "content": "The weather in Paris is currently sunny with a temperature of 72°F.",
        },
    ]

    assert got.origins == ["[0].input[0]", "[2].output[0]", "[3].input[2]", "[6].output[0]"]

    assert [(n.where, n.what) for n in got.notes] == []


def test_cassette_openai_responses_openai_conversation_id_tool_call_continuation() -> None:
    got = imported("cassette_openai_responses_openai_conversation_id_tool_call_continuation.json")
    assert got.format == "responses-log"

    assert got.messages == [
        {
            "role": "system",
            "content": "Use the provided tool when the user asks for the conversation code.",
        },
        {
            "role": "user",
            "content": "Call get_conversation_code and reply with only the returned code.",
        },
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "call_010000000000000000000000",
                    "type": "function",
                    "function": {"name": "get_conversation_code", "arguments": "{}"},
                }
            ],
        },
        {
            "role": "tool",
            "content": "TOOL-PAI-5222",
            "tool_call_id": "call_010000000000000000000000",
        },
        {"role": "assistant", "content": "TOOL-PAI-5222"},
    ]

    assert got.origins == [
        "[0].instructions",
        "[0].input[0]",
        "[1].output[0]",
        "[2].input[0]",
        "[3].output[0]",
    ]

    assert [(n.where, n.what) for n in got.notes] == []


def _read(document: object) -> ImportedConversation:
    return parse_conversation(json.dumps(document), source_name="log.json")


def _user(text: str) -> dict[str, object]:
    return {"type": "message", "role": "user", "content": [{"type": "input_text", "text": text}]}


def _answer(text: str, ident: str) -> dict[str, object]:
    return {"object": "response", "id": ident, "output": [
        {"type": "message", "id": f"m{ident}", "status": "completed", "role": "assistant",
         "content": [{"type": "output_text", "text": text, "annotations": []}]}]}  # fmt: skip


def test_a_stateless_history_that_starts_over_notes_what_it_dropped() -> None:
    """A later call whose history does not start with what is held starts over: the
    dropped items are notes; an error body among the calls is a located note."""
    got = _read(
        [
            {"input": [_user("one")]},
            _answer("first", "r1"),
            {"error": {"message": "rate limited", "type": "rate_limit"}},
            {"input": [_user("two")], "instructions": "Be kind."},
            _answer("second", "r2"),
        ]
    )
    assert got.messages == [
        {"role": "system", "content": "Be kind."},
        {"role": "user", "content": "two"},
        {"role": "assistant", "content": "second"},
    ]
    assert got.origins == ["[3].instructions", "[3].input[0]", "[4].output[0]"]
    assert [(n.where, n.what) for n in got.notes] == [
        ("[2]", "error body"),
        ("[0].input[0]", "item of an earlier call"),
        ("[1].output[0]", "item of an earlier call"),
    ]


def test_a_history_sent_back_is_read_once() -> None:
    """The second call repeats the first call's input and output (ids and statuses
    dropped, as clients send them): nothing is read twice."""
    echo = {"type": "message", "role": "assistant",
            "content": [{"type": "output_text", "text": "first"}]}  # fmt: skip
    got = _read(
        [
            {"input": "one"},
            _answer("first", "r1"),
            {"input": [{"role": "user", "content": "one"}, echo, _user("two")]},
            _answer("second", "r2"),
        ]
    )
    assert [m["content"] for m in got.messages] == ["one", "first", "two", "second"]
    assert got.notes == []


def test_the_signature_needs_a_request_and_a_response() -> None:
    assert isinstance(
        responses_log.claims([{"input": "x"}, {"object": "response", "output": []}]), Claim
    )
    assert isinstance(responses_log.claims([{"input": "x"}]), Miss)
    assert isinstance(responses_log.claims([{"object": "response", "output": []}]), Miss)
    assert isinstance(
        responses_log.claims([{"input": "x"}, {"object": "response"}, {"role": "user"}]), Miss
    )


def test_a_response_whose_output_is_not_a_list_is_located() -> None:
    with pytest.raises(ConversationFormatError) as info:
        parse_conversation(
            json.dumps([{"input": "x"}, {"object": "response", "output": {}}]),
            format="responses-log",
            source_name="log.json",
        )
    assert str(info.value) == (
        "log.json is not valid responses-log: [1].output: expected a list of items, got object"
    )


def _forced_error(document: object) -> str:
    with pytest.raises(ConversationFormatError) as info:
        parse_conversation(json.dumps(document), format="responses-log", source_name="log.json")
    return str(info.value).removeprefix("log.json is not valid responses-log: ")


def test_replaced_instructions_and_an_earlier_poll_are_notes() -> None:
    """Instructions a later call changes are a note at the first call; a response polled
    again counts once (its last poll), the earlier poll's output a note; a stateless call
    that keeps part of the history drops only what it does not hold."""
    queued = {"object": "response", "id": "r1", "status": "in_progress",
              "output": [{"type": "reasoning", "summary": []}]}  # fmt: skip
    got = _read(
        [
            {"input": [_user("one")], "instructions": "Be brief."},
            queued,
            _answer("first", "r1"),
            {"input": [_user("one"), _user("two")], "instructions": "Be kind."},
            {"object": "response", "id": "r2", "status": "queued", "output": []},
            _answer("second", "r2"),
        ]
    )
    assert got.messages == [
        {"role": "system", "content": "Be kind."},
        {"role": "user", "content": "one"},
        {"role": "user", "content": "two"},
        {"role": "assistant", "content": "second"},
    ]
    assert got.origins == ["[3].instructions", "[3].input[0]", "[3].input[1]", "[5].output[0]"]
    assert [(n.where, n.what, n.why, n.content) for n in got.notes] == [
        ("[1]", "earlier poll of a response", "a later poll replaces it",
         '[{"type": "reasoning", "summary": []}]'),
        ("[0].instructions", "earlier instructions", "a later call replaced them", "Be brief."),
        ("[2].output[0]", "item of an earlier call", "a later call's history does not hold it",
         '{"type": "message", "id": "mr1", "status": "completed", "role": "assistant", '
         '"content": [{"type": "output_text", "text": "first", "annotations": []}]}'),
    ]  # fmt: skip


@pytest.mark.parametrize(
    ("document", "problem"),
    [
        ([{"input": {"text": "x"}}, {"object": "response", "output": []}],
         "[0].input: expected a string or a list, got object"),
        ([{"input": []}, {"object": "response", "output": []}],
         "no request or response holds a conversation item"),
        ([{"input": "x"}], "expected a list of Responses request bodies and response objects, "
         "got list"),
        # A bad item is located in the request that sent it, not at its index in the history.
        ([{"input": "hi"},
          {"error": {"message": "overloaded"}},
          _answer("a", "r1"),
          {"input": [{"type": 5}], "previous_response_id": "r1"},
          {"object": "response", "output": []}],
         "[3].input[0]: item 'type' must be a string, got number"),
    ],
)  # fmt: skip
def test_bad_calls_are_one_located_error(document: object, problem: str) -> None:
    assert _forced_error(document) == problem
