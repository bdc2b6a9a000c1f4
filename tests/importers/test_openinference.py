"""The OpenInference span attributes: real public examples imported to their exact messages.

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
    openinference,
    parse_conversation,
)
from flowdrop_core.importers.claims import Claim, Miss

FRESH = Path(__file__).resolve().parents[2] / "sample_data" / "fresh"


def imported(name: str) -> ImportedConversation:
    """A corpus file, its format detected."""
    return load_conversation(FRESH / name, name=name)


def test_openinference_span_tool_calls() -> None:
    got = imported("openinference_span_tool_calls.json")
    assert got.format == "openinference"

    assert got.messages == [
        {"role": "user", "content": "Weather in Paris?"},
        {
            "role": "assistant",
            "content": "Absolutely! Let me check the weather for you.",
            "tool_calls": [
                {
                    "id": "1234",
                    "type": "function",
                    "function": {"name": "get_weather", "arguments": '{"location":"Paris"}'},
                }
            ],
        },
        {"role": "tool", "content": "rainy, 57°F", "tool_call_id": "1234"},
        {
            "role": "assistant",
            "content": "The weather in Paris is currently rainy with a temperature of 57°F.",
        },
    ]

    assert got.origins == [
        "llm.input_messages[0]",
        "llm.input_messages[1]",
        "llm.input_messages[2]",
        "llm.output_messages[0]",
    ]

    assert [(n.where, n.what) for n in got.notes] == []


def test_openinference_spec_spans() -> None:
    got = imported("openinference_spec_spans.json")
    assert got.format == "openinference"

    assert got.messages == [
        {
            "role": "system",
            "content": "You are a Shakespearean writing assistant who speaks in a Shakespearean "
            "style. You help people come up with creative ideas and content like "
            "stories, poems, and songs that use Shakespearean style of writing style, "
            'including words like "thou" and "hath”.\n'
            "Here are some example of Shakespeare's style:\n"
            " - Romeo, Romeo! Wherefore art thou Romeo?\n"
            " - Love looks not with the eyes, but with the mind; and therefore is "
            "winged Cupid painted blind.\n"
            " - Shall I compare thee to a summer's day? Thou art more lovely and more "
            "temperate.\n",
        },
        {"role": "user", "content": "what is 23 times 87"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "[1].attributes['llm.input_messages'][2].tool_calls[0]",
                    "type": "function",
                    "function": {"name": "multiply", "arguments": '{\n  "a": 23,\n  "b": 87\n}'},
                }
            ],
        },
        {
            "role": "tool",
            "content": "2001",
            "tool_call_id": "[1].attributes['llm.input_messages'][2].tool_calls[0]",
        },
        {"role": "assistant", "content": "The product of 23 times 87 is 2001."},
    ]

    assert got.origins == [
        "[1].attributes['llm.input_messages'][0]",
        "[1].attributes['llm.input_messages'][1]",
        "[1].attributes['llm.input_messages'][2]",
        "[1].attributes['llm.input_messages'][3]",
        "[1].attributes['llm.output_messages'][0]",
    ]

    assert [(n.where, n.what) for n in got.notes] == []


def test_otlp_export_nested_attributes_images_reasoning_and_names() -> None:
    """An OTLP export of two spans: the last LLM span is the conversation; a nested
    (Phoenix) message list reads like the flat one; a result without an id answers the
    open call of its name; reasoning is a note; images are markers."""
    first = {"key": "llm.input_messages.0.message.role", "value": {"stringValue": "user"}}
    content = {"key": "llm.input_messages.0.message.content", "value": {"stringValue": "hi"}}
    nested = {
        "llm": {
            "input_messages": [
                {"message": {"role": "user", "contents": [
                    {"message_content": {"type": "text", "text": "look"}},
                    {"message_content": {"type": "image", "image": {"image": {"url": "http://i"}}}}]}},
                {"message": {"role": "assistant", "tool_calls": [
                    {"tool_call": {"function": {"name": "zoom", "arguments": "{}"}}}]}},
                {"message": {"role": "tool", "name": "zoom", "content": "big"}},
            ],
            "output_messages": [
                {"message": {"role": "assistant", "contents": [
                    {"message_content": {"type": "reasoning", "text": "think"}},
                    {"message_content": {"type": "text", "text": "done"}}]}}
            ],
        }
    }  # fmt: skip
    export = {
        "resourceSpans": [
            {"scopeSpans": [{"spans": [
                {"name": "b", "startTimeUnixNano": "2", "attributes": nested},
                {"name": "a", "startTimeUnixNano": "1", "attributes": [first, content]},
            ]}]}
        ]
    }  # fmt: skip
    got = parse_conversation(json.dumps(export), source_name="t.json")
    assert got.format == "openinference"
    call_id = (
        "resourceSpans[0].scopeSpans[0].spans[0].attributes['llm.input_messages'][1].tool_calls[0]"
    )
    assert got.messages == [
        {"role": "user", "content": "look\n[image http://i]"},
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": call_id, "type": "function", "function": {"name": "zoom", "arguments": "{}"}}]},
        {"role": "tool", "content": "big", "tool_call_id": call_id},
        {"role": "assistant", "content": "done"},
    ]  # fmt: skip
    assert [n.what for n in got.notes] == [
        "reasoning content",
        "message of span resourceSpans[0].scopeSpans[0].spans[1]",
    ]


def test_a_bad_role_is_located() -> None:
    with pytest.raises(ConversationFormatError) as info:
        parse_conversation(
            json.dumps({"llm.input_messages.0.message.role": "robot"}),
            format="openinference",
            source_name="s.json",
        )
    assert str(info.value) == (
        "s.json is not valid openinference: llm.input_messages[0].role: unknown role 'robot'"
    )


def test_the_signature() -> None:
    assert isinstance(
        openinference.claims({"llm.output_messages.0.message.role": "assistant"}), Claim
    )
    assert isinstance(openinference.claims({"attributes": {"llm.input_messages": []}}), Claim)
    assert isinstance(openinference.claims({"gen_ai.input.messages": "[]"}), Miss)
    assert isinstance(openinference.claims({"input.value": "x", "llm.model_name": "m"}), Miss)
