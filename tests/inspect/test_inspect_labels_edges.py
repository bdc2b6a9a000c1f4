"""One-line labels of odd calls and entries: shown as they are, never dropped, never markup."""

from __future__ import annotations

from flowdrop_core.inspect.labels import call_text, entry_calls, message_label


def test_a_call_that_is_not_an_object_is_shown_as_its_json() -> None:
    assert call_text(5) == "5"
    assert message_label(5) == "5"


def test_arguments_that_are_not_json_are_shown_as_the_text_given() -> None:
    call = {"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{not json"}}
    assert call_text(call) == "f({not json)"


def test_a_blank_name_is_an_unnamed_call() -> None:
    call = {"id": "c1", "type": "function", "function": {"name": "  ", "arguments": None}}
    assert call_text(call) == "(unnamed call)()"


def test_entry_calls_of_odd_entries() -> None:
    assert entry_calls(5) == []
    assert entry_calls({"role": "assistant", "tool_calls": "x"}) == []
    calls = [5, {"id": "0", "function": {"name": "f", "arguments": "{}"}}]
    assert entry_calls({"role": "assistant", "tool_calls": calls}) == [
        "not a call object: 5",
        '"0" (not an id, MEM-11): f({})',  # MEM-11: "0" is no id, shown as given
    ]
