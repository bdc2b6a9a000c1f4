"""The jsonl importer: what it claims, the messages and notes it reads, its located errors."""

from __future__ import annotations

import json

import pytest
from import_helpers import DEEP, HUGE_INT, SAMPLES, call_main, error_of

from flowdrop_core.importers import (
    ConversationFormatError,
    load_conversation,
    load_conversations,
    parse_conversation,
    parse_conversations,
)
from flowdrop_core.importers import (
    _jsonl as jsonl,
)
from flowdrop_core.importers._base import Out
from flowdrop_core.importers._claims import Miss, lines_of
from flowdrop_core.provider import normalize_report


def test_jsonl_messages_and_conversations_per_line() -> None:
    lines = [
        json.dumps({"role": "user", "content": "hi", "timestamp": "t1"}),
        "",
        json.dumps({"type": "function_call", "call_id": "c1", "name": "f", "arguments": "{}"}),
        json.dumps({"type": "function_call", "call_id": "c2", "name": "g", "arguments": "{}"}),
        json.dumps({"type": "function_call_output", "call_id": "c1", "output": "one"}),
        "   ",
        json.dumps({"messages": [{"role": "user", "content": "next"}]}),
        json.dumps([{"role": "assistant", "content": "line\u2028separator"}]),
    ]
    got = parse_conversation("\n".join(lines) + "\n")
    assert got.format == "jsonl"
    assert got.messages == [
        {"role": "user", "content": "hi"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [call_main("c1", "f"), call_main("c2", "g")],
        },
        {"role": "tool", "content": "one", "tool_call_id": "c1"},
        {"role": "user", "content": "next"},
        {"role": "assistant", "content": "line\u2028separator"},
    ]
    assert got.origins == [
        "line 1",
        "line 3+line 4",
        "line 5",
        "line 7: messages[0]",
        "line 8: [0]",
    ]
    assert got.turns == [[0, 1, 2], [3, 4]]


def test_jsonl_line_that_is_not_json() -> None:
    text = (
        '{"role": "user", "content": "hi"}\n'
        '{"role": "assistant", "content": "yo"}\n'
        '{"role": "tool" "content": "x"}\n'
    )
    assert error_of(text) == (
        "rec.json: JSON Lines whose line 3 is not JSON (Expecting ',' delimiter at column 17)"
    )


@pytest.mark.parametrize(
    ("line", "problem"),
    [
        (
            '{"role": "user", "content": ' + HUGE_INT + "}",
            "not JSON (integer too long: more than 4300 digits)",
        ),
        (DEEP, "not JSON (nested too deeply): more than 100 levels at line 1, column 101"),
    ],
)
def test_jsonl_line_refused_without_a_decode_error_names_its_line(line: str, problem: str) -> None:
    text = '{"role": "user", "content": "hi"}\n' + line + "\n"
    assert error_of(text, format="jsonl") == (f"rec.json is not valid jsonl: line 2: {problem}")


def test_jsonl_message_with_no_role_names_its_line() -> None:
    text = '{"role": "user", "content": "hi"}\n\n{"content": "lost"}\n'
    assert error_of(text, format="jsonl") == (
        "rec.json is not valid jsonl: line 3: missing 'role' (nearest format: openai-chat)"
    )


# --------------------------------------------------------------------------- many conversations


def test_a_fine_tuning_file_is_one_conversation_per_line() -> None:
    """OpenAI fine-tuning JSONL (one {"messages": [...]} per line, every line reusing
    'call_id') was merged into one buffer and normalize dropped the later calls."""
    got = load_conversations(SAMPLES / "openai_finetune_drone.jsonl")
    assert [(c.label, c.format, c.name.endswith("openai_finetune_drone.jsonl")) for c in got] == [
        ("line 1", "jsonl", True),
        ("line 2", "jsonl", True),
        ("line 3", "jsonl", True),
    ]
    asked = ["Let's get the drone in the air, can you make it take off",
             "Can you lift the drone to 100 feet off the ground",
             "Can you safely bring the drone down to the ground here?"]  # fmt: skip
    calls = [("takeoff_drone", '{"altitude": 100}'), ("takeoff_drone", '{"altitude": 100}'),
             ("land_drone", '"{\\"location\\": \\"current\\"}"')]  # fmt: skip
    for number, (conv, question, (name, arguments)) in enumerate(
        zip(got, asked, calls, strict=True), 1
    ):
        assert [m["role"] for m in conv.messages] == ["system", "user", "assistant"]
        assert conv.messages[1] == {"role": "user", "content": question}
        assert conv.messages[2]["tool_calls"] == [
            {
                "id": "call_id",
                "type": "function",
                "function": {"name": name, "arguments": arguments},
            }
        ]
        assert conv.origins == [f"line {number}: messages[{k}]" for k in range(3)]
        assert conv.turns == [[0], [1, 2]]
        assert conv.notes == []
        # each conversation on its own: its call id collides with no other line's
        report = normalize_report(conv.messages)
        assert [f.kind for f in report.findings] == ["unanswered_call"]


def test_one_conversation_api_refuses_a_file_of_many() -> None:
    with pytest.raises(ConversationFormatError) as info:
        load_conversation(SAMPLES / "openai_finetune_drone.jsonl", name="ft.jsonl")
    assert str(info.value) == (
        "ft.jsonl holds 3 conversations, one per line (line 1 to line 3); "
        "read them one at a time (--conversation N)"
    )


def test_lines_of_single_messages_stay_one_conversation() -> None:
    """Only a file whose every line is a whole conversation is split."""
    text = (
        '{"messages": [{"role": "user", "content": "a"}]}\n{"role": "assistant", "content": "b"}\n'
    )
    (conv,) = parse_conversations(text)
    assert conv.label == ""
    assert [m["content"] for m in conv.messages] == ["a", "b"]


def _jsonl(*lines: object) -> str:
    return "\n".join(json.dumps(line) for line in lines) + "\n"


def test_a_run_of_response_items_folds_calls_across_lines_and_notes_name_their_line() -> None:
    """Two function_call lines are one assistant message whose origin names both lines; a
    note inside a line's message names the line and the place in it."""
    text = _jsonl(
        {"role": "user", "content": "hi"},
        {"type": "function_call", "call_id": "c1", "name": "f", "arguments": "{}"},
        {"type": "function_call", "call_id": "c2", "name": "g", "arguments": "{}"},
        {"type": "function_call_output", "call_id": "c1", "output": "r1"},
        {"type": "function_call_output", "call_id": "c2", "output": "r2"},
        {"role": "assistant", "content": [{"type": "output_text", "text": "done"},
                                          {"type": "weird", "text": "w"}]},
    )  # fmt: skip
    got = parse_conversation(text, format="jsonl", source_name="r.jsonl")
    assert got.messages == [
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{}"}},
            {"id": "c2", "type": "function", "function": {"name": "g", "arguments": "{}"}}]},
        {"role": "tool", "content": "r1", "tool_call_id": "c1"},
        {"role": "tool", "content": "r2", "tool_call_id": "c2"},
        {"role": "assistant", "content": "done\nw"},
    ]  # fmt: skip
    assert got.origins == ["line 1", "line 2+line 3", "line 4", "line 5", "line 6"]
    assert [(n.where, n.what) for n in got.notes] == [
        ("line 6: content[1]", "unknown content part type 'weird'")
    ]


def test_read_text_reads_the_lines_as_the_registry_does() -> None:
    """``jsonl.read_text`` (the module's text entry point) reads what ``parse_conversation``
    reads, blank lines skipped, with the same origins."""
    text = _jsonl({"role": "user", "content": "a"}, {"messages": [
        {"role": "assistant", "content": "b"}]}).replace("\n", "\n\n", 1)  # fmt: skip
    out = Out()
    jsonl.read_text(text, out)
    assert out.messages == [
        {"role": "user", "content": "a"},
        {"role": "assistant", "content": "b"},
    ]
    assert out.origins == ["line 1", "line 3: messages[0]"]
    got = parse_conversation(text, format="jsonl")
    assert (got.messages, got.origins) == (out.messages, out.origins)


def test_what_the_signature_misses() -> None:
    assert str(jsonl.claims([])) == "no lines"
    missed = jsonl.claims(lines_of(_jsonl({"role": "user", "content": "a"}, {"messages": 5})))
    assert isinstance(missed, Miss)
    assert (missed.where, missed.what) == (
        "line 2: messages",
        "expected a list, got number (nearest format: openai-chat)",
    )


def test_the_signature_misses_a_last_run_of_lines_no_format_claims() -> None:
    text = _jsonl({"messages": [{"role": "user", "content": "a"}]}, {"role": "user"})
    assert jsonl.claims(lines_of(text)) == Miss(
        "line 2", "no 'content', 'tool_calls' or 'tool_call_id' (nearest format: openai-chat)", 1
    )


def test_a_bad_line_of_a_file_of_conversations_is_located_at_its_line() -> None:
    text = _jsonl({"messages": [{"role": "user", "content": "a"}]}, {"messages": 5})
    with pytest.raises(ConversationFormatError) as info:
        parse_conversations(text, format="jsonl", source_name="ft.jsonl")
    assert str(info.value) == (
        "ft.jsonl is not valid jsonl: line 2: messages: expected a list, got number "
        "(nearest format: openai-chat)"
    )
