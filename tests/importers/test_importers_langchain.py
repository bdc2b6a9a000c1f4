"""How the LangChain reader treats each spelling and odd field (issue 12 survivors).

Each test states the exact messages, notes or error text a user gets back.
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


def imported(document: Any, fmt: str | None = "langchain") -> ImportedConversation:
    return parse_conversation(json.dumps(document), format=fmt)


def error(document: Any) -> str:
    with pytest.raises(ConversationFormatError) as info:
        imported(document)
    return str(info.value).removeprefix("<text> is not valid langchain: ")


def legacy_call(name: str) -> dict[str, Any]:
    """An AI message with a legacy ``additional_kwargs.function_call`` (no id in the source)."""
    return {
        "type": "ai",
        "content": "",
        "additional_kwargs": {"function_call": {"name": name, "arguments": "{}"}},
    }


def legacy_id(index: int) -> str:
    return f"[{index}].additional_kwargs.function_call"


@pytest.mark.parametrize(
    ("document", "problem"),
    [
        ({"foo": 1}, "expected a list of messages or an object with 'messages', got object"),
        ("hi", "expected a list of messages or an object with 'messages', got string"),
        ({"messages": 5}, "messages: expected a list, got number"),
        ([{"type": 5, "role": "user", "content": "x"}], "[0]: 'type' must be a string, got number"),
        (
            [{"type": ["human"], "data": {"content": "x"}}],
            "[0]: 'type' must be a string, got list",
        ),
        (
            # dumpd's stand-in for an object it cannot serialize is no message
            [
                {
                    "lc": 1,
                    "type": "not_implemented",
                    "id": ["x", "ChatOpenAI"],
                    "repr": "ChatOpenAI()",
                }
            ],
            "[0]: unknown message type 'not_implemented' (expected human, ai, system or tool)",
        ),
    ],
    ids=["object", "string", "messages-not-list", "type-number", "type-list", "not-implemented"],
)
def test_langchain_refusal_names_what_and_where(document: Any, problem: str) -> None:
    assert error(document) == problem


def test_data_beside_a_flat_typed_message_is_an_unknown_field_note() -> None:
    got = imported([{"type": "human", "content": "hi", "data": "extra"}])
    assert got.messages == [{"role": "user", "content": "hi"}]
    assert [(n.where, n.what, n.why, n.content, n.unknown) for n in got.notes] == [
        (
            "[0].data",
            "field 'data'",
            "langchain reads 'data' only as the fields of a typed message",
            "extra",
            True,
        )
    ]


def test_function_results_answer_the_open_call_of_their_name() -> None:
    got = imported(
        [
            legacy_call("f"),
            legacy_call("g"),
            {"type": "function", "name": "g", "content": "G"},
            {"type": "function", "name": "f", "content": "F"},
            {"type": "function", "name": "f", "content": "again"},
        ]
    )
    assert [(m["role"], m["content"], m.get("tool_call_id")) for m in got.messages] == [
        ("assistant", None, None),
        ("assistant", None, None),
        ("tool", "G", legacy_id(1)),
        ("tool", "F", legacy_id(0)),
        ("tool", "again", None),
    ]
    assert [(n.where, n.what, n.why, n.content) for n in got.notes] == [
        ("[4]", "function result without a call", "no earlier function_call is open", "f")
    ]


def test_function_result_without_a_name_answers_the_oldest_open_call() -> None:
    got = imported(
        [legacy_call("f"), legacy_call("g"), {"type": "function", "name": 5, "content": "r"}]
    )
    assert got.messages[2] == {"role": "tool", "content": "r", "tool_call_id": legacy_id(0)}
    assert got.notes == []


def test_trace_generations_with_the_same_legacy_call_at_other_places_are_one_message() -> None:
    """A legacy call's made-up id differs between two readings of the same conversation
    (it is its place); a trace whose last generation holds it notes nothing."""
    call, result = legacy_call("f"), {"type": "function", "name": "f", "content": "r"}
    question = {"type": "human", "content": "q"}
    first = [question, call, result]
    last = [{"type": "system", "content": "s"}, question, call, result]
    got = imported(
        [
            {"id": "1", "type": "GENERATION", "startTime": "1", "input": first, "output": "done"},
            {"id": "2", "type": "GENERATION", "startTime": "2", "input": last, "output": "done"},
        ],
        "langfuse",
    )
    assert got.messages[2:4] == [
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": legacy_id(2),
                    "type": "function",
                    "function": {"name": "f", "arguments": "{}"},
                }
            ],
        },
        {"role": "tool", "content": "r", "tool_call_id": legacy_id(2)},
    ]
    assert got.notes == []


def test_every_kind_of_reasoning_in_additional_kwargs_is_a_note_with_its_text() -> None:
    extra = {"reasoning": "", "reasoning_content": "step one", "thinking": {"summary": []}}
    got = imported([{"type": "ai", "content": "a", "additional_kwargs": extra}])
    assert got.messages == [{"role": "assistant", "content": "a"}]
    assert [(n.where, n.what, n.content) for n in got.notes] == [
        ("[0].additional_kwargs.reasoning_content", "reasoning", "step one"),
        ("[0].additional_kwargs.thinking", "reasoning", '{"summary": []}'),
    ]


def test_text_after_a_call_block_that_repeats_tool_calls_is_kept() -> None:
    blocks = [
        {"type": "tool_use", "id": "c1", "name": "f", "input": {}},
        {"type": "text", "text": "after"},
    ]
    got = imported(
        [{"type": "ai", "content": blocks, "tool_calls": [{"id": "c1", "name": "f", "args": {}}]}]
    )
    assert got.messages == [
        {
            "role": "assistant",
            "content": "after",
            "tool_calls": [
                {"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{}"}}
            ],
        }
    ]
    assert got.notes == []


def test_a_left_out_thinking_block_leaves_no_empty_line_in_the_text() -> None:
    thinking = {"type": "thinking", "thinking": "hm"}
    got = imported([{"type": "ai", "content": [thinking, {"type": "text", "text": "a"}]}])
    assert got.messages == [{"role": "assistant", "content": "a"}]
    assert [(n.where, n.what, n.content) for n in got.notes] == [
        ("[0].content[0]", "thinking part", json.dumps(thinking))
    ]
