"""How the Bedrock Converse and Langfuse readers treat each field they meet.

Every bad field is a located error naming where and what; every skipped part
is a located note; nothing is silently dropped. Each test states the exact
messages a user gets back, or the exact error text.
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


def imported(document: Any, fmt: str) -> ImportedConversation:
    return parse_conversation(json.dumps(document), format=fmt)


def rows(got: ImportedConversation) -> list[tuple[Any, ...]]:
    return [
        (m.get("role"), m.get("content"), m.get("tool_calls"), m.get("tool_call_id"))
        for m in got.messages
    ]


def notes(got: ImportedConversation) -> list[tuple[str, str, str]]:
    return [(n.where, n.what, n.why) for n in got.notes]


def error(document: Any, fmt: str) -> str:
    with pytest.raises(ConversationFormatError) as info:
        imported(document, fmt)
    return str(info.value)


def use(call_id: str = "t1") -> dict[str, Any]:
    return {"toolUse": {"toolUseId": call_id, "name": "f", "input": {"a": 1}}}


CALL = {"id": "t1", "type": "function", "function": {"name": "f", "arguments": '{"a": 1}'}}

# --------------------------------------------------------------------------- bedrock


def test_bedrock_system_blocks_join_and_cache_points_are_skipped() -> None:
    got = imported(
        {
            "system": [{"text": "be brief"}, {"cachePoint": {"type": "default"}}],
            "messages": [{"role": "user", "content": [{"text": "hi"}]}],
        },
        "bedrock",
    )
    assert rows(got) == [("system", "be brief", None, None), ("user", "hi", None, None)]
    assert notes(got) == []


BEDROCK_ERRORS: list[tuple[dict[str, Any], str]] = [
    ({"system": "x", "messages": []}, "system: expected a list of system blocks, got string"),
    ({"system": [5], "messages": []}, "system[0]: expected a {'text': ...} block"),
    ({"messages": "x"}, "messages: expected a list, got string"),
    ({"output": {"nomessage": 1}}, "output: missing 'message'"),
    (
        {"messages": [{"role": "user", "content": [5]}]},
        "messages[0].content[0]: expected a content block object, got number",
    ),
    (
        {"messages": [{"role": "user", "content": [{"type": "text", "text": "a"}]}]},
        "messages[0].content[0]: a block with 'type' is not a Converse block",
    ),
    (
        {"messages": [{"role": "assistant", "content": [{"toolUse": {"name": "f"}}]}]},
        "messages[0].content[0].toolUse: toolUse without 'toolUseId'",
    ),
    (
        {"messages": [{"role": "user", "content": [use()]}]},
        "messages[0]: toolUse in a user message; only the assistant calls tools",
    ),
    (
        {
            "messages": [
                {"role": "assistant", "content": [use()]},
                {"role": "user", "content": [{"toolResult": {"content": [{"text": "r"}]}}]},
            ]
        },
        "messages[1].content[0].toolResult: toolResult without 'toolUseId'",
    ),
    (
        {
            "messages": [
                {"role": "assistant", "content": [use()]},
                {"role": "user", "content": [{"toolResult": {"toolUseId": "t1", "content": "x"}}]},
            ]
        },
        "messages[1].content[0].toolResult.content: expected a list, got string",
    ),
]


@pytest.mark.parametrize(("document", "problem"), BEDROCK_ERRORS)
def test_bedrock_bad_field_is_a_located_error(document: dict[str, Any], problem: str) -> None:
    assert error(document, "bedrock") == f"<text> is not valid bedrock: {problem}"


def test_bedrock_media_is_a_marker_and_an_unknown_block_a_note() -> None:
    got = imported(
        {
            "messages": [
                {"role": "user", "content": [{"image": {"format": "png"}}, {"cachePoint": {}}]},
                {"role": "assistant", "content": [{"wizard": 1}]},
            ]
        },
        "bedrock",
    )
    assert rows(got) == [("user", "[image]", None, None), ("assistant", "[wizard]", None, None)]
    assert notes(got) == [
        ("messages[1].content[0]", "unknown content block (wizard)", "bedrock has no such block")
    ]


def test_bedrock_tool_result_media_is_a_marker_and_an_odd_part_a_note() -> None:
    got = imported(
        {
            "messages": [
                {"role": "assistant", "content": [use()]},
                {
                    "role": "user",
                    "content": [
                        {"toolResult": {"toolUseId": "t1", "content": [{"image": {}}, {"odd": 1}]}}
                    ],
                },
            ]
        },
        "bedrock",
    )
    assert rows(got) == [("assistant", None, [CALL], None), ("tool", "[image]", None, "t1")]
    assert notes(got) == [
        (
            "messages[1].content[0].toolResult.content[1]",
            "unknown tool result block",
            "bedrock has no such block",
        )
    ]


# --------------------------------------------------------------------------- langfuse


def generation(**fields: Any) -> dict[str, Any]:
    return {"id": "g", "type": "GENERATION", **fields}


def test_langfuse_trace_holding_its_own_observations() -> None:
    got = imported(
        {
            "trace": {
                "id": "t",
                "observations": [
                    generation(input=[{"role": "user", "content": "hi"}], output=""),
                ],
            }
        },
        "langfuse",
    )
    assert rows(got) == [("user", "hi", None, None)]  # an empty output adds no message
    assert notes(got) == []


def test_langfuse_trace_observations_not_a_list_is_a_located_error() -> None:
    assert error({"trace": {"id": "t", "observations": "nope"}}, "langfuse") == (
        "<text> is not valid langfuse: trace.observations: expected a list of observations"
    )


def test_langfuse_generations_without_messages_fall_back_to_the_trace_output() -> None:
    got = imported(
        {
            "trace": {
                "id": "t",
                "output": {
                    "messages": [
                        {"role": "user", "content": "q"},
                        {"role": "assistant", "content": "a"},
                    ]
                },
            },
            "observations": [generation(), {"id": "s", "type": "SPAN"}],
        },
        "langfuse",
    )
    assert rows(got) == [("user", "q", None, None), ("assistant", "a", None, None)]


def test_langfuse_trace_output_no_format_reads_falls_back_to_its_input() -> None:
    got = imported(
        {
            "trace": {"id": "t", "output": 5, "input": [{"role": "user", "content": "only in"}]},
            "observations": [generation()],
        },
        "langfuse",
    )
    assert rows(got) == [("user", "only in", None, None)]


def test_langfuse_nothing_readable_anywhere_is_an_error() -> None:
    document = {"trace": {"id": "t", "output": {"weird": 1}}, "observations": [generation()]}
    assert error(document, "langfuse") == (
        "<text> is not valid langfuse: observations: "
        "no GENERATION observation with input or output messages"
    )


def test_langfuse_text_that_only_looks_like_json_stays_text() -> None:
    got = imported([generation(input="{not json", output="answer")], "langfuse")
    assert rows(got) == [("user", "{not json", None, None), ("assistant", "answer", None, None)]


def test_langfuse_output_no_format_reads_is_a_note_not_a_failure() -> None:
    got = imported([generation(input="q", output={"choices": 1})], "langfuse")
    assert rows(got) == [("user", "q", None, None)]
    assert [(where, what) for where, what, _ in notes(got)] == [
        ("[0].output", "generation output in no known format")
    ]


def test_langfuse_gemini_candidate_output_is_unwrapped() -> None:
    output = {"content": {"role": "model", "parts": [{"text": "gem"}]}}
    got = imported([generation(input="hello", output=output)], "langfuse")
    assert rows(got) == [("user", "hello", None, None), ("assistant", "gem", None, None)]


# --------------------------------------------------------------------------- OpenTelemetry GenAI

USER_PARTS = [{"role": "user", "parts": [{"type": "text", "content": "hi"}]}]


def kv(key: str, value: dict[str, Any]) -> dict[str, Any]:
    return {"key": key, "value": value}


def test_otel_attributes_with_messages_as_json_text() -> None:
    got = imported({"gen_ai.input.messages": json.dumps(USER_PARTS)}, "otel-genai")
    assert rows(got) == [("user", "hi", None, None)]


def test_otel_system_instructions_come_first() -> None:
    got = imported(
        {
            "gen_ai.system_instructions": [{"type": "text", "content": "sys"}],
            "gen_ai.input.messages": USER_PARTS,
        },
        "otel-genai",
    )
    assert rows(got) == [("system", "sys", None, None), ("user", "hi", None, None)]


def test_otel_otlp_export_with_nested_any_values_and_a_bad_start_time() -> None:
    """OTLP keeps every value wrapped (arrayValue, kvlistValue, stringValue): all unwrapped."""
    part = {
        "kvlistValue": {
            "values": [kv("type", {"stringValue": "text"}), kv("content", {"stringValue": "deep"})]
        }
    }
    message = {
        "kvlistValue": {
            "values": [
                kv("role", {"stringValue": "user"}),
                kv("parts", {"arrayValue": {"values": [part]}}),
            ]
        }
    }
    span = {
        "name": "late",
        "startTimeUnixNano": "not a number",
        "attributes": [kv("gen_ai.input.messages", {"arrayValue": {"values": [message]}})],
    }
    document = {"resourceSpans": [{"scopeSpans": [{"spans": [5, span]}]}]}
    assert rows(imported(document, "otel-genai")) == [("user", "deep", None, None)]


PREFIX = "<text> is not valid otel-genai: "
OTEL_ERRORS: list[tuple[Any, str]] = [
    (
        5,
        "expected GenAI messages, a span with gen_ai.input.messages or an OTLP export, got number",
    ),
    ({"resourceSpans": "x"}, "resourceSpans: expected a list, got string"),
    ({"resourceSpans": [{"scopeSpans": "x"}]}, "resourceSpans[0].scopeSpans: expected a list"),
    (
        {"resourceSpans": [{"scopeSpans": [{"spans": "x"}]}]},
        "resourceSpans[0].scopeSpans[0].spans: expected a list",
    ),
    (
        [{"attributes": {"other": 1}}],
        "no span carries gen_ai.input.messages or gen_ai.output.messages",
    ),
    ([{"attributes": [5]}], "[0].attributes[0]: expected an attribute {'key', 'value'}"),
    (
        {"gen_ai.input.messages": "{bad"},
        "gen_ai.input.messages: not JSON "
        "(Expecting property name enclosed in double quotes at line 1, column 2)",
    ),
    (
        {"gen_ai.system_instructions": {"a": 1}, "gen_ai.input.messages": USER_PARTS},
        "gen_ai.system_instructions: expected a list of parts, got object",
    ),
    ([{"role": "user"}], "[0]: missing 'parts'"),
    ([{"role": "user", "parts": "x"}], "[0].parts: expected a list, got string"),
    ([{"role": "user", "parts": [5]}], "[0].parts[0]: expected a part object, got number"),
    ([{"role": "user", "parts": [{"content": "x"}]}], "[0].parts[0]: part without a string 'type'"),
    (
        [{"role": "user", "parts": [{"type": "text"}]}],
        "[0].parts[0]: text part without a string 'content'",
    ),
    (
        [{"role": "user", "parts": [{"type": "tool_call", "id": "c1", "name": "f"}]}],
        "[0]: tool_call part on a user message; only assistant turns call tools",
    ),
]


@pytest.mark.parametrize(("document", "problem"), OTEL_ERRORS)
def test_otel_bad_field_is_a_located_error(document: Any, problem: str) -> None:
    assert error(document, "otel-genai") == PREFIX + problem


def test_otel_unknown_parts_are_markers_or_their_text_and_notes() -> None:
    parts = [{"type": "video"}, {"type": "widget", "content": "w"}]
    got = imported([{"role": "user", "parts": parts}], "otel-genai")
    assert rows(got) == [("user", "[video]\nw", None, None)]
    assert notes(got) == [
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
    got = imported([{"role": "assistant", "parts": [part]}], "otel-genai")
    assert rows(got) == [("assistant", '[server_tool_call web s1] {"q": 1}', None, None)]


# --------------------------------------------------------------------------- ShareGPT

SHAREGPT_ERRORS: list[tuple[Any, str]] = [
    ({"conversations": "x"}, "conversations: expected a list, got string"),
    (
        {"conversations": [{"from": 5, "value": "x"}]},
        "conversations[0]: 'from' must be a string, got number",
    ),
    (
        {"conversations": [{"from": "human", "value": 5}]},
        "conversations[0].value: expected a string, got number",
    ),
    (
        {"conversations": [{"from": "bot", "value": "x"}]},
        "conversations[0]: unknown 'from' 'bot' "
        "(expected human, gpt, system, function_call or observation)",
    ),
    ({"system": ["be brief"], "conversations": []}, "system: expected a string, got list"),
    (
        [{"conversations": []}, {"system": 5, "conversations": []}],
        "[1].system: expected a string, got number",
    ),
    ("hello", "expected a record with 'conversations' or a list, got string"),
]


@pytest.mark.parametrize(("document", "problem"), SHAREGPT_ERRORS)
def test_sharegpt_bad_field_is_a_located_error(document: Any, problem: str) -> None:
    assert error(document, "sharegpt") == f"<text> is not valid sharegpt: {problem}"


def test_sharegpt_system_prompt_opens_its_record() -> None:
    got = imported(
        {"system": "be brief", "conversations": [{"from": "human", "value": "hi"}]}, "sharegpt"
    )
    assert rows(got) == [("system", "be brief", None, None), ("user", "hi", None, None)]
    assert got.origins == ["system", "conversations[0]"]


def test_sharegpt_records_keep_their_own_system_prompt_and_an_empty_one_adds_nothing() -> None:
    got = imported(
        [
            {"system": "be brief", "conversations": [{"from": "human", "value": "a"}]},
            {"system": "", "conversations": [{"from": "human", "value": "b"}]},
            {"system": None, "conversations": [{"from": "gpt", "value": "c"}]},
        ],
        "sharegpt",
    )
    assert rows(got) == [
        ("system", "be brief", None, None),
        ("user", "a", None, None),
        ("user", "b", None, None),
        ("assistant", "c", None, None),
    ]
    assert got.origins == [
        "[0].system",
        "[0].conversations[0]",
        "[1].conversations[0]",
        "[2].conversations[0]",
    ]
    assert notes(got) == []


def test_sharegpt_observation_with_no_open_call_is_kept_with_a_note() -> None:
    got = imported(
        {"conversations": [{"from": "human", "value": "q"}, {"from": "observation", "value": "r"}]},
        "sharegpt",
    )
    assert rows(got) == [("user", "q", None, None), ("tool", "r", None, None)]
    assert notes(got) == [
        (
            "conversations[1]",
            "observation without a call",
            "no earlier function_call is open; imported with no tool_call_id",
        )
    ]


def test_sharegpt_call_in_a_langfuse_trace_matches_across_generations_despite_made_up_ids() -> None:
    """The source has no call ids, so each generation makes up its own from origins;
    the same call seen by an earlier generation is not reported as lost."""
    human = {"from": "human", "value": "area?"}
    asked = {"from": "function_call", "value": json.dumps({"name": "area", "arguments": {"r": 2}})}
    answer = {"from": "observation", "value": "12.6"}
    first = generation(
        name="plan",
        startTime="1",
        input={"conversations": [human]},
        output={"conversations": [asked]},
    )
    last = generation(name="answer", startTime="2", input={"conversations": [human, asked, answer]})
    got = imported([first, last], "langfuse")
    made_up = "conversations[1]"
    assert rows(got) == [
        ("user", "area?", None, None),
        (
            "assistant",
            None,
            [
                {
                    "id": made_up,
                    "type": "function",
                    "function": {"name": "area", "arguments": '{"r": 2}'},
                }
            ],
            None,
        ),
        ("tool", "12.6", None, made_up),
    ]
    assert notes(got) == []


@pytest.mark.parametrize("value", ["not json", "[]"], ids=["text", "empty-list"])
def test_sharegpt_function_call_that_is_not_a_call_is_kept_as_text(value: str) -> None:
    got = imported({"conversations": [{"from": "function_call", "value": value}]}, "sharegpt")
    assert rows(got) == [("assistant", value, None, None)]
    assert notes(got) == [
        (
            "conversations[0]",
            "function_call that is not JSON {name, arguments}",
            "imported as the assistant's text, not as a call",
        )
    ]


def test_sharegpt_several_calls_in_one_turn_are_answered_in_order() -> None:
    calls = [{"name": "a", "arguments": {}}, {"name": "b", "arguments": {"x": 1}}]
    got = imported(
        {
            "conversations": [
                {"from": "function_call", "value": json.dumps(calls)},
                {"from": "observation", "value": "ra"},
                {"from": "observation", "value": "rb"},
            ]
        },
        "sharegpt",
    )
    first = "conversations[0][0]"
    second = "conversations[0][1]"
    assert rows(got) == [
        (
            "assistant",
            None,
            [
                {"id": first, "type": "function", "function": {"name": "a", "arguments": "{}"}},
                {
                    "id": second,
                    "type": "function",
                    "function": {"name": "b", "arguments": '{"x": 1}'},
                },
            ],
            None,
        ),
        ("tool", "ra", None, first),
        ("tool", "rb", None, second),
    ]


# --------------------------------------------------------------------------- Gemini

GEMINI_USER = {"role": "user", "parts": [{"text": "hi"}]}

GEMINI_ERRORS: list[tuple[Any, str]] = [
    ({"contents": "x"}, "contents: expected a list, got string"),
    ({"contents": [GEMINI_USER], "candidates": "x"}, "candidates: expected a list, got string"),
    (
        {"contents": [GEMINI_USER], "candidates": [5]},
        "candidates[0]: expected a candidate with 'content'",
    ),
    (
        {"contents": [{"role": "user", "parts": [{"functionCall": {"name": "f", "args": {}}}]}]},
        "contents[0]: functionCall in a user content; only the model calls tools",
    ),
]


@pytest.mark.parametrize(("document", "problem"), GEMINI_ERRORS)
def test_gemini_bad_field_is_a_located_error(document: Any, problem: str) -> None:
    assert error(document, "gemini") == f"<text> is not valid gemini: {problem}"


def test_gemini_system_instruction_as_plain_text() -> None:
    got = imported({"systemInstruction": "be brief", "contents": [GEMINI_USER]}, "gemini")
    assert rows(got) == [("system", "be brief", None, None), ("user", "hi", None, None)]


def test_gemini_only_the_first_candidate_is_imported_the_others_are_notes() -> None:
    candidates = [
        {"content": {"role": "model", "parts": [{"text": "a"}]}},
        {"content": {"role": "model", "parts": [{"text": "b"}]}},
    ]
    got = imported({"contents": [GEMINI_USER], "candidates": candidates}, "gemini")
    assert rows(got) == [("user", "hi", None, None), ("assistant", "a", None, None)]
    assert notes(got) == [
        (
            "candidates[1].content",
            "another candidate",
            "alternative completions are not one conversation; candidates[0] is imported",
        )
    ]


def test_gemini_response_without_a_call_is_kept_with_a_note() -> None:
    response = {"functionResponse": {"name": "f", "response": {"r": 1}}}
    got = imported({"contents": [GEMINI_USER, {"role": "user", "parts": [response]}]}, "gemini")
    assert rows(got) == [("user", "hi", None, None), ("tool", '{"r": 1}', None, None)]
    assert notes(got) == [
        (
            "contents[1].parts[0]",
            "function response without a call",
            "no earlier functionCall of that name is open",
        )
    ]


def test_gemini_media_and_code_parts_are_visible_markers() -> None:
    parts = [
        {"inlineData": {"mimeType": "image/png", "data": "x"}},
        {"executableCode": {"code": "print(1)"}},
    ]
    got = imported({"contents": [{"role": "user", "parts": parts}]}, "gemini")
    assert rows(got) == [
        ("user", '[inlineData image/png]\n[executableCode] {"code": "print(1)"}', None, None)
    ]


# --------------------------------------------------------------------------- OpenAI Chat

CHAT_ERRORS: list[tuple[Any, str]] = [
    ({"choices": "x"}, "choices: expected a list, got string"),
    ({"choices": [5]}, "choices[0]: expected a choice object with a 'message'"),
    (
        [{"role": "user", "content": 5}],
        "[0].content: expected a string, a list of content parts or null, got number",
    ),
    (
        [{"role": "user", "content": "x", "metadata": [1]}],
        "[0].metadata: expected an object, got list",
    ),
    (
        [{"role": "assistant", "content": None, "function_call": "x"}],
        "[0].function_call: expected a function_call object, got string",
    ),
    (
        [{"role": "assistant", "content": None, "tool_calls": [5]}],
        "[0].tool_calls[0]: expected a tool call object, got number",
    ),
    (
        [{"role": "assistant", "content": None, "tool_calls": "x"}],
        "[0].tool_calls: expected a list of tool calls, got string",
    ),
    (
        [{"role": "user", "content": [5]}],
        "[0].content[0]: expected a content part object, got number",
    ),
]


@pytest.mark.parametrize(("document", "problem"), CHAT_ERRORS)
def test_chat_bad_field_is_a_located_error(document: Any, problem: str) -> None:
    assert error(document, "openai-chat") == f"<text> is not valid openai-chat: {problem}"


def test_chat_request_messages_then_the_response_choice() -> None:
    document = {
        "messages": [{"role": "user", "content": "q"}],
        "choices": [{"message": {"role": "assistant", "content": "a"}}],
    }
    got = imported(document, "openai-chat")
    assert rows(got) == [("user", "q", None, None), ("assistant", "a", None, None)]


def test_chat_object_content_is_its_json_with_a_note() -> None:
    got = imported([{"role": "tool", "content": {"rows": 2}, "tool_call_id": "c1"}], "openai-chat")
    assert rows(got) == [("tool", '{"rows": 2}', None, "c1")]
    assert notes(got) == [
        (
            "[0].content",
            "content that is an object",
            "openai-chat content is text; shown as its JSON",
        )
    ]


def test_chat_stored_row_shape_null_metadata_and_id_in_metadata() -> None:
    """A buffer's own rows (id under metadata) read back as the same messages."""
    got = imported(
        [
            {"role": "user", "content": "x", "metadata": None},
            {"role": "tool", "content": "r", "metadata": {"tool_call_id": "c9"}},
        ],
        "openai-chat",
    )
    assert rows(got) == [("user", "x", None, None), ("tool", "r", None, "c9")]


# --------------------------------------------------------------------------- Anthropic Messages


def tool_use(call_id: str = "t1") -> dict[str, Any]:
    return {"type": "tool_use", "id": call_id, "name": "f", "input": {}}


ANTHROPIC_ERRORS: list[tuple[Any, str]] = [
    (
        {"system": 5, "messages": [{"role": "user", "content": "hi"}]},
        "system: expected a string or a list of text blocks, got number",
    ),
    (
        {"messages": [{"role": "user", "content": [5]}]},
        "messages[0].content[0]: expected a content block object, got number",
    ),
    (
        {"messages": [{"role": "user", "content": [{"type": "text"}]}]},
        "messages[0].content[0]: text block without a string 'text'",
    ),
    (
        {"messages": [{"role": "assistant", "content": [{"type": "tool_use", "name": "f"}]}]},
        "messages[0].content[0]: tool_use block without 'id'",
    ),
    (
        {
            "messages": [
                {"role": "assistant", "content": [{"type": "tool_result", "tool_use_id": "x"}]}
            ]
        },
        "messages[0].content[0]: tool_result block in an assistant message",
    ),
    (
        {
            "messages": [
                {"role": "assistant", "content": [tool_use()]},
                {
                    "role": "user",
                    "content": [{"type": "tool_result", "tool_use_id": "t1", "content": 5}],
                },
            ]
        },
        "messages[1].content[0].content: expected a string or a list of blocks, got number",
    ),
]


@pytest.mark.parametrize(("document", "problem"), ANTHROPIC_ERRORS)
def test_anthropic_bad_field_is_a_located_error(document: Any, problem: str) -> None:
    assert error(document, "anthropic") == f"<text> is not valid anthropic: {problem}"


def test_anthropic_empty_system_adds_nothing_and_an_image_is_a_marker() -> None:
    document = {
        "system": "",
        "messages": [{"role": "user", "content": [{"type": "image", "source": {}}]}],
    }
    got = imported(document, "anthropic")
    assert rows(got) == [("user", "[image]", None, None)]


def test_anthropic_redacted_thinking_beside_a_result_is_a_note() -> None:
    document = {
        "messages": [
            {"role": "assistant", "content": [tool_use()]},
            {
                "role": "user",
                "content": [
                    {"type": "tool_result", "tool_use_id": "t1", "content": "r"},
                    {"type": "redacted_thinking", "data": "x"},
                ],
            },
        ]
    }
    got = imported(document, "anthropic")
    call = {"id": "t1", "type": "function", "function": {"name": "f", "arguments": "{}"}}
    assert rows(got) == [("assistant", None, [call], None), ("tool", "r", None, "t1")]
    assert notes(got) == [
        (
            "messages[1].content[1]",
            "redacted_thinking block",
            "encrypted model reasoning is not a conversation message",
        )
    ]


# --------------------------------------------------------------------------- LangChain

LANGCHAIN_ERRORS: list[tuple[Any, str]] = [
    (
        [
            {
                "type": "ai",
                "content": "",
                "tool_calls": [{"id": "c1", "name": "search", "args": {}}],
            },
            {"role": "search", "content": 5},  # a JS tool result named by its tool
        ],
        "[1].content: expected a string, got number",
    ),
    (
        [{"role": "stranger", "content": "x"}],
        "[0]: unknown role 'stranger' (expected user, assistant, system or tool)",
    ),
    (
        [{"lc": 1, "type": "constructor", "id": ["x", "HumanMessage"], "kwargs": 5}],
        "[0].kwargs: expected an object, got number",
    ),
    (
        [{"type": "human", "content": 5}],
        "[0].content: expected a string or a list of content parts, got number",
    ),
    (
        [{"type": "ai", "content": "", "tool_calls": "x"}],
        "[0].tool_calls: expected a list, got string",
    ),
    (
        [{"type": "ai", "content": "", "additional_kwargs": {"tool_calls": "x"}}],
        "[0].additional_kwargs.tool_calls: expected a list, got string",
    ),
]


@pytest.mark.parametrize(("document", "problem"), LANGCHAIN_ERRORS)
def test_langchain_bad_field_is_a_located_error(document: Any, problem: str) -> None:
    assert error(document, "langchain") == f"<text> is not valid langchain: {problem}"


def test_langchain_chat_message_class_and_chat_type_take_their_role() -> None:
    got = imported(
        [
            {
                "lc": 1,
                "type": "constructor",
                "id": ["langchain", "schema", "messages", "ChatMessage"],
                "kwargs": {"role": "user", "content": "hi"},
            },
            {"type": "chat", "role": "assistant", "content": "a"},
        ],
        "langchain",
    )
    assert rows(got) == [("user", "hi", None, None), ("assistant", "a", None, None)]


def test_langchain_reasoning_summary_is_a_note_with_its_text() -> None:
    extra = {"reasoning": {"summary": [{"text": "thought"}, 5]}}
    got = imported([{"type": "ai", "content": "a", "additional_kwargs": extra}], "langchain")
    assert rows(got) == [("assistant", "a", None, None)]
    assert [(n.where, n.what, n.content) for n in got.notes] == [
        ("[0].additional_kwargs.reasoning", "reasoning", "thought")
    ]


def test_langchain_invalid_tool_calls_are_kept_as_calls() -> None:
    """A call the model botched is still a call: its result must find it (MEM-5 needs it)."""
    invalid = [{"id": "c2", "name": "f", "args": "{bad"}]
    got = imported([{"type": "ai", "content": "", "invalid_tool_calls": invalid}], "langchain")
    call = {"id": "c2", "type": "function", "function": {"name": "f", "arguments": "{bad"}}
    assert rows(got) == [("assistant", None, [call], None)]


def test_langchain_call_block_missing_from_tool_calls_is_a_note() -> None:
    document = [
        {
            "type": "ai",
            "content": [{"type": "tool_use", "id": "zz", "name": "f", "input": {}}],
            "tool_calls": [{"id": "c1", "name": "f", "args": {}}],
        }
    ]
    got = imported(document, "langchain")
    call = {"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{}"}}
    assert rows(got) == [("assistant", None, [call], None)]
    assert notes(got) == [
        (
            "[0].content[0]",
            "tool_use block not in tool_calls",
            "LangChain reads calls from tool_calls; this block declares one it lacks",
        )
    ]


# --------------------------------------------------------------------------- OpenAI Responses

RESPONSES_CALL = {"type": "function_call", "call_id": "c1", "name": "f", "arguments": "{}"}

RESPONSES_ERRORS: list[tuple[Any, str]] = [
    ({"input": [{"type": "message", "content": "x"}]}, "input[0]: missing 'role'"),
    (
        {"input": [{"type": "function_call", "name": "f", "arguments": "{}"}]},
        "input[0]: function_call without 'call_id'",
    ),
    (
        {"input": [{"type": "function_call", "call_id": "c1", "arguments": "{}"}]},
        "input[0]: function_call without 'name'",
    ),
    (
        {"input": [RESPONSES_CALL, {"type": "function_call_output", "call_id": "c1"}]},
        "input[1]: function_call_output without 'output'",
    ),
]


@pytest.mark.parametrize(("document", "problem"), RESPONSES_ERRORS)
def test_responses_bad_item_is_a_located_error(document: Any, problem: str) -> None:
    assert error(document, "openai-responses") == (
        f"<text> is not valid openai-responses: {problem}"
    )


# --------------------------------------------------------------------------- Claude Code sessions

SESSION_START = '{"type":"user","message":{"role":"user","content":"hi"}}\n'


@pytest.mark.parametrize(
    ("line", "why"),
    [
        ("[1]", "expected an event object, got list"),
        ('{"type":5}', "event without a string 'type'"),
        ("{bad", "not JSON (Expecting property name enclosed in double quotes at column 2)"),
    ],
    ids=["list", "type-not-text", "not-json"],
)
def test_claude_code_unreadable_line_after_the_start_is_a_located_note(line: str, why: str) -> None:
    got = parse_conversation(SESSION_START + line + "\n", format="claude-code")
    assert rows(got) == [("user", "hi", None, None)]
    assert notes(got) == [("line 2", "unreadable line", why)]


def test_notes_as_json_rows_keep_what_was_left_out() -> None:
    got = imported([{"role": "user", "content": [{"type": "widget", "text": "w"}]}], "openai-chat")
    assert rows(got) == [("user", "w", None, None)]
    assert got.notes_as_dicts() == [
        {
            "where": "[0].content[0]",
            "what": "unknown content part type 'widget'",
            "why": "openai-chat has no such part type; its text is kept",
            "content": '{"type": "widget", "text": "w"}',
            "unknown": True,
        }
    ]
