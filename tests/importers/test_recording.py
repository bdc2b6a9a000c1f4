"""The a recording of one provider's API calls (SDK cassette bodies): real public examples imported to their exact messages.

The files are in ``sample_data/fresh/`` (sources in its ``SOURCES.md``).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from flowdrop_core.importers import (
    ConversationFormatError,
    ImportedConversation,
    load_conversation,
    parse_conversation,
)
from flowdrop_core.importers import (
    _recording as recording,
)
from flowdrop_core.importers._claims import Claim, Miss

FRESH = Path(__file__).resolve().parents[2] / "sample_data" / "fresh"


def imported(name: str) -> ImportedConversation:
    """A corpus file, its format detected."""
    return load_conversation(FRESH / name, name=name)


def test_cassette_anthropic_multiple_parallel_tool_calls() -> None:
    got = imported("cassette_anthropic_multiple_parallel_tool_calls.json")
    assert got.format == "api-recording"

    assert got.messages == [
        {
            "role": "system",
            "content": "\n"
            "    Use the `retrieve_entity_info` tool to get information about a "
            "specific person.\n"
            "    If you need to use `retrieve_entity_info` to get information about "
            "multiple people, try\n"
            "    to call them in parallel as much as possible.\n"
            "    Think step by step and then provide a single most probable concise "
            "answer.\n"
            "    ",
        },
        {
            "role": "user",
            "content": "Alice, Bob, Charlie and Daisy are a family. Who is the youngest?",
        },
        {
            "role": "assistant",
            "content": "I'll help you find out who is the youngest by retrieving information about "
            "each family member. I'll retrieve their entity information to compare "
            "their ages.",
            "tool_calls": [
                {
                    "id": "toolu_0167cfEnoQaPviGdVXA95zcu",
                    "type": "function",
                    "function": {"name": "retrieve_entity_info", "arguments": '{"name": "Alice"}'},
                },
                {
                    "id": "toolu_01EEe2V5HD1Ac4rKiUR4HD2T",
                    "type": "function",
                    "function": {"name": "retrieve_entity_info", "arguments": '{"name": "Bob"}'},
                },
                {
                    "id": "toolu_01XFyAjstT3966qvRynZyVPo",
                    "type": "function",
                    "function": {
                        "name": "retrieve_entity_info",
                        "arguments": '{"name": "Charlie"}',
                    },
                },
                {
                    "id": "toolu_013mnQZbgtK2oe3Mo3XKJsx3",
                    "type": "function",
                    "function": {"name": "retrieve_entity_info", "arguments": '{"name": "Daisy"}'},
                },
            ],
        },
        {
            "role": "tool",
            "content": "alice is bob's wife",
            "tool_call_id": "toolu_0167cfEnoQaPviGdVXA95zcu",
        },
        {
            "role": "tool",
            "content": "bob is alice's husband",
            "tool_call_id": "toolu_01EEe2V5HD1Ac4rKiUR4HD2T",
        },
        {
            "role": "tool",
            "content": "charlie is alice's son",
            "tool_call_id": "toolu_01XFyAjstT3966qvRynZyVPo",
        },
        {
            "role": "tool",
            "content": "daisy is bob's daughter and charlie's younger sister",
            "tool_call_id": "toolu_013mnQZbgtK2oe3Mo3XKJsx3",
        },
        {
            "role": "assistant",
            "content": "Based on the retrieved information, we can see the family relationships:\n"
            "- Alice and Bob are married\n"
            "- Charlie is their son\n"
            "- Daisy is their daughter and Charlie's younger sister\n"
            "\n"
            "Therefore, Daisy is the youngest in the family. She is described as "
            "Charlie's younger sister, which indicates she is the youngest among the "
            "four family members.",
        },
    ]

    assert got.origins == [
        "[2].system",
        "[2].messages[0]",
        "[2].messages[1]",
        "[2].messages[2].content[0]",
        "[2].messages[2].content[1]",
        "[2].messages[2].content[2]",
        "[2].messages[2].content[3]",
        "[3]",
    ]

    assert [(n.where, n.what) for n in got.notes] == []


def test_cassette_bedrock_bedrock_model_retry() -> None:
    got = imported("cassette_bedrock_bedrock_model_retry.json")
    assert got.format == "api-recording"

    assert got.messages == [
        {"role": "system", "content": "You are a helpful chatbot."},
        {"role": "user", "content": "What is the capital of France?"},
        {
            "role": "assistant",
            "content": "<thinking> To determine the capital of France, I can use the provided tool "
            "that returns the capital of a given country. Since the country in question "
            'is France, I will use the tool with the country parameter set to "France". '
            "</thinking>\n",
            "tool_calls": [
                {
                    "id": "tooluse_Ze_bgl9CSqu8aJv7XD-_Dw",
                    "type": "function",
                    "function": {"name": "get_capital", "arguments": '{"country": "France"}'},
                }
            ],
        },
        {
            "role": "tool",
            "content": "[error] The country is not supported.\n\nFix the errors and try again.",
            "tool_call_id": "tooluse_Ze_bgl9CSqu8aJv7XD-_Dw",
        },
        {
            "role": "assistant",
            "content": "<thinking> It appears that there was an error in retrieving the capital of "
            "France as the tool indicated that the country is not supported. Since the "
            "tool is not able to provide the requested information, I will respond to "
            "the User with the information I have access to. </thinking> \n"
            "\n"
            "The capital of France is Paris. If you need any further information, feel "
            "free to ask!",
        },
    ]

    assert got.origins == [
        "[2].system",
        "[2].messages[0]",
        "[2].messages[1]",
        "[2].messages[2].content[0]",
        "[3].output.message",
    ]

    assert [(n.where, n.what) for n in got.notes] == []


def test_cassette_google_google_tool_output() -> None:
    got = imported("cassette_google_google_tool_output.json")
    assert got.format == "api-recording"

    assert got.messages == [
        {"role": "user", "content": "What is the largest city in the user country?"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "pyd_ai_3fa5644dae1d4aad997ae39c70006fbd",
                    "type": "function",
                    "function": {"name": "get_user_country", "arguments": "{}"},
                }
            ],
        },
        {
            "role": "tool",
            "content": '{"return_value": "Mexico"}',
            "tool_call_id": "pyd_ai_3fa5644dae1d4aad997ae39c70006fbd",
        },
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "candidates[0].content.parts[0]",
                    "type": "function",
                    "function": {
                        "name": "final_result",
                        "arguments": '{"city": "Mexico City", "country": "Mexico"}',
                    },
                }
            ],
        },
    ]

    assert got.origins == [
        "[2].contents[0]",
        "[2].contents[1]",
        "[2].contents[2].parts[0]",
        "[3].candidates[0].content",
    ]

    # The response's call has no id (Gemini gives none); the next request sends the same call
    # back with the id pydantic-ai made up: the same message, so no note of it.
    assert got.notes == []


def test_cassette_google_google_model_retry() -> None:
    """A retried Gemini tool call: both calls were notes (their ids made up on one side)
    and the system instruction, sent with role "user", was read as a user turn."""
    got = imported("cassette_google_google_model_retry.json")
    assert got.format == "api-recording"
    first, second = (
        "pyd_ai_1f2bdea4ea804905a3f05dfe5b96a7fb",
        "pyd_ai_9f63eafb0eac47419f4f6c19975e924b",
    )

    def asks(call_id: str, country: str) -> dict[str, Any]:
        return {"role": "assistant", "content": None, "tool_calls": [
            {"id": call_id, "type": "function",
             "function": {"name": "get_capital", "arguments": json.dumps({"country": country})}}
        ]}  # fmt: skip

    retry = (
        'The country is not supported. Use "La France" instead.\n\nFix the errors and try again.'
    )
    assert got.messages == [
        {"role": "system", "content": "You are a helpful chatbot."},
        {"role": "user", "content": "What is the capital of France?"},
        asks(first, "France"),
        {"role": "tool", "content": json.dumps({"error": retry}), "tool_call_id": first},
        asks(second, "La France"),
        {"role": "tool", "content": '{"return_value": "Paris"}', "tool_call_id": second},
        {"role": "assistant", "content": "Paris"},
    ]
    assert got.origins[0] == "[4].systemInstruction"
    assert got.notes == []


def test_cassette_openai_compatible_call_with_an_empty_id_matches_its_echo() -> None:
    """An OpenAI-compatible server answered with ``"id": ""``; the next request carries the
    call with pydantic-ai's id. It was a note as if only the earlier call held it."""
    got = imported("cassette_openai_compatible_api_with_tool_calls_without_id.json")
    assert got.format == "openai-chat"
    call_id = "pyd_ai_cee885c699414386a7e14b7ec43cadbc"
    assert got.messages == [
        {"role": "user", "content": "What is the current time?"},
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": call_id, "type": "function",
             "function": {"name": "get_current_time", "arguments": "{}"}}
        ]},
        {"role": "tool", "content": "Noon", "tool_call_id": call_id},
        {"role": "assistant", "content": "The current time is Noon."},
    ]  # fmt: skip
    assert got.notes == []


def test_a_call_with_a_real_id_is_still_a_note_when_the_last_call_lacks_it() -> None:
    """Only calls without an id match their echo by name and arguments: an earlier call
    with its own id that the last call does not hold stays a note."""
    document = [
        {"model": "m", "messages": [{"role": "user", "content": "q"}]},
        {"choices": [{"message": {"role": "assistant", "content": None, "tool_calls": [
            {"id": "a1", "type": "function", "function": {"name": "f", "arguments": "{}"}}]}}]},
        {"model": "m", "messages": [{"role": "user", "content": "q"}, {"role": "assistant",
         "content": None, "tool_calls": [
            {"id": "b2", "type": "function", "function": {"name": "f", "arguments": "{}"}}]},
         {"role": "tool", "content": "r", "tool_call_id": "b2"}]},
        {"choices": [{"message": {"role": "assistant", "content": "done"}}]},
    ]  # fmt: skip
    got = parse_conversation(json.dumps(document))
    assert [(n.where, n.what) for n in got.notes] == [("[1].choices[0]", "message of call [0]")]


def test_an_error_body_is_a_note_located_at_its_index() -> None:
    """A refused call among the exchanges (Groq's 400) does not make the file unreadable."""
    recording = [
        {"contents": [{"role": "user", "parts": [{"text": "hi"}]}]},
        {"error": {"code": 400, "message": "bad request"}},
        {"contents": [{"role": "user", "parts": [{"text": "hi again"}]}]},
        {"candidates": [{"content": {"role": "model", "parts": [{"text": "hello"}]}}]},
    ]
    got = parse_conversation(json.dumps(recording), source_name="r.json")
    assert got.format == "api-recording"
    assert got.messages == [
        {"role": "user", "content": "hi again"},
        {"role": "assistant", "content": "hello"},
    ]
    assert [(n.where, n.what) for n in got.notes] == [
        ("[1]", "error body"),
        ("[0].contents[0]", "message of call [0]"),
    ]


def test_the_signature_needs_one_provider_for_every_body() -> None:
    gemini_request = {"contents": [{"role": "user", "parts": [{"text": "x"}]}]}
    anthropic_response = {"type": "message", "role": "assistant", "content": []}
    assert isinstance(recording.claims([gemini_request, anthropic_response]), Miss)
    assert isinstance(recording.claims([gemini_request, gemini_request]), Miss)
    assert isinstance(recording.claims([gemini_request]), Miss)


def test_a_body_that_is_a_list_is_located() -> None:
    """OpenAI Chat claims a bare list of messages too, so such a body passes the signature;
    the reader refuses it at its index."""
    document = [
        {"messages": [{"role": "user", "content": "q"}]},
        {"choices": [{"message": {"role": "assistant", "content": "a"}}]},
        [{"role": "user", "content": "x"}],
    ]
    assert recording.claims(document) == Claim("a recording of openai-chat calls")
    with pytest.raises(ConversationFormatError) as info:
        parse_conversation(json.dumps(document), format="api-recording", source_name="r.json")
    assert str(info.value) == (
        "r.json is not valid api-recording: [2]: expected a request or response object, got list"
    )


@pytest.mark.parametrize(
    ("document", "missed"),
    [
        ([{"contents": []}], Miss("", "expected a list of request and response bodies")),
        ([{"candidates": []}, {"candidates": []}],
         Miss("", "no request body ('messages', 'contents' or 'input')")),
        ([{"messages": []}, {"messages": []}], Miss("", "no response body among the requests", 1)),
    ],
)  # fmt: skip
def test_what_the_signature_misses(document: object, missed: Miss) -> None:
    assert recording.claims(document) == missed
