"""The bedrock importer: what it claims, the messages and notes it reads, its located errors."""

from __future__ import annotations

import json
from typing import Any

import pytest
from import_helpers import (
    BEDROCK_ERRORS,
    CALL,
    call_fmt,
    call_sample,
    error_edge,
    imported_bedrock,
    imported_edge,
    imported_fmt,
    load,
    notes_edge,
    rows_bedrock,
    rows_edge,
    use_edge,
)

from flowdrop_core.importers import Miss
from flowdrop_core.importers import _bedrock as bedrock


def test_bedrock_system_blocks_join_and_cache_points_are_skipped() -> None:
    got = imported_edge(
        {
            "system": [{"text": "be brief"}, {"cachePoint": {"type": "default"}}],
            "messages": [{"role": "user", "content": [{"text": "hi"}]}],
        },
        "bedrock",
    )
    assert rows_edge(got) == [("system", "be brief", None, None), ("user", "hi", None, None)]
    assert notes_edge(got) == []


@pytest.mark.parametrize(("document", "problem"), BEDROCK_ERRORS)
def test_bedrock_bad_field_is_a_located_error(document: dict[str, Any], problem: str) -> None:
    assert error_edge(document, "bedrock") == f"<text> is not valid bedrock: {problem}"


def test_bedrock_media_is_a_marker_and_an_unknown_block_a_note() -> None:
    got = imported_edge(
        {
            "messages": [
                {"role": "user", "content": [{"image": {"format": "png"}}, {"cachePoint": {}}]},
                {"role": "assistant", "content": [{"wizard": 1}]},
            ]
        },
        "bedrock",
    )
    assert rows_edge(got) == [
        ("user", "[image]", None, None),
        ("assistant", "[wizard]", None, None),
    ]
    assert notes_edge(got) == [
        ("messages[1].content[0]", "unknown content block (wizard)", "bedrock has no such block")
    ]


def test_bedrock_tool_result_media_is_a_marker_and_an_odd_part_a_note() -> None:
    got = imported_edge(
        {
            "messages": [
                {"role": "assistant", "content": [use_edge()]},
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
    assert rows_edge(got) == [("assistant", None, [CALL], None), ("tool", "[image]", None, "t1")]
    assert notes_edge(got) == [
        (
            "messages[1].content[0].toolResult.content[1]",
            "unknown tool result block",
            "bedrock has no such block",
        )
    ]


def test_bedrock_response_json_result_error_status_and_reasoning() -> None:
    got = imported_fmt(
        {
            "messages": [
                {"role": "user", "content": [{"text": "go"}]},
                {"role": "assistant", "content": [{"toolUse": {"toolUseId": "t1", "name": "f", "input": {}}}]},
                {
                    "role": "user",
                    "content": [{"toolResult": {"toolUseId": "t1", "content": [{"json": {"a": 1}}], "status": "error"}}],
                },
            ],
            "output": {
                "message": {
                    "role": "assistant",
                    "content": [{"reasoningContent": {"reasoningText": {"text": "hmm"}}}, {"text": "done"}],
                }
            },
        }
    )  # fmt: skip
    assert got.format == "bedrock"
    assert got.messages == [
        {"role": "user", "content": "go"},
        {"role": "assistant", "content": None, "tool_calls": [call_fmt("t1", "f")]},
        {"role": "tool", "content": '[error] {"a": 1}', "tool_call_id": "t1"},
        {"role": "assistant", "content": "done"},
    ]
    assert [(n.where, n.what, n.content) for n in got.notes] == [
        ("output.message.content[0]", "reasoningContent block", "hmm")
    ]


def test_bedrock_converse_text_tool_use_and_result() -> None:
    got = load("bedrock_converse.json", "bedrock")
    assert got.messages == [
        {"role": "user", "content": "What are the coordinates for both Paris and in Berlin??"},
        {
            "role": "assistant",
            "content": "Here are the coordinates for Paris and Berlin obtained using the "
            "`get_lat_long` tool:",
            "tool_calls": [call_sample("tooluse_77EBAFMeS92g3zHisyE2UA", "get_lat_long", '{"place": "Paris"}')],
        },
        {
            "role": "tool",
            "content": '{"latitude": "48.8534951", "longitude": "2.3483915"}',
            "tool_call_id": "tooluse_77EBAFMeS92g3zHisyE2UA",
        },
    ]  # fmt: skip
    assert got.origins == ["messages[0]", "messages[1]", "messages[2].content[0]"]


def test_a_bare_list_of_messages_is_read_with_list_origins() -> None:
    got = imported_bedrock(
        [
            {"role": "user", "content": [{"text": "hi"}]},
            {"role": "assistant", "content": [{"text": "hello"}]},
        ]
    )
    assert rows_bedrock(got) == [("user", "hi", "[0]"), ("assistant", "hello", "[1]")]
    assert got.notes == []


def test_every_system_block_after_a_cache_point_is_still_read() -> None:
    got = imported_bedrock(
        {
            "system": [{"text": "a"}, {"cachePoint": {"type": "default"}}, {"text": "b"}],
            "messages": [{"role": "user", "content": [{"text": "hi"}]}],
        }
    )
    assert rows_bedrock(got) == [("system", "a\nb", "system"), ("user", "hi", "messages[0]")]
    assert got.notes == []


def test_a_message_field_bedrock_does_not_read_is_an_unknown_note() -> None:
    got = imported_bedrock(
        {"messages": [{"role": "user", "content": [{"text": "hi"}], "text": "also"}]}
    )
    assert rows_bedrock(got) == [("user", "hi", "messages[0]")]
    assert [(n.where, n.what, n.why, n.content, n.unknown) for n in got.notes] == [
        ("messages[0].text", "field 'text'", "bedrock does not read it", "also", True)
    ]


def test_server_side_tool_blocks_in_an_assistant_message_are_markers() -> None:
    """A provider-run toolUse (a ``type`` is set) and its toolResult show in the reply's text."""
    use = {
        "toolUseId": "g1",
        "name": "nova_grounding",
        "type": "server_tool_use",
        "input": {"query": "oslo weather"},
    }
    result = {"toolUseId": "g1", "type": "grounding_result", "content": [{"text": "cold"}]}
    got = imported_bedrock(
        {
            "messages": [
                {"role": "user", "content": [{"text": "weather?"}]},
                {
                    "role": "assistant",
                    "content": [{"toolUse": use}, {"toolResult": result}, {"text": "It is cold."}],
                },
            ]
        }
    )
    assert rows_bedrock(got) == [
        ("user", "weather?", "messages[0]"),
        (
            "assistant",
            '[toolUse server_tool_use g1] {"name": "nova_grounding", "input": {"query": '
            '"oslo weather"}}\n'
            '[toolResult grounding_result g1] {"content": [{"text": "cold"}]}\n'
            "It is cold.",
            "messages[1]",
        ),
    ]
    assert "tool_calls" not in got.messages[1]
    assert got.notes == []


def test_a_cache_point_between_blocks_is_skipped_and_the_rest_is_read() -> None:
    got = imported_bedrock(
        {
            "messages": [
                {"role": "user", "content": [{"text": "a"}, {"cachePoint": {}}, {"text": "b"}]}
            ]
        }
    )
    assert rows_bedrock(got) == [("user", "a\nb", "messages[0]")]
    assert got.notes == []


def test_an_unknown_block_is_a_marker_and_an_unknown_note() -> None:
    block = {"hologram": {"frames": 3}}
    got = imported_bedrock({"messages": [{"role": "user", "content": [{"text": "see"}, block]}]})
    assert rows_bedrock(got) == [("user", "see\n[hologram]", "messages[0]")]
    assert [(n.where, n.what, n.why, n.content, n.unknown) for n in got.notes] == [
        (
            "messages[0].content[1]",
            "unknown content block (hologram)",
            "bedrock has no such block",
            json.dumps(block),
            True,
        )
    ]


def test_reasoning_without_readable_text_is_a_note_holding_all_of_it() -> None:
    """Redacted or oddly shaped reasoning is still a note (its JSON), never a crash."""
    redacted = {"redactedContent": "ZW5jcnlwdGVk"}
    got = imported_bedrock(
        {
            "messages": [
                {
                    "role": "assistant",
                    "content": [
                        {"reasoningContent": redacted},
                        {"reasoningContent": "plain words"},
                        {"reasoningContent": {"reasoningText": "not an object"}},
                        {"text": "done"},
                    ],
                }
            ]
        }
    )
    assert rows_bedrock(got) == [("assistant", "done", "messages[0]")]
    assert [(n.where, n.what, n.content, n.unknown) for n in got.notes] == [
        ("messages[0].content[0]", "reasoningContent block", json.dumps(redacted), False),
        ("messages[0].content[1]", "reasoningContent block", "plain words", False),
        (
            "messages[0].content[2]",
            "reasoningContent block",
            '{"reasoningText": "not an object"}',
            False,
        ),
    ]


def test_an_unknown_tool_result_block_is_an_unknown_note() -> None:
    block = {"hologram": {"frames": 3}}
    result = {"toolUseId": "t1", "content": [{"text": "ok"}, block]}
    got = imported_bedrock(
        {
            "messages": [
                {"role": "assistant", "content": [{"toolUse": {"toolUseId": "t1", "name": "f"}}]},
                {"role": "user", "content": [{"toolResult": result}]},
            ]
        }
    )
    assert rows_bedrock(got)[1] == ("tool", "ok", "messages[1].content[0]")
    assert [(n.where, n.what, n.why, n.content, n.unknown) for n in got.notes] == [
        (
            "messages[1].content[0].toolResult.content[1]",
            "unknown tool result block",
            "bedrock has no such block",
            json.dumps(block),
            True,
        )
    ]


def test_a_tool_use_typed_as_a_client_call_is_a_call_not_a_marker() -> None:
    use = {"toolUseId": "t1", "name": "f", "type": "tool_use", "input": {"a": 1}}
    got = imported_bedrock({"messages": [{"role": "assistant", "content": [{"toolUse": use}]}]})
    assert got.messages == [
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {"id": "t1", "type": "function", "function": {"name": "f", "arguments": '{"a": 1}'}}
            ],
        }
    ]


@pytest.mark.parametrize(
    ("document", "problem"),
    [
        ([{"content": []}], "[0]: missing 'role'"),
        (
            [{"role": "user", "content": "hi"}],
            "[0].content: expected a list of content blocks, got string",
        ),
        ("text", "expected a list of messages or a request object, got string"),
        (
            [{"role": "user", "content": [{"text": "a"}]}, 5],
            "[1]: expected a message object, got number",
        ),
    ],
)
def test_bedrock_named_on_a_message_detection_refuses_is_a_located_error(
    document: Any, problem: str
) -> None:
    """Detection refuses these shapes; naming the format reads them and locates the fault."""
    assert error_edge(document, "bedrock") == f"<text> is not valid bedrock: {problem}"


def test_bedrock_a_system_of_only_cache_points_adds_no_system_message() -> None:
    document = {
        "system": [{"cachePoint": {"type": "default"}}],
        "messages": [{"role": "user", "content": [{"text": "hi"}]}],
    }
    got = imported_edge(document, "bedrock")
    assert got.messages == [{"role": "user", "content": "hi"}]
    assert got.notes == []


@pytest.mark.parametrize(
    ("document", "where", "what", "score"),
    [
        ({"output": {"message": {"role": "user"}}}, "output.message", "missing 'content'", 2),
        (
            [{"role": "user", "content": [{}]}],
            "",
            "no block carries any of cachePoint, citationsContent, document, guardContent,"
            " image, reasoningContent, text, toolResult, toolUse, video",
            1,
        ),
    ],
)
def test_bedrock_claims_says_what_a_near_document_lacks(
    document: Any, where: str, what: str, score: int
) -> None:
    assert bedrock.claims(document) == Miss(where, what, score)
