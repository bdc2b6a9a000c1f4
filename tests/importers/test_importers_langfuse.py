"""How the Langfuse trace reader treats the shapes its exports take (issue 12 survivors).

Each test states the exact messages, origins or notes a user gets back.
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
    return parse_conversation(json.dumps(document), format="langfuse")


def generation(**fields: Any) -> dict[str, Any]:
    return {"id": "g", "type": "GENERATION", **fields}


def encoded(value: Any, times: int) -> Any:
    for _ in range(times):
        value = json.dumps(value)
    return value


def test_input_kept_as_json_text_three_times_is_read_and_a_fourth_level_stays_text() -> None:
    """Exports keep input/output as JSON text, sometimes nested: up to three levels are read."""
    messages = [{"role": "user", "content": "hi"}]
    three = imported([generation(input=encoded(messages, 3), output="yo")])
    assert three.messages == [
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": "yo"},
    ]
    four = imported([generation(input=encoded(messages, 4), output="yo")])
    assert four.messages == [
        {"role": "user", "content": encoded(messages, 1)},
        {"role": "assistant", "content": "yo"},
    ]


def test_observations_page_is_read_with_origins_under_data() -> None:
    got = imported({"data": [generation(input=[{"role": "user", "content": "hi"}], output="yo")]})
    assert got.messages == [
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": "yo"},
    ]
    assert got.origins == ["data[0].input[0]", "data[0].output"]


def test_generation_with_only_an_output_still_gives_the_reply() -> None:
    missing: dict[str, Any]
    for missing in ({}, {"input": None}, {"input": []}, {"input": {}}):
        got = imported([generation(**missing, output="only out")])
        assert got.messages == [{"role": "assistant", "content": "only out"}]
        assert got.origins == ["[0].output"]


def test_earlier_generation_is_named_in_the_notes_of_what_it_alone_held() -> None:
    got = imported(
        [
            generation(name="first", startTime="2024-01-01T00:00:01Z", input="a", output="b"),
            generation(name="second", startTime="2024-01-01T00:00:02Z", input="c", output="d"),
        ]
    )
    assert got.messages == [
        {"role": "user", "content": "c"},
        {"role": "assistant", "content": "d"},
    ]
    assert [(n.where, n.what, n.content) for n in got.notes] == [
        ("[0].input", "message of generation 'first'", '{"role": "user", "content": "a"}'),
        ("[0].output", "message of generation 'first'", '{"role": "assistant", "content": "b"}'),
    ]


QUESTION = {"messages": [{"role": "user", "content": "q"}]}


def test_trace_fallback_origins_say_whether_the_trace_is_the_document_or_inside_it() -> None:
    own = imported({"id": "t", "output": QUESTION, "observations": [generation()]})
    assert own.messages == [{"role": "user", "content": "q"}]
    assert own.origins == ["output.messages[0]"]
    export = imported({"trace": {"id": "t", "output": QUESTION}, "observations": [generation()]})
    assert export.messages == [{"role": "user", "content": "q"}]
    assert export.origins == ["trace.output.messages[0]"]


def test_trace_output_object_no_format_reads_falls_back_to_the_trace_input() -> None:
    got = imported(
        {
            "trace": {"id": "t", "output": {"weird": 1}, "input": QUESTION},
            "observations": [generation()],
        }
    )
    assert got.messages == [{"role": "user", "content": "q"}]
    assert got.origins == ["trace.input.messages[0]"]
    assert got.notes == []


def test_trace_fallback_is_only_for_a_trace_whose_generations_hold_nothing() -> None:
    got = imported(
        {
            "id": "t",
            "output": {"messages": [{"role": "user", "content": "framework state"}]},
            "observations": [generation(input="asked", output="answered")],
        }
    )
    assert got.messages == [
        {"role": "user", "content": "asked"},
        {"role": "assistant", "content": "answered"},
    ]
    assert got.notes == []


def test_a_list_or_page_whose_generations_hold_nothing_is_a_clear_error() -> None:
    empty = generation()
    for document, where in (([empty], ""), ({"data": [empty]}, "data: ")):
        with pytest.raises(ConversationFormatError) as info:
            imported(document)
        assert str(info.value) == (
            f"<text> is not valid langfuse: {where}"
            "no GENERATION observation with input or output messages"
        )


def test_a_trace_with_no_generation_at_all_says_so() -> None:
    """Spans and events are the application's steps: with no GENERATION there is no chat."""
    document = {"id": "t", "output": QUESTION, "observations": [{"id": "s", "type": "SPAN"}]}
    with pytest.raises(ConversationFormatError) as info:
        imported(document)
    assert str(info.value) == (
        "<text> is not valid langfuse: observations: no GENERATION observation"
    )


def test_input_no_format_reads_is_a_note_and_the_output_is_still_read() -> None:
    got = imported([generation(input={"weird": 1}, output="answer")])
    assert got.messages == [{"role": "assistant", "content": "answer"}]
    assert [(n.where, n.what, n.content, n.unknown) for n in got.notes] == [
        ("[0].input", "generation input in no known format", '{"weird": 1}', True)
    ]


def test_output_that_is_one_response_choice_is_its_message() -> None:
    choice = {"index": 0, "message": {"role": "assistant", "content": "a"}, "finish_reason": "stop"}
    got = imported([generation(input=[{"role": "user", "content": "q"}], output=choice)])
    assert got.messages == [
        {"role": "user", "content": "q"},
        {"role": "assistant", "content": "a"},
    ]
    assert got.notes == []


def test_notes_of_the_reader_inside_a_generation_are_kept_with_their_place() -> None:
    part = {"type": "widget", "text": "w"}
    got = imported([generation(input=[{"role": "user", "content": [part]}], output="a")])
    assert got.messages == [
        {"role": "user", "content": "w"},
        {"role": "assistant", "content": "a"},
    ]
    assert [(n.where, n.what, n.content) for n in got.notes] == [
        ("[0].input[0].content[0]", "unknown content part type 'widget'", json.dumps(part))
    ]
