"""Anthropic Messages: what a user gets back for shapes the other importer tests leave out.

Each test states the exact messages, the exact notes (nothing is lost
silently) or the exact error text a user sees.
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
    return parse_conversation(json.dumps(document), format="anthropic")


def rows(got: ImportedConversation) -> list[tuple[Any, ...]]:
    return [(m.get("role"), m.get("content"), got.origins[i]) for i, m in enumerate(got.messages)]


def notes(got: ImportedConversation) -> list[tuple[str, str, str, str, bool]]:
    return [(n.where, n.what, n.why, n.content, n.unknown) for n in got.notes]


def error(document: Any) -> str:
    with pytest.raises(ConversationFormatError) as info:
        imported(document)
    return str(info.value)


@pytest.mark.parametrize(
    ("document", "problem"),
    [
        ({"messages": "hi"}, "messages: expected a list, got string"),
        ({"messages": {}}, "messages: expected a list, got object"),
        ({"model": "claude", "system": "be brief"}, "no 'messages' list at the top level"),
        ("hi", "expected a list of messages or an object with 'messages', got string"),
        (7, "expected a list of messages or an object with 'messages', got number"),
    ],
)
def test_a_document_without_a_messages_list_is_refused_saying_what_it_is(
    document: Any, problem: str
) -> None:
    assert error(document) == f"<text> is not valid anthropic: {problem}"


@pytest.mark.parametrize("role", ["user", "assistant"])
@pytest.mark.parametrize("kind", ["image", "document"])
def test_an_image_or_document_block_is_a_marker_without_any_note(role: str, kind: str) -> None:
    got = imported(
        {
            "messages": [
                {
                    "role": role,
                    "content": [{"type": "text", "text": "see"}, {"type": kind, "source": {}}],
                }
            ]
        }
    )
    assert rows(got) == [(role, f"see\n[{kind}]", "messages[0]")]
    assert got.notes == []


@pytest.mark.parametrize("role", ["user", "assistant"])
def test_an_unknown_block_keeps_its_text_or_shows_a_marker_and_is_an_unknown_note(
    role: str,
) -> None:
    with_text = {"type": "citation_note", "text": "from the web"}
    without_text = {"type": "hologram", "frames": 3}
    got = imported({"messages": [{"role": role, "content": [with_text, without_text]}]})
    assert rows(got) == [(role, "from the web\n[hologram]", "messages[0]")]
    assert notes(got) == [
        (
            "messages[0].content[0]",
            "unknown content block type 'citation_note'",
            "anthropic has no such block type; its text is kept",
            json.dumps(with_text),
            True,
        ),
        (
            "messages[0].content[1]",
            "unknown content block type 'hologram'",
            "anthropic has no such block type; shown as a marker",
            json.dumps(without_text),
            True,
        ),
    ]


def test_a_user_message_with_no_blocks_is_still_an_empty_user_turn() -> None:
    got = imported({"messages": [{"role": "user", "content": []}]})
    assert rows(got) == [("user", "", "messages[0]")]
    assert got.turns == [[0]]


def test_a_user_message_with_only_thinking_is_an_empty_user_turn_and_a_note() -> None:
    got = imported(
        {"messages": [{"role": "user", "content": [{"type": "thinking", "thinking": "hmm"}]}]}
    )
    assert rows(got) == [("user", "", "messages[0]")]
    assert notes(got) == [
        (
            "messages[0].content[0]",
            "thinking block",
            "model reasoning is not a conversation message",
            "hmm",
            False,
        )
    ]


def test_a_user_message_of_only_tool_results_adds_no_empty_user_turn() -> None:
    got = imported(
        {
            "messages": [
                {
                    "role": "assistant",
                    "content": [{"type": "tool_use", "id": "t1", "name": "f", "input": {}}],
                },
                {
                    "role": "user",
                    "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "r"}],
                },
            ]
        }
    )
    assert rows(got) == [
        ("assistant", None, "messages[0]"),
        ("tool", "r", "messages[1].content[0]"),
    ]
