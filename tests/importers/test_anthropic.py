"""The anthropic importer: what it claims, the messages and notes it reads, its located errors."""

from __future__ import annotations

import json
from typing import Any

import pytest
from import_helpers import (
    ANTHROPIC_ERRORS,
    call_main,
    call_sample,
    error_anthropic,
    error_edge,
    imported_anthropic,
    imported_edge,
    imported_fmt,
    load,
    notes_anthropic,
    notes_edge,
    notes_sample,
    rows_anthropic,
    rows_edge,
    tool_use,
)

from flowdrop_core.importers import (
    parse_conversation,
)


def test_anthropic_blocks_become_flat_messages() -> None:
    text = json.dumps(
        {
            "system": [{"type": "text", "text": "be brief"}],
            "messages": [
                {"role": "user", "content": "weather?"},
                {
                    "role": "assistant",
                    "content": [
                        {"type": "thinking", "thinking": "hmm", "signature": "x"},
                        {
                            "type": "tool_use",
                            "id": "tu_1",
                            "name": "weather",
                            "input": {"c": "Oslo"},
                        },
                        {"type": "tool_use", "id": "tu_2", "name": "news", "input": {}},
                    ],
                },
                {
                    "role": "user",
                    "content": [
                        {"type": "tool_result", "tool_use_id": "tu_1", "content": "cold"},
                        {
                            "type": "tool_result",
                            "tool_use_id": "tu_2",
                            "content": [{"type": "text", "text": "timeout"}],
                            "is_error": True,
                        },
                        {"type": "text", "text": "and tomorrow?"},
                    ],
                },
                {"role": "assistant", "content": [{"type": "text", "text": "Colder."}]},
            ],
        }
    )
    got = parse_conversation(text)
    assert got.format == "anthropic"
    assert got.messages == [
        {"role": "system", "content": "be brief"},
        {"role": "user", "content": "weather?"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                call_main("tu_1", "weather", '{"c": "Oslo"}'),
                call_main("tu_2", "news"),
            ],
        },
        {"role": "tool", "content": "cold", "tool_call_id": "tu_1"},
        {"role": "tool", "content": "[error] timeout", "tool_call_id": "tu_2"},
        {"role": "user", "content": "and tomorrow?"},
        {"role": "assistant", "content": "Colder."},
    ]
    assert got.origins == [
        "system",
        "messages[0]",
        "messages[1]",
        "messages[2].content[0]",
        "messages[2].content[1]",
        "messages[2]",
        "messages[3]",
    ]
    # The tool results close the turn in progress; the user's text starts the next one.
    assert got.turns == [[0], [1, 2, 3, 4], [5, 6]]


@pytest.mark.parametrize(("document", "problem"), ANTHROPIC_ERRORS)
def test_anthropic_bad_field_is_a_located_error(document: Any, problem: str) -> None:
    assert error_edge(document, "anthropic") == f"<text> is not valid anthropic: {problem}"


def test_anthropic_empty_system_adds_nothing_and_an_image_is_a_marker() -> None:
    document = {
        "system": "",
        "messages": [{"role": "user", "content": [{"type": "image", "source": {}}]}],
    }
    got = imported_edge(document, "anthropic")
    assert rows_edge(got) == [("user", "[image]", None, None)]


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
    got = imported_edge(document, "anthropic")
    call = {"id": "t1", "type": "function", "function": {"name": "f", "arguments": "{}"}}
    assert rows_edge(got) == [("assistant", None, [call], None), ("tool", "r", None, "t1")]
    assert notes_edge(got) == [
        (
            "messages[1].content[1]",
            "redacted_thinking block",
            "encrypted model reasoning is not a conversation message",
        )
    ]


def test_anthropic_thinking_is_a_note_with_its_text() -> None:
    got = imported_fmt(
        {
            "messages": [
                {"role": "user", "content": "q"},
                {
                    "role": "assistant",
                    "content": [
                        {"type": "thinking", "thinking": "hmm", "signature": "s"},
                        {"type": "redacted_thinking", "data": "xyz"},
                        {"type": "text", "text": "a"},
                    ],
                },
            ]
        }
    )
    assert got.messages == [{"role": "user", "content": "q"}, {"role": "assistant", "content": "a"}]
    assert [(n.where, n.what, n.content) for n in got.notes] == [
        ("messages[1].content[0]", "thinking block", "hmm"),
        ("messages[1].content[1]", "redacted_thinking block", '{"type": "redacted_thinking", "data": "xyz"}'),
    ]  # fmt: skip


def test_anthropic_server_tool_blocks_and_a_client_call() -> None:
    got = load("anthropic_server_tools.json", "anthropic")
    result = (
        '[web_search_tool_result srvtoolu_01ABC123] {"content": [{"type": "web_search_result", '
        '"url": "https://example.com/elephants", "title": "African Elephant Facts", '
        '"page_age": "2024-01-15", "snippet": "Adult African elephants weigh between '
        '4,000-6,000 kg..."}]}'
    )
    assert got.messages == [
        {
            "role": "assistant",
            "content": "\n".join(
                [
                    '[server_tool_use web_search srvtoolu_01ABC123] {"query": "average weight '
                    'african elephant kg"}',
                    result,
                    "Based on my search, African elephants weigh around 5,000 kg.",
                ]
            ),
            "tool_calls": [call_sample("toolu_01XYZ789", "add_numbers", '{"a": 5000, "b": 100}')],
        }
    ]
    assert got.origins == ["(top level)"]
    # The encrypted page content is opaque: left out of the marker, kept in a note.
    assert notes_sample(got) == [("content[1]", "web_search_tool_result opaque fields")]
    assert got.notes[0].content == '["encrypted_data_here"]'


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
    assert error_anthropic(document) == f"<text> is not valid anthropic: {problem}"


@pytest.mark.parametrize("role", ["user", "assistant"])
@pytest.mark.parametrize("kind", ["image", "document"])
def test_an_image_or_document_block_is_a_marker_without_any_note(role: str, kind: str) -> None:
    got = imported_anthropic(
        {
            "messages": [
                {
                    "role": role,
                    "content": [{"type": "text", "text": "see"}, {"type": kind, "source": {}}],
                }
            ]
        }
    )
    assert rows_anthropic(got) == [(role, f"see\n[{kind}]", "messages[0]")]
    assert got.notes == []


@pytest.mark.parametrize("role", ["user", "assistant"])
def test_an_unknown_block_keeps_its_text_or_shows_a_marker_and_is_an_unknown_note(
    role: str,
) -> None:
    with_text = {"type": "citation_note", "text": "from the web"}
    without_text = {"type": "hologram", "frames": 3}
    got = imported_anthropic({"messages": [{"role": role, "content": [with_text, without_text]}]})
    assert rows_anthropic(got) == [(role, "from the web\n[hologram]", "messages[0]")]
    assert notes_anthropic(got) == [
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
    got = imported_anthropic({"messages": [{"role": "user", "content": []}]})
    assert rows_anthropic(got) == [("user", "", "messages[0]")]
    assert got.turns == [[0]]


def test_a_user_message_with_only_thinking_is_an_empty_user_turn_and_a_note() -> None:
    got = imported_anthropic(
        {"messages": [{"role": "user", "content": [{"type": "thinking", "thinking": "hmm"}]}]}
    )
    assert rows_anthropic(got) == [("user", "", "messages[0]")]
    assert notes_anthropic(got) == [
        (
            "messages[0].content[0]",
            "thinking block",
            "model reasoning is not a conversation message",
            "hmm",
            False,
        )
    ]


def test_a_user_message_of_only_tool_results_adds_no_empty_user_turn() -> None:
    got = imported_anthropic(
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
    assert rows_anthropic(got) == [
        ("assistant", None, "messages[0]"),
        ("tool", "r", "messages[1].content[0]"),
    ]


@pytest.mark.parametrize(
    ("document", "problem"),
    [
        ([{"content": "x"}], "[0]: missing 'role'"),
        (
            [{"role": "user", "content": 3}],
            "[0].content: expected a string or a list of content blocks, got number",
        ),
        (
            [{"role": "assistant", "content": [{"text": "x"}]}],
            "[0].content[0]: content block without a string 'type'",
        ),
    ],
)
def test_anthropic_named_on_a_message_detection_refuses_is_a_located_error(
    document: Any, problem: str
) -> None:
    """Detection refuses these shapes; naming the format reads them and locates the fault."""
    assert error_edge(document, "anthropic") == f"<text> is not valid anthropic: {problem}"
