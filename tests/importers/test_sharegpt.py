"""The sharegpt importer: what it claims, the messages and notes it reads, its located errors."""

from __future__ import annotations

import json
from typing import Any

import pytest
from import_helpers import SHAREGPT_ERRORS, error_edge, imported_edge, notes_edge, rows_edge


@pytest.mark.parametrize(("document", "problem"), SHAREGPT_ERRORS)
def test_sharegpt_bad_field_is_a_located_error(document: Any, problem: str) -> None:
    assert error_edge(document, "sharegpt") == f"<text> is not valid sharegpt: {problem}"


def test_sharegpt_system_prompt_opens_its_record() -> None:
    got = imported_edge(
        {"system": "be brief", "conversations": [{"from": "human", "value": "hi"}]}, "sharegpt"
    )
    assert rows_edge(got) == [("system", "be brief", None, None), ("user", "hi", None, None)]
    assert got.origins == ["system", "conversations[0]"]


def test_sharegpt_records_keep_their_own_system_prompt_and_an_empty_one_adds_nothing() -> None:
    got = imported_edge(
        [
            {"system": "be brief", "conversations": [{"from": "human", "value": "a"}]},
            {"system": "", "conversations": [{"from": "human", "value": "b"}]},
            {"system": None, "conversations": [{"from": "gpt", "value": "c"}]},
        ],
        "sharegpt",
    )
    assert rows_edge(got) == [
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
    assert notes_edge(got) == []


@pytest.mark.parametrize("value", ["not json", "[]"], ids=["text", "empty-list"])
def test_sharegpt_function_call_that_is_not_a_call_is_kept_as_text(value: str) -> None:
    got = imported_edge({"conversations": [{"from": "function_call", "value": value}]}, "sharegpt")
    assert rows_edge(got) == [("assistant", value, None, None)]
    assert notes_edge(got) == [
        (
            "conversations[0]",
            "function_call that is not JSON {name, arguments}",
            "imported as the assistant's text, not as a call",
        )
    ]


def test_sharegpt_several_calls_in_one_turn_are_answered_in_order() -> None:
    calls = [{"name": "a", "arguments": {}}, {"name": "b", "arguments": {"x": 1}}]
    got = imported_edge(
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
    assert rows_edge(got) == [
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


@pytest.mark.parametrize(
    ("document", "problem"),
    [
        ([5], "[0]: expected a turn object, got number"),
        ([{"from": "human"}], "[0]: missing 'value'"),
    ],
)
def test_sharegpt_named_on_turns_detection_refuses_is_a_located_error(
    document: Any, problem: str
) -> None:
    """Detection refuses these shapes; naming the format reads them and locates the fault."""
    assert error_edge(document, "sharegpt") == f"<text> is not valid sharegpt: {problem}"
