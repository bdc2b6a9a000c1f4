"""The OpenInference span attributes: real public examples imported to their exact messages.

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
    _openinference as openinference,
)
from flowdrop_core.importers._claims import Claim, Miss

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


def test_openinference_llm_span_with_only_input_and_output_value() -> None:
    """Arize-ai/openinference's ``openinference_client_span_input_output_only.json`` fixture
    (``js/packages/openinference-genai/test/__fixtures__/``, in SOURCES.md): an LLM span with
    no ``llm.input_messages``, only ``input.value`` (GenAI messages as JSON) and
    ``output.value`` (``{"text", "finish_reason"}``). It was refused; it is the same
    conversation as ``openinference_span_tool_calls.json``."""
    got = imported("openinference_span_input_output_only.json")
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
                    "function": {"name": "get_weather", "arguments": '{"location": "Paris"}'},
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
        "input.value[0]",
        "input.value[1]",
        "input.value[2].parts[0]",
        "output.value",
    ]
    assert got.notes == []


def test_openinference_plain_text_values_are_the_user_and_assistant_turns() -> None:
    """The spec's LLM example (``spec/semantic_conventions.md``): text values are the prompt
    and the answer; ``text/plain`` keeps JSON-looking text as text."""
    span = {
        "openinference.span.kind": "LLM",
        "input.value": "What is the capital of France?",
        "output.value": "The capital of France is Paris.",
    }
    got = parse_conversation(json.dumps(span))
    assert got.format == "openinference"
    assert got.messages == [
        {"role": "user", "content": "What is the capital of France?"},
        {"role": "assistant", "content": "The capital of France is Paris."},
    ]
    declared = {**span, "input.value": '{"q": 1}', "input.mime_type": "text/plain"}
    got = parse_conversation(json.dumps({"attributes": declared}))
    assert got.messages[0] == {"role": "user", "content": '{"q": 1}'}
    assert got.origins == ["input.value", "output.value"]


def test_openinference_values_holding_a_chat_request_and_completion() -> None:
    """``input.value`` as an OpenAI Chat request body, ``output.value`` as its completion."""
    request = {
        "messages": [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hi"}]
    }
    completion = {"choices": [{"message": {"role": "assistant", "content": "Hello"}}]}
    span = {
        "openinference.span.kind": "LLM",
        "input.value": json.dumps(request),
        "output.value": json.dumps(completion),
    }
    got = parse_conversation(json.dumps(span))
    assert got.messages == [*request["messages"], completion["choices"][0]["message"]]
    assert got.origins == [
        "input.value.messages[0]",
        "input.value.messages[1]",
        "output.value.choices[0]",
    ]


def test_openinference_values_of_another_shape_are_a_located_error() -> None:
    span = {"openinference.span.kind": "LLM", "input.value": "hi", "output.value": '{"answer": 1}'}
    with pytest.raises(ConversationFormatError) as info:
        parse_conversation(json.dumps(span), format="openinference", source_name="s.json")
    assert str(info.value) == (
        "s.json is not valid openinference: output.value: expected GenAI or Chat messages, "
        "a Chat completion ('choices'), {'text', ...} or text, got object"
    )


def test_the_values_signature_is_an_llm_span_only() -> None:
    """Only an LLM span's values are claimed: a CHAIN or TOOL span's input and output are not a
    model's conversation, and the OTel tool-execution fixture stays refused."""
    values = {"input.value": "question", "output.value": "answer"}
    assert isinstance(openinference.claims({"openinference.span.kind": "LLM", **values}), Claim)
    assert isinstance(openinference.claims({"openinference.span.kind": "llm", **values}), Claim)
    for kind in ("CHAIN", "TOOL", "AGENT", "RETRIEVER"):
        assert isinstance(openinference.claims({"openinference.span.kind": kind, **values}), Miss)
    assert isinstance(openinference.claims({"openinference.span.kind": "LLM"}), Miss)
    tool_span = json.loads((FRESH / "otel_genai_tool_execution_span.json").read_text("utf-8"))
    assert isinstance(openinference.claims(tool_span), Miss)
    with pytest.raises(ConversationFormatError):
        imported("otel_genai_tool_execution_span.json")


def _forced(attributes: object) -> ImportedConversation:
    """Read as openinference whatever detection would say."""
    return parse_conversation(json.dumps(attributes), format="openinference", source_name="s.json")


def test_logical_json_items_idless_calls_results_by_name_orphans_and_unread_fields() -> None:
    """A flat index whose value is a logical-JSON object is that message; a call without an
    id gets its origin as id and a result naming the tool answers it; a result with no open
    call is noted; an unread message field is an unknown note."""
    got = _forced(
        {
            "llm.input_messages.0": {"message.role": "user", "message.content": "a"},
            "llm.input_messages.1.message.role": "assistant",
            "llm.input_messages.1.message.tool_calls.0.tool_call.function.name": "f",
            "llm.input_messages.2.message.role": "tool",
            "llm.input_messages.2.message.name": "f",
            "llm.input_messages.3.message.role": "function",
            "llm.input_messages.3.message.content": "late",
            "llm.input_messages.4.message.role": "developer",
            "llm.input_messages.4.message.content": "rules",
            "llm.input_messages.4.message.metadata": "m",
        }
    )
    call_id = "llm.input_messages[1].tool_calls[0]"
    assert got.messages == [
        {"role": "user", "content": "a"},
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": call_id, "type": "function", "function": {"name": "f", "arguments": "{}"}}]},
        {"role": "tool", "content": "", "tool_call_id": call_id},
        {"role": "tool", "content": "late", "tool_call_id": None},
        {"role": "system", "content": "rules"},
    ]  # fmt: skip
    assert got.origins == [f"llm.input_messages[{i}]" for i in range(5)]
    assert [(n.where, n.what, n.why, n.content, n.unknown) for n in got.notes] == [
        ("llm.input_messages[3]", "tool result without a call", "no open call to answer", "",
         False),
        ("llm.input_messages[4].metadata", "field 'metadata'", "openinference does not read it",
         "m", True),
    ]  # fmt: skip


def test_an_llm_span_with_only_an_output_value_is_the_assistant_turn() -> None:
    got = _forced({"openinference.span.kind": "LLM", "output.value": "Paris."})
    assert got.messages == [{"role": "assistant", "content": "Paris."}]
    assert got.origins == ["output.value"]


@pytest.mark.parametrize(
    ("attributes", "problem"),
    [
        ({"llm.input_messages": "text"},
         "llm.input_messages: expected a list of messages, got string"),
        # A non-index key first makes the section an object, so it is not a message list.
        ({"llm.input_messages.extra": "e", "llm.input_messages.0.message.role": "user"},
         "llm.input_messages: expected a list of messages, got object"),
        ({"llm.input_messages.0.0.message.role": "user"},
         "llm.input_messages[0]: expected a message ({'message.role', ...})"),
        ({"llm.input_messages.0.message.role": "user", "llm.input_messages.0.message.content": 5},
         "llm.input_messages[0].content: expected a string, got number"),
        ({"llm.input_messages.0.message.role": "user",
          "llm.input_messages.0.message.contents.0": "x"},
         "llm.input_messages[0].contents[0]: expected a message_content object"),
        ({"llm.input_messages.0.message.role": "assistant",
          "llm.input_messages.0.message.tool_calls": "x"},
         "llm.input_messages[0].tool_calls: expected a list, got string"),
        ({"llm.input_messages.0.message.role": "assistant",
          "llm.input_messages.0.message.tool_calls.0": "x"},
         "llm.input_messages[0].tool_calls[0]: expected a tool_call object"),
        ({"llm.input_messages.0.message.role": "user",
          "llm.input_messages.0.message.tool_calls.0.tool_call.id": "c"},
         "llm.input_messages[0].tool_calls: tool calls on a user message"),
        ({"llm.model_name": "m"},
         "no span carries llm.input_messages or llm.output_messages, or is an LLM span "
         "with input.value / output.value"),
        ([{"attributes": {"llm.output_messages.0.message.role": "robot"}}],
         "[0].attributes['llm.output_messages'][0].role: unknown role 'robot'"),
        ([{"attributes": [{"key": 5}]}], "[0].attributes[0]: expected an attribute {'key', 'value'}"),
        ({"attributes": [{"key": 5}]}, "attributes[0]: expected an attribute {'key', 'value'}"),
        ({"resourceSpans": [{"scopeSpans": [{"spans": [{"attributes": "x"}]}]}]},
         "resourceSpans[0].scopeSpans[0].spans[0].attributes: expected a list or object, "
         "got string"),
    ],
)  # fmt: skip
def test_bad_attributes_are_one_located_error(attributes: object, problem: str) -> None:
    with pytest.raises(ConversationFormatError) as info:
        _forced(attributes)
    assert str(info.value) == f"s.json is not valid openinference: {problem}"


def test_an_unknown_content_type_keeps_its_text_and_is_an_unknown_note() -> None:
    got = _forced(
        {
            "llm.input_messages.0.message.role": "user",
            "llm.input_messages.0.message.contents.0.message_content.type": "audio",
            "llm.input_messages.0.message.contents.0.message_content.text": "heard",
            "llm.input_messages.0.message.contents.1.message_content.type": "video",
        }
    )
    assert got.messages == [{"role": "user", "content": "heard\n[video]"}]
    assert [(n.where, n.what, n.why, n.content, n.unknown) for n in got.notes] == [
        ("llm.input_messages[0].contents[0]", "unknown content type 'audio'",
         "openinference has no such content type", '{"type": "audio", "text": "heard"}', True),
        ("llm.input_messages[0].contents[1]", "unknown content type 'video'",
         "openinference has no such content type", '{"type": "video"}', True),
    ]  # fmt: skip


def test_message_attributes_whose_keys_clash_are_notes_not_dropped() -> None:
    """A value where the other keys need a message (``...input_messages.0`` holding text,
    then ``...input_messages.0.message.role``), or a name where an index is
    (``...input_messages.extra`` beside ``...input_messages.0``), cannot be read as a
    message: each is an unknown note with its value (they were dropped with no note)."""
    got = _forced(
        {
            "llm.input_messages.0": "stray",
            "llm.input_messages.0.message.role": "user",
            "llm.input_messages.0.message.content": "hi",
            "llm.input_messages.extra": "e",
            "llm.output_messages.0.message.role": "assistant",
            "llm.output_messages.0.message.content": "yo",
            "llm.model_name.0": "not a message attribute: not noted",
            "llm.model_name.0.x": "m",
        }
    )
    assert got.messages == [
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": "yo"},
    ]
    assert [(n.where, n.what, n.content, n.unknown) for n in got.notes] == [
        ("llm.input_messages.0", "attribute 'llm.input_messages.0'", "stray", True),
        ("llm.input_messages.extra", "attribute 'llm.input_messages.extra'", "e", True),
    ]
    assert {n.why for n in got.notes} == {
        "its key does not fit the message attributes' layout (a value where a message is, "
        "or a name where an index is)"
    }


def test_a_field_replaced_by_a_later_value_and_a_keyless_otlp_pair_are_notes() -> None:
    """Deeper keys first, then a value for their parent: what the deeper keys held is a note
    (the value is an unread field, itself a note); an OTLP key-value pair without a key, in
    a logical-JSON message, is a note with its value."""
    got = _forced(
        {
            "llm.input_messages.0.message.role": "user",
            "llm.input_messages.0.message.content": "hi",
            "llm.input_messages.0.message.extra.a": "1",
            "llm.input_messages.0.message.extra": "s",
        }
    )
    assert got.messages == [{"role": "user", "content": "hi"}]
    assert [(n.where, n.what, n.content) for n in got.notes] == [
        ("llm.input_messages[0].extra", "field 'extra'", "s"),
        ("llm.input_messages.0.message.extra", "attribute 'llm.input_messages.0.message.extra'",
         '{"a": "1"}'),
    ]  # fmt: skip

    def kv(key: str, value: str) -> dict[str, Any]:
        return {"key": key, "value": {"stringValue": value}}

    pairs = [kv("message.role", "user"), kv("message.content", "hi"),
             {"value": {"stringValue": "lost"}}]  # fmt: skip
    message = {"arrayValue": {"values": [{"kvlistValue": {"values": pairs}}]}}
    span = {"attributes": [{"key": "llm.input_messages", "value": message}]}
    got = _forced({"resourceSpans": [{"scopeSpans": [{"spans": [span]}]}]})
    assert got.messages == [{"role": "user", "content": "hi"}]
    at = "resourceSpans[0].scopeSpans[0].spans[0].attributes"
    assert [(n.where, n.content, n.unknown) for n in got.notes] == [
        (f"{at}['llm.input_messages.0.None']", "lost", True)
    ]


def test_a_value_later_keys_build_under_is_a_note() -> None:
    got = _forced(
        {
            "llm.input_messages.0.message.role": "user",
            "llm.input_messages.0.message.content": "hi",
            "llm.input_messages.0.message.extra": "s",
            "llm.input_messages.0.message.extra.a": "1",
        }
    )
    assert got.messages == [{"role": "user", "content": "hi"}]
    assert [(n.where, n.what, n.content) for n in got.notes] == [
        ("llm.input_messages[0].extra", "field 'extra'", '{"a": "1"}'),
        ("llm.input_messages.0.message.extra", "attribute 'llm.input_messages.0.message.extra'",
         "s"),
    ]  # fmt: skip


def test_the_miss_scores_how_many_spans_it_looked_at() -> None:
    spans = [{"attributes": {"a": 1}}, {"attributes": {"b": 2}}]
    assert openinference.claims(spans) == Miss(
        "", "no llm.input_messages or llm.output_messages attribute", 1
    )


def test_clashing_keys_inside_a_logical_json_message_are_notes_at_their_full_key() -> None:
    """Inside a logical-JSON message (a list of dotted-key objects) a clash is named by its
    whole dotted key; a keyless OTLP pair before the others does not stop them being read."""
    message = {"message.role": "user", "message.content": "hi", "message.extra": "s",
               "message.extra.a": "1"}  # fmt: skip
    got = _forced({"llm.input_messages": [message]})
    assert got.messages == [{"role": "user", "content": "hi"}]
    assert [(n.where, n.content) for n in got.notes] == [
        ("llm.input_messages[0].extra", '{"a": "1"}'),
        ("llm.input_messages.0.message.extra", "s"),
    ]
    pairs = [{"value": {"stringValue": "lost"}},
             {"key": "message.role", "value": {"stringValue": "user"}},
             {"key": "message.content", "value": {"stringValue": "hi"}}]  # fmt: skip
    value = {"arrayValue": {"values": [{"kvlistValue": {"values": pairs}}]}}
    span = {"attributes": [{"key": "llm.input_messages", "value": value}]}
    got = _forced({"resourceSpans": [{"scopeSpans": [{"spans": [span]}]}]})
    assert got.messages == [{"role": "user", "content": "hi"}]
    assert [n.content for n in got.notes] == ["lost"]
