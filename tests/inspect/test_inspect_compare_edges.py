"""Comparing two settings: how they are described and what becomes of each tool call."""

from __future__ import annotations

from typing import Any

from flowdrop_core.inspect.compare import CallFate, Settings, call_fates


def call(call_id: str) -> dict[str, Any]:
    return {"id": call_id, "type": "function", "function": {"name": "f", "arguments": "{}"}}


def test_settings_describe_themselves_and_name_what_changed() -> None:
    base = Settings(0, "session", "chat_history", None, "none")
    other = Settings(4, "user", "chat_history", {"user_id": "u"}, "results")
    assert base.describe() == "no window · scope session · key chat_history · no context"
    assert other.describe() == (
        "window 4 · scope user · key chat_history · context {'user_id': 'u'} · re-fire results"
    )
    assert base.changed(other) == ["max_messages", "scope", "context", "refire"]
    assert base.changed(base) == []


def test_call_fates_read_both_shapes_and_skip_what_is_not_a_call() -> None:
    stored_turn = {
        "role": "assistant",
        "content": None,
        "metadata": {"tool_calls": [call("c1"), 5]},
    }
    stored_result = {"role": "tool", "content": "r", "metadata": {"tool_call_id": "c1"}}
    chat_turn = {"role": "assistant", "content": None, "tool_calls": [call("c2")]}
    not_an_id = {"role": "tool", "content": "x", "tool_call_id": "0"}  # MEM-11: "0" answers nothing
    fates = call_fates([5, stored_turn, stored_result], [chat_turn, not_an_id])
    assert fates == [
        CallFate("c1", in_base=True, in_other=False, answered_base=True, answered_other=False),
        CallFate("c2", in_base=False, in_other=True, answered_base=False, answered_other=False),
    ]
    assert [f.verdict for f in fates] == [
        "evicted with its result under the other settings",
        "kept only under the other settings",
    ]


def test_a_call_in_both_or_in_neither() -> None:
    assert CallFate("c", True, True, True, False).verdict == "kept under both"
    assert CallFate("c", False, False, False, False).verdict == "gone under both"


def test_the_two_window_fates_have_two_names() -> None:
    orphaned = CallFate("c", in_base=True, in_other=False, answered_base=True, answered_other=True)
    assert orphaned.verdict == "result left orphaned under the other settings (its call evicted)"
    never = CallFate("c", in_base=True, in_other=False, answered_base=False, answered_other=False)
    assert never.verdict == "evicted under the other settings"
