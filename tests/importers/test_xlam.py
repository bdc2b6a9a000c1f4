"""The xLAM rows: real public examples imported to their exact messages.

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
    parse_conversation,
)
from flowdrop_core.importers import (
    _xlam as xlam,
)
from flowdrop_core.importers._claims import Claim, Miss

FRESH = Path(__file__).resolve().parents[2] / "sample_data" / "fresh"


def imported(name: str) -> ImportedConversation:
    """A corpus file, its format detected."""
    return load_conversation(FRESH / name, name=name)


def test_xlam_giveaways() -> None:
    got = imported("xlam_giveaways.json")
    assert got.format == "xlam"

    assert got.messages == [
        {"role": "user", "content": "Where can I find live giveaways for beta access and games?"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "answers[0]",
                    "type": "function",
                    "function": {"name": "live_giveaways_by_type", "arguments": '{"type": "beta"}'},
                },
                {
                    "id": "answers[1]",
                    "type": "function",
                    "function": {"name": "live_giveaways_by_type", "arguments": '{"type": "game"}'},
                },
            ],
        },
    ]

    assert got.origins == ["query", "answers"]

    assert [(n.where, n.what) for n in got.notes] == []


def test_xlam_math_toolkit() -> None:
    got = imported("xlam_math_toolkit.json")
    assert got.format == "xlam"

    assert got.messages == [
        {
            "role": "user",
            "content": "Find the sum of all the multiples of 3 and 5 between 1 and 1000. Also find "
            "the product of the first five prime numbers.",
        },
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "answers[0]",
                    "type": "function",
                    "function": {
                        "name": "math_toolkit.sum_of_multiples",
                        "arguments": '{"lower_limit": 1, "upper_limit": 1000, "multiples": [3, 5]}',
                    },
                },
                {
                    "id": "answers[1]",
                    "type": "function",
                    "function": {
                        "name": "math_toolkit.product_of_primes",
                        "arguments": '{"count": 5}',
                    },
                },
            ],
        },
    ]

    assert got.origins == ["query", "answers"]

    assert [(n.where, n.what) for n in got.notes] == []


def test_a_list_of_rows_and_an_unknown_field() -> None:
    rows = [
        {"id": 1, "query": "a?", "answers": "[]", "tools": "[]", "split": "train"},
        {"query": "b?", "answers": [{"name": "f", "arguments": {"x": 1}}]},
    ]
    got = parse_conversation(json.dumps(rows), source_name="x.json")
    assert got.format == "xlam"
    assert got.messages == [
        {"role": "user", "content": "a?"},
        {"role": "user", "content": "b?"},
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "[1].answers[0]", "type": "function", "function": {"name": "f", "arguments": '{"x": 1}'}}]},
    ]  # fmt: skip
    assert [(n.where, n.what, n.unknown) for n in got.notes] == [
        ("[0].split", "field 'split'", True),
        ("[0].answers", "no answers", False),
    ]


@pytest.mark.parametrize(
    ("row", "problem"),
    [
        ({"query": "q", "answers": "[{"}, "answers: answers is not JSON"),
        ({"query": "q", "answers": [{"arguments": {}}]}, "answers[0]: expected a call {'name', 'arguments'}"),
        ({"query": "q", "answers": {}}, "answers: expected a list of calls, got object"),
    ],
)  # fmt: skip
def test_bad_answers_are_one_located_error(row: object, problem: str) -> None:
    with pytest.raises(ConversationFormatError) as info:
        parse_conversation(json.dumps(row), format="xlam", source_name="x.json")
    assert str(info.value).startswith(f"x.json is not valid xlam: {problem}")


def test_the_signature() -> None:
    assert isinstance(xlam.claims({"query": "q", "answers": []}), Claim)
    assert isinstance(xlam.claims({"query": "q"}), Miss)
    assert isinstance(xlam.claims([]), Miss)
