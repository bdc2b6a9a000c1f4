"""Bedrock Converse: what a user gets back for shapes the other importer tests leave out.

Each test states the exact messages, notes or error text a user sees.
"""

from __future__ import annotations

import json
from typing import Any

from flowdrop_core.importers import ImportedConversation, parse_conversation


def imported(document: Any) -> ImportedConversation:
    return parse_conversation(json.dumps(document), format="bedrock")


def rows(got: ImportedConversation) -> list[tuple[Any, ...]]:
    return [(m.get("role"), m.get("content"), got.origins[i]) for i, m in enumerate(got.messages)]


def test_a_bare_list_of_messages_is_read_with_list_origins() -> None:
    got = imported(
        [
            {"role": "user", "content": [{"text": "hi"}]},
            {"role": "assistant", "content": [{"text": "hello"}]},
        ]
    )
    assert rows(got) == [("user", "hi", "[0]"), ("assistant", "hello", "[1]")]
    assert got.notes == []


def test_every_system_block_after_a_cache_point_is_still_read() -> None:
    got = imported(
        {
            "system": [{"text": "a"}, {"cachePoint": {"type": "default"}}, {"text": "b"}],
            "messages": [{"role": "user", "content": [{"text": "hi"}]}],
        }
    )
    assert rows(got) == [("system", "a\nb", "system"), ("user", "hi", "messages[0]")]
    assert got.notes == []


def test_a_message_field_bedrock_does_not_read_is_an_unknown_note() -> None:
    got = imported({"messages": [{"role": "user", "content": [{"text": "hi"}], "text": "also"}]})
    assert rows(got) == [("user", "hi", "messages[0]")]
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
    got = imported(
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
    assert rows(got) == [
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
    got = imported(
        {
            "messages": [
                {"role": "user", "content": [{"text": "a"}, {"cachePoint": {}}, {"text": "b"}]}
            ]
        }
    )
    assert rows(got) == [("user", "a\nb", "messages[0]")]
    assert got.notes == []


def test_an_unknown_block_is_a_marker_and_an_unknown_note() -> None:
    block = {"hologram": {"frames": 3}}
    got = imported({"messages": [{"role": "user", "content": [{"text": "see"}, block]}]})
    assert rows(got) == [("user", "see\n[hologram]", "messages[0]")]
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
    got = imported(
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
    assert rows(got) == [("assistant", "done", "messages[0]")]
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
    got = imported(
        {
            "messages": [
                {"role": "assistant", "content": [{"toolUse": {"toolUseId": "t1", "name": "f"}}]},
                {"role": "user", "content": [{"toolResult": result}]},
            ]
        }
    )
    assert rows(got)[1] == ("tool", "ok", "messages[1].content[0]")
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
    got = imported({"messages": [{"role": "assistant", "content": [{"toolUse": use}]}]})
    assert got.messages == [
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {"id": "t1", "type": "function", "function": {"name": "f", "arguments": '{"a": 1}'}}
            ],
        }
    ]
