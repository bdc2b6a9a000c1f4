"""The Cohere v2 chat: real public examples imported to their exact messages.

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
    _cohere as cohere,
)
from flowdrop_core.importers._claims import Claim, Miss

FRESH = Path(__file__).resolve().parents[2] / "sample_data" / "fresh"


def imported(name: str) -> ImportedConversation:
    """A corpus file, its format detected."""
    return load_conversation(FRESH / name, name=name)


def test_cassette_cohere_cohere_model_instructions() -> None:
    got = imported("cassette_cohere_cohere_model_instructions.json")
    assert got.format == "cohere"

    assert got.messages == [
        {"role": "system", "content": "You are a helpful assistant."},
        {"role": "user", "content": "What is the capital of France?"},
        {
            "role": "assistant",
            "content": "The capital of France is Paris. It is the country's largest city and "
            "serves as the economic, cultural, and political center of France. Paris is "
            "known for its rich history, iconic landmarks such as the Eiffel Tower and "
            "the Louvre Museum, and its significant influence on fashion, cuisine, and "
            "the arts.",
        },
    ]

    assert got.origins == ["[0].messages[0]", "[0].messages[1]", "[1].message"]

    assert [(n.where, n.what) for n in got.notes] == []


def test_vercel_fixture_cohere_tool_call() -> None:
    got = imported("vercel_fixture_cohere_tool_call.json")
    assert got.format == "cohere"

    assert got.messages == [
        {
            "role": "assistant",
            "content": "I will use the weather tool to find out the weather in San Francisco. I "
            "will also use the cityAttractions tool to find out what attractions are in "
            "San Francisco.",
            "tool_calls": [
                {
                    "id": "weather_dqgshstja6p9",
                    "type": "function",
                    "function": {"name": "weather", "arguments": '{"location":"San Francisco"}'},
                },
                {
                    "id": "cityAttractions_dcxfx4myvx68",
                    "type": "function",
                    "function": {
                        "name": "cityAttractions",
                        "arguments": '{"city":"San Francisco"}',
                    },
                },
            ],
        }
    ]

    assert got.origins == ["message"]

    assert [(n.where, n.what) for n in got.notes] == []


def test_vercel_fixture_cohere_reasoning() -> None:
    got = imported("vercel_fixture_cohere_reasoning.json")
    assert got.format == "cohere"

    assert got.messages == [{"role": "assistant", "content": "2 + 2 = 4"}]

    assert got.origins == ["message"]

    assert [(n.where, n.what) for n in got.notes] == [("message.content[0]", "thinking part")]


def test_a_request_with_tool_results_by_id_documents_and_a_plan() -> None:
    request = {"model": "command-a", "messages": [
        {"role": "user", "content": "weather?"},
        {"role": "assistant", "tool_plan": "I will look it up.", "tool_calls": [
            {"id": "w1", "type": "function", "function": {"name": "weather", "arguments": "{}"}}]},
        {"role": "tool", "tool_call_id": "w1", "content": [
            {"type": "document", "document": {"id": "d", "data": {"temp": 20}}}]},
        {"role": "assistant", "content": [{"type": "text", "text": "20 degrees"}],
         "tool_plan": "shown"},
    ]}  # fmt: skip
    got = parse_conversation(json.dumps(request), source_name="c.json")
    assert got.format == "cohere"
    assert got.messages == [
        {"role": "user", "content": "weather?"},
        {"role": "assistant", "content": "I will look it up.", "tool_calls": [
            {"id": "w1", "type": "function", "function": {"name": "weather", "arguments": "{}"}}]},
        {"role": "tool", "content": '{"temp": 20}', "tool_call_id": "w1"},
        {"role": "assistant", "content": "20 degrees"},
    ]  # fmt: skip
    assert [(n.where, n.what) for n in got.notes] == [("messages[3].tool_plan", "tool plan")]


def test_a_tool_message_without_its_id_is_located() -> None:
    request = {"messages": [{"role": "tool", "content": "x"}], "tool_plan": None}
    body = [request, {"finish_reason": "COMPLETE", "message": {"role": "assistant"}}]
    with pytest.raises(ConversationFormatError) as info:
        parse_conversation(json.dumps(body), format="cohere", source_name="c.json")
    assert str(info.value) == (
        "c.json is not valid cohere: [0].messages[0]: tool message without 'tool_call_id'"
    )


def test_the_signature() -> None:
    assert isinstance(
        cohere.claims({"message": {"role": "assistant"}, "finish_reason": "COMPLETE"}), Claim
    )
    assert isinstance(cohere.claims({"messages": [{"role": "assistant", "tool_plan": "p"}]}), Claim)
    assert isinstance(
        cohere.claims({"messages": [{"role": "user", "content": "x"}]}), Miss
    )  # plain chat
    assert isinstance(cohere.claims({"choices": [], "message": {}, "finish_reason": "stop"}), Miss)


def test_a_request_claimed_by_a_thinking_part_with_images_and_an_empty_turn() -> None:
    """A ``thinking`` part without Anthropic's ``signature`` is Cohere's: its text is a
    note; an image part is a marker; an assistant turn with nothing is empty text."""
    request = {"messages": [
        {"role": "system", "content": "sys"},
        {"role": "user", "content": [{"type": "text", "text": "see"},
                                     {"type": "image_url", "image_url": {"url": "http://x/a.png"}}]},
        {"role": "assistant", "content": [{"type": "thinking", "thinking": "hmm"},
                                          {"type": "text", "text": "a"}]},
        {"role": "assistant"},
    ]}  # fmt: skip
    assert cohere.claims(request) == Claim("a request")
    got = parse_conversation(json.dumps(request), source_name="c.json")
    assert got.format == "cohere"
    assert got.messages == [
        {"role": "system", "content": "sys"},
        {"role": "user", "content": "see\n[image_url]"},
        {"role": "assistant", "content": "a"},
        {"role": "assistant", "content": ""},
    ]
    assert got.origins == [f"messages[{i}]" for i in range(4)]
    assert [(n.where, n.what, n.content) for n in got.notes] == [
        ("messages[2].content[0]", "thinking part", "hmm")
    ]


@pytest.mark.parametrize(
    ("messages", "problem"),
    [
        ([{"role": "user", "tool_plan": "x"}, 5], "messages[1]: expected a message object, got number"),
        ([{"role": "user", "tool_plan": "x", "tool_calls": [
            {"id": "c", "type": "function", "function": {"name": "f", "arguments": "{}"}}]}],
         "messages[0].tool_calls: tool calls on a user message"),
        ([{"role": "user", "tool_plan": "x", "content": 5}],
         "messages[0].content: expected a string or a list of parts, got number"),
    ],
)  # fmt: skip
def test_bad_messages_are_one_located_error(messages: list[object], problem: str) -> None:
    with pytest.raises(ConversationFormatError) as info:
        parse_conversation(
            json.dumps({"messages": messages}), format="cohere", source_name="c.json"
        )
    assert str(info.value) == f"c.json is not valid cohere: {problem}"


def test_unknown_parts_keep_their_text_or_type_and_are_unknown_notes() -> None:
    request = {"messages": [{"role": "user", "tool_plan": "x", "content": [
        {"type": "text", "text": "a"}, {"type": "audio", "text": "heard"}, {"type": "video"}]}]}  # fmt: skip
    got = parse_conversation(json.dumps(request), format="cohere", source_name="c.json")
    assert got.messages == [{"role": "user", "content": "a\nheard\n[video]"}]
    assert [(n.where, n.what, n.why, n.content, n.unknown) for n in got.notes] == [
        ("messages[0].content[1]", "unknown part type 'audio'", "cohere has no such part",
         '{"type": "audio", "text": "heard"}', True),
        ("messages[0].content[2]", "unknown part type 'video'", "cohere has no such part",
         '{"type": "video"}', True),
        ("messages[0].tool_plan", "tool plan", "the message has text of its own", "x", False),
    ]  # fmt: skip


def test_the_signature_skips_a_stray_message_and_refuses_a_top_level_system() -> None:
    plan = {"role": "assistant", "tool_plan": "p"}
    assert cohere.claims({"messages": [5, plan]}) == Claim("a request")
    assert cohere.claims({"messages": [plan], "system": "s"}) == Miss(
        "system", "a top-level system prompt is Anthropic's layout, not Cohere's"
    )
