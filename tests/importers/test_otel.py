"""The otel importer: what it claims, the messages and notes it reads, its located errors."""

from __future__ import annotations

import json
from typing import Any

import pytest
from import_helpers import (
    ASSISTANT,
    OTEL_ERRORS,
    PREFIX,
    USER_OTEL,
    USER_PARTS,
    error_edge,
    imported_edge,
    imported_fmt,
    kv_edge,
    kv_otel,
    load,
    notes_edge,
    raw,
    rows_edge,
)

from flowdrop_core.importers import (
    Claim,
    ConversationFormatError,
    Miss,
    parse_conversation,
)
from flowdrop_core.importers import (
    _otel as otel,
)


def test_otel_attributes_with_messages_as_json_text() -> None:
    got = imported_edge({"gen_ai.input.messages": json.dumps(USER_PARTS)}, "otel-genai")
    assert rows_edge(got) == [("user", "hi", None, None)]


def test_otel_system_instructions_come_first() -> None:
    got = imported_edge(
        {
            "gen_ai.system_instructions": [{"type": "text", "content": "sys"}],
            "gen_ai.input.messages": USER_PARTS,
        },
        "otel-genai",
    )
    assert rows_edge(got) == [("system", "sys", None, None), ("user", "hi", None, None)]


def test_otel_otlp_export_with_nested_any_values_and_a_bad_start_time() -> None:
    """OTLP keeps every value wrapped (arrayValue, kvlistValue, stringValue): all unwrapped."""
    part = {
        "kvlistValue": {
            "values": [
                kv_edge("type", {"stringValue": "text"}),
                kv_edge("content", {"stringValue": "deep"}),
            ]
        }
    }
    message = {
        "kvlistValue": {
            "values": [
                kv_edge("role", {"stringValue": "user"}),
                kv_edge("parts", {"arrayValue": {"values": [part]}}),
            ]
        }
    }
    span = {
        "name": "late",
        "startTimeUnixNano": "not a number",
        "attributes": [kv_edge("gen_ai.input.messages", {"arrayValue": {"values": [message]}})],
    }
    document = {"resourceSpans": [{"scopeSpans": [{"spans": [5, span]}]}]}
    assert rows_edge(imported_edge(document, "otel-genai")) == [("user", "deep", None, None)]


@pytest.mark.parametrize(("document", "problem"), OTEL_ERRORS)
def test_otel_bad_field_is_a_located_error(document: Any, problem: str) -> None:
    assert error_edge(document, "otel-genai") == PREFIX + problem


def test_otel_unknown_parts_are_markers_or_their_text_and_notes() -> None:
    parts = [{"type": "video"}, {"type": "widget", "content": "w"}]
    got = imported_edge([{"role": "user", "parts": parts}], "otel-genai")
    assert rows_edge(got) == [("user", "[video]\nw", None, None)]
    assert notes_edge(got) == [
        (
            "[0].parts[0]",
            "unknown part type 'video'",
            "otel-genai has no such part type; shown as a marker",
        ),
        (
            "[0].parts[1]",
            "unknown part type 'widget'",
            "otel-genai has no such part type; its content is kept",
        ),
    ]


def test_otel_server_tool_call_is_a_visible_marker() -> None:
    part = {"type": "server_tool_call", "id": "s1", "name": "web", "server_tool_call": {"q": 1}}
    got = imported_edge([{"role": "assistant", "parts": [part]}], "otel-genai")
    assert rows_edge(got) == [("assistant", '[server_tool_call web s1] {"q": 1}', None, None)]


def test_otel_messages_are_not_taken_for_openai_chat() -> None:
    """Role + parts read as Chat gave null texts; now OTel reads them, Chat notes them."""
    document = [
        {"role": "user", "parts": [{"type": "text", "content": "weather?"}]},
        {"role": "assistant", "parts": [{"type": "text", "content": "sunny"}]},
    ]
    got = imported_fmt(document)
    assert got.format == "otel-genai"
    assert got.messages == [
        {"role": "user", "content": "weather?"},
        {"role": "assistant", "content": "sunny"},
    ]
    # Forced to Chat, every text would sit in a note: that is no import at all.
    with pytest.raises(ConversationFormatError) as info:
        imported_fmt(document, "openai-chat")
    assert str(info.value) == (
        "<text> is not valid openai-chat: [0]: the message's whole content went to a note "
        "(field 'parts')"
    )


def test_otel_blob_uri_file_parts_are_markers_and_reasoning_a_note() -> None:
    got = imported_fmt(
        [
            {
                "role": "user",
                "parts": [
                    {"type": "text", "content": "what is this?"},
                    {"type": "uri", "modality": "image", "uri": "https://x/y.png"},
                    {"type": "blob", "mime_type": "audio/wav", "content": "AAA"},
                    {"type": "file", "file_id": "f1"},
                ],
            },
            {
                "role": "assistant",
                "parts": [
                    {"type": "reasoning", "content": "think"},
                    {"type": "text", "content": "a cat"},
                ],
            },
        ]
    )
    assert got.messages == [
        {"role": "user", "content": "what is this?\n[uri image]\n[blob audio/wav]\n[file]"},
        {"role": "assistant", "content": "a cat"},
    ]
    assert [(n.where, n.what, n.content) for n in got.notes] == [
        ("[1].parts[0]", "reasoning part", "think")
    ]


def test_otel_part_with_an_object_type_is_an_error_not_a_crash() -> None:
    """OTel does not claim it (no string part type), nor Chat (no content): a located error."""
    with pytest.raises(ConversationFormatError) as info:
        imported_fmt([{"role": "user", "parts": [{"type": {"t": 1}}]}])
    assert info.value.problems["otel-genai"] == "[0].parts[0]: a part without a string 'type'"
    assert info.value.problems["openai-chat"] == "[0]: no 'content', 'tool_calls' or 'tool_call_id'"


def test_otel_genai_attributes_with_provider_side_tool_parts() -> None:
    got = load("otel_genai_builtin_tools.json", "otel-genai")
    parts = raw("otel_genai_builtin_tools.json")["gen_ai.output.messages"][0]["parts"]
    server_call = json.dumps(parts[0]["server_tool_call"], ensure_ascii=False)
    server_result = json.dumps(parts[1]["server_tool_call_response"], ensure_ascii=False)
    assert got.messages == [
        {"role": "system", "content": "You are a helpful bot"},
        {
            "role": "user",
            "content": "Write Python code that generates a random number, executes it, and "
            "returns the result.",
        },
        {
            "role": "assistant",
            "content": f"[server_tool_call code_interpreter call_VSPygqKTWdrhaFErNvMV18Yl] "
            f"{server_call}\n[server_tool_call_response call_VSPygqKTWdrhaFErNvMV18Yl] "
            f"{server_result}\nThe generated random number is **89**, and the result of "
            "squaring it is **7921**",
        },
    ]
    assert got.origins == [
        "gen_ai.input.messages[0]",
        "gen_ai.input.messages[1]",
        "gen_ai.output.messages[0]",
    ]


def test_otel_one_span_document_origins_start_at_its_attributes() -> None:
    got = imported_edge(
        {"name": "chat", "attributes": {"gen_ai.input.messages": [USER_OTEL]}}, "otel-genai"
    )
    assert rows_edge(got) == [("user", "hi", None, None)]
    assert got.origins == ["attributes['gen_ai.input.messages'][0]"]


def test_otel_otlp_attribute_values_already_plain_json_are_read_as_they_are() -> None:
    """Some exporters write an attribute's value unwrapped (a plain list, a plain object)."""
    span = {
        "attributes": [
            kv_otel("gen_ai.input.messages", [USER_OTEL]),
            kv_otel("gen_ai.output.messages", {"arrayValue": {"values": [ASSISTANT]}}),
        ]
    }
    got = imported_edge({"resourceSpans": [{"scopeSpans": [{"spans": [span]}]}]}, "otel-genai")
    assert rows_edge(got) == [("user", "hi", None, None), ("assistant", "yo", None, None)]
    at = "resourceSpans[0].scopeSpans[0].spans[0].attributes"
    assert got.origins == [
        f"{at}['gen_ai.input.messages'][0]",
        f"{at}['gen_ai.output.messages'][0]",
    ]


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
    assert error_edge(document, "otel-genai") == PREFIX + problem


def test_otel_spans_without_a_readable_start_time_count_as_earliest() -> None:
    """The conversation is what the last timed span saw; a span with no or an
    unreadable start time sorts first (file order among them), a span without
    messages is skipped, and earlier spans' messages are notes naming their span."""

    def span(content: str, **fields: Any) -> dict[str, Any]:
        user = {"role": "user", "parts": [{"type": "text", "content": content}]}
        return {**fields, "attributes": [kv_otel("gen_ai.input.messages", [user])]}

    spans = [
        {"name": "tool", "startTimeUnixNano": "0", "attributes": [kv_otel("other", 1)]},
        span("timed", name="late", startTimeUnixNano="1"),
        span("unreadable", name="bad", startTimeUnixNano="soon"),
        span("untimed"),
    ]
    got = imported_edge({"resourceSpans": [{"scopeSpans": [{"spans": spans}]}]}, "otel-genai")
    assert rows_edge(got) == [("user", "timed", None, None)]
    at = "resourceSpans[0].scopeSpans[0].spans"
    why = "an earlier model call held it; the last call does not"
    assert notes_edge(got) == [
        (f"{at}[2].attributes['gen_ai.input.messages'][0]", "message of span 'bad'", why),
        (f"{at}[3].attributes['gen_ai.input.messages'][0]", f"message of span {at}[3]", why),
    ]


def test_otel_otlp_attributes_with_plain_or_missing_values_are_read_not_a_crash() -> None:
    span = {
        "attributes": [
            {"key": "gen_ai.operation.name"},
            kv_otel("gen_ai.usage.input_tokens", 12),
            kv_otel("gen_ai.input.messages", {"stringValue": '[{"role": "user", "parts": []}]'}),
        ]
    }
    got = imported_edge({"resourceSpans": [{"scopeSpans": [{"spans": [span]}]}]}, "otel-genai")
    assert rows_edge(got) == [("user", "", None, None)]


def test_otel_message_field_otel_does_not_read_is_a_note_with_its_content() -> None:
    message = {
        "role": "assistant",
        "parts": [{"type": "text", "content": "a"}],
        "name": "bot",
        "finish_reason": "stop",
        "tool_calls": [{"id": "c1"}],
    }
    got = imported_edge([message], "otel-genai")
    assert rows_edge(got) == [("assistant", "a", None, None)]
    assert notes_edge(got) == [
        ("[0].tool_calls", "field 'tool_calls'", "otel-genai does not read it")
    ]
    assert got.notes[0].content == '[{"id": "c1"}]'
    assert got.notes[0].unknown


def test_otel_unknown_part_note_is_marked_unknown_content() -> None:
    """The inspector and detection tell content a reader did not recognise from a
    deliberate skip (a reasoning part) by the note's 'unknown' flag."""
    parts = [{"type": "reasoning", "content": "think"}, {"type": "widget", "content": "w"}]
    got = imported_edge([{"role": "assistant", "parts": parts}], "otel-genai")
    assert rows_edge(got) == [("assistant", "w", None, None)]
    assert [(row["where"], row["unknown"]) for row in got.notes_as_dicts()] == [
        ("[0].parts[0]", False),
        ("[0].parts[1]", True),
    ]


# --------------------------------------------------------------------------- real recordings


def test_pydantic_ai_tool_call_response_result_key_is_the_result() -> None:
    """pydantic-ai's instrumentation writes a tool result under 'result' (not 'response'):
    it was imported as the text "null"."""
    got = load("otel_pydantic_ai_tool_results.json", "otel-genai")
    assert got.messages == [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "Convert 10 EUR."},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {"id": "call_1", "type": "function",
                 "function": {"name": "convert", "arguments": '{"amount": 10}'}}
            ],
        },
        {"role": "tool", "content": "11 USD", "tool_call_id": "call_1"},
        {"role": "tool", "content": "Unknown currency.\n\nFix the errors and try again.",
         "tool_call_id": "call_2"},
        {"role": "user",
         "content": "Validation feedback:\nOutput did not validate.\n\nFix the errors and try "
                    "again.\nThanks."},
    ]  # fmt: skip
    assert got.origins[3:5] == ["[3].parts[0]", "[3].parts[1]"]
    assert got.notes == []


def test_tool_call_response_without_its_value_is_empty_and_noted() -> None:
    """Content capture off: pydantic-ai writes the part with no value at all."""
    document = [
        {"role": "assistant", "parts": [{"type": "tool_call", "id": "t1", "name": "tool"}]},
        {"role": "user", "parts": [{"type": "tool_call_response", "id": "t1", "name": "tool"}]},
    ]
    got = imported_edge(document, "otel-genai")
    assert got.messages[1] == {"role": "tool", "content": "", "tool_call_id": "t1"}
    assert [(n.where, n.what) for n in got.notes] == [
        ("[1].parts[0]", "tool_call_response without its value")
    ]


def test_deprecated_whole_value_prompt_and_completion() -> None:
    """Arize-ai/openinference's ``otel_genai_deprecated_client_span_tool_calls.json`` fixture
    (``js/packages/openinference-genai/test/__fixtures__/``, in sample_data/fresh/SOURCES.md):
    the deprecated ``gen_ai.prompt`` (GenAI messages as one JSON string) and
    ``gen_ai.completion`` (``{"text", "finish_reason"}``). It was refused."""
    from pathlib import Path

    from flowdrop_core.importers import load_conversation

    path = Path(__file__).resolve().parents[2] / "sample_data/fresh"
    got = load_conversation(path / "otel_genai_deprecated_prompt_completion.json")
    assert got.format == "otel-genai"
    assert got.messages == [
        {"role": "user", "content": "Weather in Paris?"},
        {"role": "assistant", "content": "Absolutely! Let me check the weather for you.",
         "tool_calls": [{"id": "1234", "type": "function",
                         "function": {"name": "get_weather", "arguments": '{"location": "Paris"}'}}]},
        {"role": "tool", "content": "rainy, 57°F", "tool_call_id": "1234"},
        {"role": "assistant",
         "content": "The weather in Paris is currently rainy with a temperature of 57°F."},
    ]  # fmt: skip
    assert got.origins == [
        "gen_ai.prompt[0]",
        "gen_ai.prompt[1]",
        "gen_ai.prompt[2].parts[0]",
        "gen_ai.completion",
    ]
    assert got.notes == []


def test_deprecated_completion_field_it_does_not_read_is_a_note() -> None:
    """A completion object's other content-bearing key is a located note, not lost."""
    document = {"gen_ai.prompt": "Hi", "gen_ai.completion": {"text": "Hello", "content": "more"}}
    got = imported_edge(document, "otel-genai")
    assert got.messages == [
        {"role": "user", "content": "Hi"},
        {"role": "assistant", "content": "Hello"},
    ]
    assert [(n.where, n.what) for n in got.notes] == [
        ("gen_ai.completion.content", "field 'content'")
    ]


def test_the_deprecated_signature_is_the_whole_value_attributes_only() -> None:
    """The indexed ``gen_ai.prompt.N.*`` keys are otel-legacy's, not claimed here; a tool
    execution span (the real fixture, no conversation) is claimed by neither and refused."""
    from pathlib import Path

    from flowdrop_core.importers import (
        _otel as otel,
    )
    from flowdrop_core.importers import (
        _otel_legacy as otel_legacy,
    )
    from flowdrop_core.importers import (
        load_conversation,
    )
    from flowdrop_core.importers._claims import Claim, Miss

    assert isinstance(otel.claims({"gen_ai.prompt": "[]"}), Claim)
    assert isinstance(otel.claims({"attributes": {"gen_ai.completion": "x"}}), Claim)
    indexed = {"gen_ai.prompt.0.role": "user", "gen_ai.prompt.0.content": "Hi"}
    assert isinstance(otel.claims(indexed), Miss)
    assert isinstance(otel_legacy.claims(indexed), Claim)
    assert isinstance(otel_legacy.claims({"gen_ai.prompt": "[]"}), Miss)
    assert isinstance(otel.claims({"gen_ai.prompt": 3}), Miss)
    path = Path(__file__).resolve().parents[2] / "sample_data/fresh"
    tool_span = json.loads((path / "otel_genai_tool_execution_span.json").read_text("utf-8"))
    assert isinstance(otel.claims(tool_span), Miss)
    with pytest.raises(ConversationFormatError, match="no known format matched"):
        load_conversation(path / "otel_genai_tool_execution_span.json")


@pytest.mark.parametrize(
    ("document", "problem"),
    [
        ([5], "[0]: expected a message object, got number"),
        ([{"parts": []}], "[0]: missing 'role'"),
    ],
)
def test_otel_named_on_messages_detection_refuses_is_a_located_error(
    document: Any, problem: str
) -> None:
    """Detection refuses these shapes; naming the format reads them and locates the fault."""
    assert error_edge(document, "otel-genai") == f"<text> is not valid otel-genai: {problem}"


@pytest.mark.parametrize(
    ("document", "where", "what"),
    [
        ({"resourceSpans": 5}, "resourceSpans", "expected a list, got number"),
        ({"resourceSpans": [{"scopeSpans": 5}]}, "resourceSpans[0].scopeSpans", "expected a list"),
    ],
)
def test_otel_claims_locates_a_broken_otlp_export(document: Any, where: str, what: str) -> None:
    assert otel.claims(document) == Miss(where, what, 1)


def test_an_otlp_export_with_the_deprecated_whole_values_as_chat_messages() -> None:
    """An OTLP export whose span keeps ``gen_ai.prompt`` (OpenAI Chat messages as JSON text)
    and ``gen_ai.completion`` (``{"text", "finish_reason"}``) as OTLP attributes."""
    span = {"name": "chat m", "attributes": [
        {"key": "gen_ai.prompt", "value": {"stringValue": json.dumps(
            [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "hi"}])}},
        {"key": "gen_ai.completion", "value": {"stringValue": json.dumps(
            {"text": "yo", "finish_reason": "stop"})}}]}  # fmt: skip
    export = {"resourceSpans": [{"scopeSpans": [{"spans": [span]}]}]}
    assert otel.claims(export) == Claim(
        "an OTLP export with the deprecated gen_ai.prompt / gen_ai.completion"
    )
    got = parse_conversation(json.dumps(export), source_name="x.json")
    assert got.format == "otel-genai"
    assert got.messages == [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": "yo"},
    ]
    at = "resourceSpans[0].scopeSpans[0].spans[0].attributes"
    assert got.origins == [
        f"{at}['gen_ai.prompt'][0]",
        f"{at}['gen_ai.prompt'][1]",
        f"{at}['gen_ai.completion']",
    ]
    assert got.notes == []


def test_a_deprecated_completion_alone_is_the_assistant_turn() -> None:
    got = parse_conversation(
        json.dumps({"gen_ai.completion": "plain answer"}), source_name="x.json"
    )
    assert got.format == "otel-genai"
    assert got.messages == [{"role": "assistant", "content": "plain answer"}]
    assert got.origins == ["gen_ai.completion"]


def test_a_deprecated_prompt_holding_a_chat_request_whose_messages_are_no_list() -> None:
    with pytest.raises(ConversationFormatError) as info:
        parse_conversation(
            json.dumps({"gen_ai.prompt": json.dumps({"messages": 5})}),
            format="otel-genai",
            source_name="x.json",
        )
    assert str(info.value) == (
        "x.json is not valid otel-genai: gen_ai.prompt.messages: expected a list, got number"
    )


def test_a_message_whose_parts_are_no_list_is_missed() -> None:
    missed = otel.claims([{"role": "user", "parts": "x"}])
    assert isinstance(missed, Miss)
    assert (missed.where, missed.what) == ("[0].parts", "expected a list of parts")


def test_system_instructions_beside_the_deprecated_whole_values_lead_the_conversation() -> None:
    """``gen_ai.system_instructions`` with ``gen_ai.prompt`` / ``gen_ai.completion`` (no
    ``gen_ai.input.messages``) is the leading system message (it was dropped with no note);
    a completion field the reader does not read is an unknown note."""
    attributes = {
        "gen_ai.system_instructions": json.dumps([{"type": "text", "content": "Be brief."}]),
        "gen_ai.prompt": json.dumps([{"role": "user", "content": "hi"}]),
        "gen_ai.completion": json.dumps({"text": "yo", "finish_reason": "stop", "refusal": "x"}),
    }
    got = parse_conversation(json.dumps(attributes), source_name="x.json")
    assert got.format == "otel-genai"
    assert got.messages == [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": "yo"},
    ]
    assert got.origins == ["gen_ai.system_instructions", "gen_ai.prompt[0]", "gen_ai.completion"]
    assert [(n.where, n.what, n.why, n.unknown) for n in got.notes] == [
        ("gen_ai.completion.refusal", "field 'refusal'", "otel-genai does not read it", True)
    ]


def test_otel_semconv_reasoning_output_example_keeps_the_reasoning_as_a_note() -> None:
    """The semantic conventions' own example (``gen_ai.output.messages`` of "Chat completion
    with reasoning"): its reasoning part holds ``content``, not ``text``. Read alone, the
    AI SDK reader also claims it (a ``text`` part); it used to crash on the reasoning part
    (``KeyError: 'text'``, an internal error) instead of leaving the file to otel-genai."""
    got = load("otel_genai_reasoning_output.json", "otel-genai")
    assert got.messages == [
        {
            "role": "assistant",
            "content": " Why did the developer bring OpenTelemetry to the party? "
            "Because it always knows how to trace the fun!",
        }
    ]
    assert [(n.where, n.what, n.content[:40]) for n in got.notes] == [
        ("[0].parts[0]", "reasoning part", "Alright, the user wants a joke about Ope")
    ]
