"""The specification's examples (end of GR-MEM.md), each as an exact test.

Each test states the starting buffer, the append and the exact report and
resulting buffer, so a reader can check them against the spec line by line.
The scope examples (MEM-6, MEM-7/MEM-13) are in ``test_scopes.py``.
"""

from __future__ import annotations

from typing import Any

from flowdrop_core import (
    AppendResult,
    EventKind,
    append_messages,
    apply_events,
    normalize,
    normalize_report,
    text_to_message,
    usable_id,
)


def after(res: AppendResult) -> list[dict[str, Any]]:
    """The buffer after a pure append (``append_messages`` always returns it)."""
    assert res.messages is not None
    return res.messages


PLACEHOLDER = "Tool call was interrupted; no result."


def kinds(result) -> list[str]:
    return [str(e.kind) for e in result.events]


def test_mem14_full_window_reports_the_append() -> None:
    """MEM-14: a three-message window holding three entries; a new message arrives."""
    buffer = [
        {"role": "user", "content": "one"},
        {"role": "assistant", "content": "two"},
        {"role": "user", "content": "three"},
    ]
    res = append_messages(buffer, {"role": "user", "content": "four"}, max_messages=3)
    assert res.summary() == {"count": 3, "appended": 1, "appended_any": True}
    assert res.messages == [
        {"role": "assistant", "content": "two"},
        {"role": "user", "content": "three"},
        {"role": "user", "content": "four", "metadata": {}},
    ]
    assert kinds(res) == ["appended", "evicted"]
    assert res.events[1].entry == {"role": "user", "content": "one"}


def test_mem14_refired_tool_result_reports_nothing_new() -> None:
    """MEM-14: a tool result re-fired under an id the buffer already holds."""
    buffer = [
        {"role": "assistant", "content": None, "tool_calls": [{"id": "c1", "type": "function"}]},
        {"role": "tool", "content": "Found 3 cats", "tool_call_id": "c1"},
    ]
    res = append_messages(buffer, {"role": "tool", "content": "Found 3 cats", "tool_call_id": "c1"})
    assert res.summary() == {"count": 2, "appended": 0, "appended_any": False}
    assert res.messages == buffer
    assert kinds(res) == ["duplicate_result"]
    assert res.events[0].position == 1


def test_mem1_refired_result_dropped_new_result_appended() -> None:
    buffer = [
        {"role": "assistant", "content": "", "metadata": {"tool_calls": [{"tool_call_id": "c1"}]}},
        {"role": "tool", "content": "first result", "metadata": {"tool_call_id": "c1"}},
    ]
    refire = {"role": "tool", "content": "re-fired result", "tool_call_id": "c1"}
    second = {"role": "tool", "content": "second result", "tool_call_id": "c2"}
    res = append_messages(buffer, refire)
    assert res.summary() == {"count": 2, "appended": 0, "appended_any": False}
    assert res.messages == buffer
    res = append_messages(buffer, second)
    assert res.summary() == {"count": 3, "appended": 1, "appended_any": True}
    assert res.messages == [
        *buffer,
        {"role": "tool", "content": "second result", "metadata": {"tool_call_id": "c2"}},
    ]


def test_mem1_mem10_real_result_replaces_placeholder_in_place() -> None:
    buffer = [
        {"role": "assistant", "content": "", "metadata": {"tool_calls": [{"tool_call_id": "c1"}]}},
        {
            "role": "tool",
            "content": PLACEHOLDER,
            "metadata": {"tool_call_id": "c1", "healed": True},
        },
        {"role": "user", "content": "anything?"},
    ]
    real = {"role": "tool", "content": "Found 3 cats", "tool_call_id": "c1"}
    res = append_messages(buffer, real)
    assert res.summary() == {"count": 3, "appended": 0, "appended_any": False}
    assert after(res)[1] == {
        "role": "tool",
        "content": "Found 3 cats",
        "metadata": {"tool_call_id": "c1"},
    }
    assert after(res)[0] is buffer[0] and after(res)[2] is buffer[2]
    assert kinds(res) == ["placeholder_replaced"]
    assert res.events[0].rule == "MEM-10" and res.events[0].position == 1
    # A later second real result for that id is then a duplicate.
    again = append_messages(after(res), {**real, "content": "Found 4 cats"})
    assert again.appended == 0 and kinds(again) == ["duplicate_result"]


def test_mem2_turn_dropped_only_when_every_call_is_declared() -> None:
    buffer = [
        {
            "role": "assistant",
            "content": "",
            "tool_calls": [{"tool_call_id": "c1", "name": "search"}],
        },
    ]
    same = {
        "role": "assistant",
        "content": "",
        "tool_calls": [{"tool_call_id": "c1", "name": "search"}],
    }
    res = append_messages(buffer, same)
    assert res.summary() == {"count": 1, "appended": 0, "appended_any": False}
    assert kinds(res) == ["duplicate_turn"]
    wider = {
        "role": "assistant",
        "content": "",
        "tool_calls": [
            {"tool_call_id": "c1", "name": "search"},
            {"tool_call_id": "c2", "name": "lookup"},
        ],
    }
    res = append_messages(buffer, wider)
    assert res.summary() == {"count": 2, "appended": 1, "appended_any": True}
    assert after(res)[1] == {
        "role": "assistant",
        "content": "",
        "metadata": {"tool_calls": wider["tool_calls"]},
    }


def test_mem3_placeholder_inserted_after_declaring_turn() -> None:
    buffer = [
        {"role": "assistant", "content": "", "metadata": {"tool_calls": [{"tool_call_id": "c1"}]}},
        {"role": "user", "content": "anything?"},
        {"role": "assistant", "content": "sorry, lost it"},
    ]
    res = append_messages(buffer, {"role": "user", "content": "try again"})
    assert res.summary() == {"count": 5, "appended": 1, "appended_any": True}
    assert res.messages == [
        buffer[0],
        {
            "role": "tool",
            "content": PLACEHOLDER,
            "metadata": {"tool_call_id": "c1", "healed": True},
        },
        buffer[1],
        buffer[2],
        {"role": "user", "content": "try again", "metadata": {}},
    ]
    assert [(str(e.kind), e.rule, e.position) for e in res.events] == [
        ("placeholder_inserted", "MEM-3", 1),
        ("appended", "MEM-14", 4),
    ]


def test_mem11_placeholder_uses_provider_id_spelling() -> None:
    buffer = [
        {
            "role": "assistant",
            "content": "",
            "metadata": {"tool_calls": [{"id": "call_1", "name": "search"}]},
        },
    ]
    res = append_messages(buffer, {"role": "user", "content": "still there?"})
    assert after(res)[1] == {
        "role": "tool",
        "content": PLACEHOLDER,
        "metadata": {"tool_call_id": "call_1", "healed": True},
    }
    assert res.appended == 1 and res.count == 3


def test_mem6_identifier_examples() -> None:
    """MEM-6: user_id 0 and "0" are no identity; "7" is (the scope tests go further)."""
    assert usable_id(0) is None
    assert usable_id("0") is None
    assert usable_id("7") == "7"


def test_mem5_call_and_result_spelled_zero_normalize_to_nothing() -> None:
    entries = [
        {"role": "assistant", "content": "", "tool_calls": [{"id": "0", "type": "function"}]},
        {"role": "tool", "content": "result", "tool_call_id": "0"},
    ]
    # GR-MEM: three drops, each located: the call, the turn it leaves empty, the result.
    assert normalize(entries) == ([], 3)
    report = normalize_report(entries)
    assert [(f.index, f.call_index, f.kind) for f in report.drops] == [
        (0, 0, "idless_call"),
        (0, None, "empty_turn"),
        (1, None, "idless_result"),
    ]
    assert report.findings == report.drops  # nothing else: no repair, no silent removal


def test_mem5_result_ahead_of_call_is_dropped_and_call_gets_synthetic_result() -> None:
    entries = [
        {"role": "tool", "content": "early", "tool_call_id": "c1"},
        {
            "role": "assistant",
            "content": "",
            "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "search"}}],
        },
    ]
    messages, dropped = normalize(entries)
    assert messages == [
        {
            "role": "assistant",
            "content": "",
            "tool_calls": [
                {"id": "c1", "type": "function", "function": {"name": "search", "arguments": "{}"}}
            ],
        },
        {"role": "tool", "content": PLACEHOLDER, "tool_call_id": "c1"},
    ]
    assert dropped == 1


def test_mem16_text_to_message() -> None:
    assert text_to_message("hello", "operator") == {"role": "user", "content": "hello"}
    assert text_to_message("hello", "user", tool_call_id="c1") == {
        "role": "user",
        "content": "hello",
    }
    assert text_to_message("done", "tool", tool_call_id="  c1 ") == {
        "role": "tool",
        "content": "done",
        "tool_call_id": "c1",
    }
    assert text_to_message("done", "tool", tool_call_id="   ") == {
        "role": "tool",
        "content": "done",
    }
    for not_an_id in ("0", False, None, ["c1"]):
        assert text_to_message("done", "tool", not_an_id) == {"role": "tool", "content": "done"}
    assert text_to_message("", "user") is None
    assert text_to_message("hi", None) == {"role": "user", "content": "hi"}


def test_events_rebuild_every_example_step() -> None:
    """The events of a step turn the buffer before into the buffer after."""
    buffer: list[dict[str, Any]] = [
        {"role": "assistant", "content": "", "tool_calls": [{"id": "a"}, {"id": "b"}]},
        {"role": "tool", "content": "b done", "tool_call_id": "b"},
        {"role": "assistant", "content": "", "tool_calls": [{"id": "c"}]},
    ]
    res = append_messages(
        buffer,
        [
            {"role": "user", "content": "next"},
            {"role": "tool", "content": "late", "tool_call_id": "a"},
        ],
        max_messages=4,
    )
    # 3 entries + 2 placeholders (a, c) + the user turn = 6; "late" replaces
    # a's placeholder in place; the window of 4 then evicts the oldest 2.
    assert [str(e.kind) for e in res.events] == [
        "placeholder_inserted",
        "placeholder_inserted",
        "appended",
        "placeholder_replaced",
        "evicted",
        "evicted",
    ]
    assert res.summary() == {"count": 4, "appended": 1, "appended_any": True}
    assert apply_events(buffer, res.events) == after(res)
    assert [e.kind for e in res.events].count(EventKind.EVICTED) == 2
