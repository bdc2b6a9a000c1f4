"""Readable labels: calls as name(arguments), ids as the engine reads them."""

from __future__ import annotations

from typing import Any

from flowdrop_core.inspect.labels import call_text, entry_calls, id_note, message_label, step_label

CALL: dict[str, Any] = {
    "role": "assistant",
    "content": None,
    "tool_calls": [
        {
            "id": "c1",
            "type": "function",
            "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'},
        },
        {"id": "c2", "name": "lookup", "args": {"q": "cats"}},
    ],
}


def test_calls_read_with_names_and_arguments_in_every_spelling() -> None:
    assert call_text(CALL["tool_calls"][0]) == 'get_weather({"city": "Paris"})'
    assert call_text(CALL["tool_calls"][1]) == 'lookup({"q": "cats"})'
    assert call_text({"id": "x", "name": "t", "input": {}}) == "t({})"
    assert call_text({"id": "x"}) == "(unnamed call)()"
    assert call_text({"function": {"name": "f", "arguments": "not json"}}) == "f(not json)"


def test_an_assistant_turn_with_only_calls_shows_its_calls() -> None:
    label = message_label(CALL, width=200)
    assert label.startswith("assistant calls get_weather(")
    assert "lookup(" in label and "null" not in label
    stored = {"role": "assistant", "content": "", "metadata": {"tool_calls": CALL["tool_calls"]}}
    assert entry_calls(stored) == [
        'c1: get_weather({"city": "Paris"})',
        'c2: lookup({"q": "cats"})',
    ]


def test_ids_the_engine_refuses_are_named_not_hidden() -> None:
    assert id_note("c1") == "c1"
    assert id_note("0") == '"0" (not an id, MEM-11)'
    assert id_note(None) == "no id"
    zero = {"role": "assistant", "content": "", "tool_calls": [{"id": "0", "name": "s"}]}
    assert entry_calls(zero) == ['"0" (not an id, MEM-11): s()']
    assert message_label({"role": "tool", "content": "r", "tool_call_id": "0"}).startswith(
        'tool result for "0" (not an id, MEM-11): r'
    )


def test_step_labels_are_one_readable_line() -> None:
    assert step_label([{"role": "user", "content": "hello\n  world"}]) == "user: hello world"
    assert step_label([]) == "(nothing)"
    assert step_label([{"role": "user", "content": ""}]) == "user: (empty) — a pure read (MEM-16)"
    two = step_label([{"role": "user", "content": "a"}, {"role": "assistant", "content": "b"}])
    assert two.startswith("2 messages: user: a")
    long = step_label([{"role": "user", "content": "x" * 500}], width=40)
    assert len(long) == 40 and long.endswith("…")
    assert message_label(
        {"role": "tool", "content": "x", "metadata": {"tool_call_id": "c", "healed": True}}
    ).startswith("tool result for c (placeholder)")
