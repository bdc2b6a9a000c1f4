"""The Playground paste rule: verbatim when engine-shaped, imported when richer.

A pasted list of role dicts used to go to the engine verbatim, so OpenTelemetry
``parts``, Anthropic ``tool_use`` blocks or LangChain ``additional_kwargs``
lost their texts and calls silently. These tests pin which input is passed on
as it is and which is read by the importers, with the notes they return.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from flowdrop_core.importers.paste import InputProblem, parse_pasted, parse_pasted_with_notes
from flowdrop_core.messages import InvalidMessagesError, read_messages

SAMPLE_DIR = Path(__file__).resolve().parents[2] / "sample_data"

OTEL = [
    {"role": "user", "parts": [{"type": "text", "content": "Weather in Paris?"}]},
    {
        "role": "assistant",
        "parts": [
            {"type": "tool_call", "id": "c1", "name": "get_weather", "arguments": {"city": "Paris"}}
        ],
    },
    {"role": "tool", "parts": [{"type": "tool_call_response", "id": "c1", "response": "rainy"}]},
    {"role": "assistant", "parts": [{"type": "text", "content": "It is rainy."}]},
]

ANTHROPIC = [
    {"role": "user", "content": "Weather in Paris?"},
    {
        "role": "assistant",
        "content": [
            {"type": "text", "text": "Let me check."},
            {
                "type": "tool_use",
                "id": "toolu_1",
                "name": "get_weather",
                "input": {"city": "Paris"},
            },
        ],
    },
    {
        "role": "user",
        "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "rainy"}],
    },
]

LANGCHAIN = [
    {
        "role": "assistant",
        "content": "",
        "additional_kwargs": {
            "tool_calls": [
                {"id": "lc1", "type": "function", "function": {"name": "f", "arguments": "{}"}}
            ]
        },
    },
    {"role": "tool", "content": "done", "tool_call_id": "lc1"},
]


def test_otel_parts_list_keeps_its_texts_and_calls():
    pasted = parse_pasted_with_notes(json.dumps(OTEL))
    assert pasted.format == "otel-genai"
    assert [m.get("content") for m in pasted.messages] == [
        "Weather in Paris?",
        None,
        "rainy",
        "It is rainy.",
    ]
    call = pasted.messages[1]["tool_calls"][0]
    assert (call["id"], call["function"]["name"]) == ("c1", "get_weather")
    assert json.loads(call["function"]["arguments"]) == {"city": "Paris"}
    assert pasted.messages[2]["tool_call_id"] == "c1"


def test_anthropic_tool_use_blocks_become_calls_and_results():
    messages = parse_pasted(json.dumps(ANTHROPIC))
    assert [m["role"] for m in messages] == ["user", "assistant", "tool"]
    assert messages[1]["content"] == "Let me check."
    assert [c["id"] for c in messages[1]["tool_calls"]] == ["toolu_1"]
    assert messages[2] == {"role": "tool", "content": "rainy", "tool_call_id": "toolu_1"}


def test_langchain_additional_kwargs_calls_are_kept():
    messages = parse_pasted(json.dumps(LANGCHAIN))
    assert [c["id"] for c in messages[0]["tool_calls"]] == ["lc1"]
    assert messages[1]["tool_call_id"] == "lc1"


def test_gemini_list_is_imported():
    gemini = [
        {"role": "user", "parts": [{"text": "hi"}]},
        {"role": "model", "parts": [{"text": "hello"}]},
    ]
    messages = parse_pasted(json.dumps(gemini))
    assert messages == [
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": "hello"},
    ]


def test_a_single_object_with_parts_is_imported():
    pasted = parse_pasted_with_notes(json.dumps(OTEL[0]))
    assert pasted.messages == [{"role": "user", "content": "Weather in Paris?"}]


def test_an_unknown_part_comes_back_as_a_located_note():
    batch = [
        {"role": "user", "content": "a"},
        {"role": "assistant", "content": [{"type": "code", "text": "print(1)"}]},
    ]
    pasted = parse_pasted_with_notes(json.dumps(batch))
    assert pasted.format is not None
    assert "print(1)" in pasted.messages[1]["content"]
    (note,) = pasted.notes_as_dicts()
    assert note["where"] == "[1].content[0]"
    assert "code" in note["what"]


@pytest.mark.parametrize(
    "batch",
    [
        [{"role": "user", "content": "hi"}],
        [
            {"role": "system", "content": None},
            {"role": "user", "content": [{"type": "text", "text": "a"}]},
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {"id": "c", "type": "function", "function": {"name": "f", "arguments": "{}"}}
                ],
            },
            {"role": "tool", "content": "r", "tool_call_id": "c", "metadata": {"x": 1}},
        ],
    ],
    ids=["one", "engine-shapes"],
)
def test_engine_shaped_messages_pass_verbatim(batch):
    pasted = parse_pasted_with_notes(json.dumps(batch))
    assert pasted.messages == batch
    assert pasted.format is None and pasted.notes == []


def test_bad_entries_are_still_passed_for_the_engine_to_name():
    batch = [{"role": "user", "content": "hi"}, {"content": "no role"}]
    assert parse_pasted(json.dumps(batch)) == batch
    # mixed with a richer entry that no importer reads, the engine still judges it
    mixed = [OTEL[0], {"content": "no role"}]
    assert parse_pasted(json.dumps(mixed)) == mixed


def test_errors_are_still_input_problems():
    with pytest.raises(InputProblem, match="empty list"):
        parse_pasted_with_notes("[]")


def test_a_pasted_field_no_reader_uses_is_a_note_not_a_silent_loss() -> None:
    """A role dict with an unread ``data`` object: the text arrives and ``data`` is a located note."""
    pasted = parse_pasted_with_notes('[{"role": "user", "content": "a", "data": {"k": 1}}]')
    assert pasted.messages == [{"role": "user", "content": "a"}]
    assert [(n.where, n.what) for n in pasted.notes] == [("[0].data", "field 'data'")]


# -- moved from the UI tests: what a paste reads as, and its errors ---------------------------


def test_parse_pasted_one_message_a_list_and_a_conversation():
    assert parse_pasted('{"role": "user", "content": "hi"}') == [{"role": "user", "content": "hi"}]
    batch = [{"role": "user", "content": "a"}, {"role": "bogus"}]
    assert parse_pasted(json.dumps(batch)) == batch  # verbatim: the engine judges it
    text = (SAMPLE_DIR / "imports" / "openai_chat.json").read_text()
    assert len(parse_pasted(text)) == 13
    jsonl = '{"role": "user", "content": "a"}\n{"role": "assistant", "content": "b"}'
    assert [m["role"] for m in parse_pasted(jsonl)] == ["user", "assistant"]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("", "pasted text is empty"),
        ("   ", "pasted text is empty"),
        ("[]", "empty list"),
        (
            '{"role": "user", "content": }',
            "pasted text: not JSON (Expecting value at line 1, column 29)",
        ),
        ('{"a": 1}\n{"b": ', "pasted text: JSON Lines whose line 2 is not JSON"),
        # json.loads refuses these without a JSONDecodeError (ValueError, RecursionError)
        (
            '{"role": "user", "content": "x", "n": ' + "9" * 5000 + "}",
            "pasted text: not JSON (integer too long: more than 4300 digits)",
        ),
        ("[" * 100_000, "pasted text: not JSON (nested too deeply)"),
        (
            '{"role": "user", "content": "x"}\n' + "[" * 100_000,
            "JSON Lines whose line 2 is not JSON (nested too deeply)",
        ),
    ],
)
def test_parse_pasted_errors_name_problem_and_place(text, expected):
    with pytest.raises(InputProblem) as info:
        parse_pasted(text)
    assert expected in str(info.value)


@pytest.mark.parametrize(
    "text", ['{"content": "hi"}', '{"rol": "user", "content": "hi"}', '[{"content": "hi"}]']
)
def test_a_pasted_message_without_a_role_gets_its_cause_first(text: str) -> None:
    with pytest.raises(InputProblem) as info:
        parse_pasted(text)
    message = str(info.value)
    assert message.startswith("pasted text: incoming[0]: missing 'role'.")
    assert "not a recorded conversation either" in message  # the guesses follow, second


def test_a_document_without_roles_keeps_the_format_report() -> None:
    with pytest.raises(InputProblem) as info:
        parse_pasted('{"messages": [{"content": 1}]}')
    assert str(info.value).startswith("no known format matched")


# -- what a paste reads as, exactly ----------------------------------------------------------


def test_a_pasted_input_is_frozen_and_slotted() -> None:
    pasted = parse_pasted_with_notes('{"role": "user", "content": "hi"}')
    assert not hasattr(pasted, "__dict__")
    with pytest.raises(dataclasses.FrozenInstanceError):
        pasted.messages = []  # type: ignore[misc]


def test_one_engine_shaped_message_is_passed_on_as_it_is() -> None:
    pasted = parse_pasted_with_notes('{"role": "user", "content": "hi"}')
    assert (pasted.messages, pasted.notes, pasted.format) == (
        [{"role": "user", "content": "hi"}],
        [],
        None,
    )


def test_a_message_whose_content_is_an_object_is_read_by_an_importer() -> None:
    pasted = parse_pasted_with_notes('{"role": "user", "content": {"text": "x"}}')
    assert pasted.format == "openai-chat"
    assert pasted.messages == [{"role": "user", "content": '{"text": "x"}'}]
    assert [(n.where, n.what) for n in pasted.notes] == [
        ("[0].content", "content that is an object")
    ]


def test_one_object_with_parts_is_read_as_a_list_of_one() -> None:
    """Read as ``[object]`` (OpenTelemetry, origins ``[0]...``), not as a one-line JSONL file."""
    parts = [{"type": "text", "content": "hi"}, {"type": "weird", "content": "kept"}]
    pasted = parse_pasted_with_notes(json.dumps({"role": "user", "parts": parts}))
    assert pasted.format == "otel-genai"
    assert pasted.messages == [{"role": "user", "content": "hi\nkept"}]
    assert [n.where for n in pasted.notes] == ["[0].parts[1]"]


def test_a_list_holding_a_non_object_goes_to_the_engine_to_name() -> None:
    batch = [{"role": "user", "content": "a"}, 5]
    pasted = parse_pasted_with_notes(json.dumps(batch))
    assert (pasted.messages, pasted.format) == (batch, None)
    with pytest.raises(InvalidMessagesError, match=r"incoming\[1\]"):
        read_messages(pasted.messages)


def test_what_is_not_text_or_an_empty_list_is_refused_in_its_own_words() -> None:
    with pytest.raises(InputProblem, match=r"^pasted text is not text \(got bytes\)$"):
        parse_pasted_with_notes(b"{}")  # type: ignore[arg-type]
    with pytest.raises(InputProblem, match=r"^the box is an empty list: there is nothing"):
        parse_pasted_with_notes("[]", source="the box")
