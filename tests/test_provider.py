"""The provider view (MEM-5): repairs a copy of a buffer and says what it did."""

from __future__ import annotations

import copy

from flowdrop_core import lint, normalize, normalize_report

PLACEHOLDER = "Tool call was interrupted; no result."


def call(cid: str, name: str = "search") -> dict:
    return {"id": cid, "type": "function", "function": {"name": name, "arguments": "{}"}}


def test_systems_move_first_and_content_becomes_text() -> None:
    entries = [
        {"role": "user", "content": [{"type": "text", "text": "hi"}]},
        {"role": "system", "content": "be brief"},
        {"role": "assistant", "content": None},
        {"role": "system", "content": {"note": 1}},
    ]
    messages, dropped = normalize(entries)
    assert messages == [
        {"role": "system", "content": "be brief"},
        {"role": "system", "content": '{"note": 1}'},
        {"role": "user", "content": '[{"text": "hi", "type": "text"}]'},
    ]
    assert dropped == 1  # the assistant turn with no content and no call


def test_pairing_is_repaired_and_every_repair_is_reported() -> None:
    entries = [
        {"role": "tool", "content": "lead", "tool_call_id": "x"},
        {"role": "assistant", "content": "", "tool_calls": [call("a"), call("b")]},
        {"role": "tool", "content": "a1", "tool_call_id": "a"},
        {"role": "tool", "content": "a2", "tool_call_id": "a"},
        {"role": "user", "content": "and?"},
        {"role": "assistant", "content": "again", "tool_calls": [call("a")]},
    ]
    snapshot = copy.deepcopy(entries)
    report = normalize_report(entries)
    assert report.messages == [
        {"role": "assistant", "content": "", "tool_calls": [call("a"), call("b")]},
        {"role": "tool", "content": "a1", "tool_call_id": "a"},
        {"role": "tool", "content": PLACEHOLDER, "tool_call_id": "b"},
        {"role": "user", "content": "and?"},
        {"role": "assistant", "content": "again"},
    ]
    assert report.dropped == 2
    assert [(f.index, f.kind, f.dropped) for f in lint(entries)] == [
        (0, "orphan_result", True),
        (1, "unanswered_call", False),
        (3, "duplicate_result", True),
        (5, "duplicate_call", False),
    ]
    assert entries == snapshot, "normalization never modifies its input"


def test_malformed_fields_are_coerced_away_not_the_message() -> None:
    entries = [
        {"role": "assistant", "content": "a", "tool_calls": "not a list"},
        {"role": "user", "content": "u", "healed": "yes", "metadata": []},
        {"role": "tool", "content": "t", "tool_call_id": ["c1"]},
        7,
        {"content": "no role"},
        {"role": "robot", "content": "?"},
    ]
    report = normalize_report(entries)
    assert report.messages == [
        {"role": "assistant", "content": "a"},
        {"role": "user", "content": "u"},
    ]
    assert [(f.index, f.kind) for f in report.findings if f.dropped] == [
        (3, "not_a_message"),
        (4, "not_a_message"),
        (5, "not_a_message"),
        (2, "idless_result"),
    ]
    assert report.dropped == 4
    assert "tool_calls is not a list" in str(report.findings[0])


def test_stored_rows_and_buffer_spelling_of_calls() -> None:
    entries = [
        {
            "role": "assistant",
            "content": "",
            "metadata": {"tool_calls": [{"tool_call_id": "c1", "name": "f", "args": {"q": 1}}]},
        },
        {"role": "tool", "content": "r", "metadata": {"tool_call_id": "c1", "healed": True}},
    ]
    messages, dropped = normalize(entries)
    assert messages == [
        {
            "role": "assistant",
            "content": "",
            "tool_calls": [
                {"id": "c1", "type": "function", "function": {"name": "f", "arguments": '{"q": 1}'}}
            ],
        },
        {"role": "tool", "content": "r", "tool_call_id": "c1"},
    ]
    assert dropped == 0
