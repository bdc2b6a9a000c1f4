"""The provider view (MEM-5): repairs a copy of a buffer and says what it did.

Each test states the buffer, the exact messages a provider would receive, the
drop count and the located findings, as a reader of GR-MEM would work them
out by hand. The random cases are in ``test_oracle_properties.py``.
"""

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


def test_serialized_content_and_arguments_keep_their_text_readable() -> None:
    """Non-ASCII text in parts and arguments reaches the provider as written, not escaped."""
    entries = [
        {"role": "user", "content": [{"type": "text", "text": "Zürich café?"}]},
        {
            "role": "assistant",
            "content": "",
            "tool_calls": [
                {"id": "c1", "name": "wetter", "arguments": {"stadt": "Zürich", "land": "CH"}}
            ],
        },
        {"role": "tool", "content": "sonnig", "tool_call_id": "c1"},
    ]
    messages, dropped = normalize(entries)
    assert messages[0] == {"role": "user", "content": '[{"text": "Zürich café?", "type": "text"}]'}
    # Keys in a stable (sorted) order, so the same call always reads the same.
    assert messages[1]["tool_calls"][0]["function"] == {
        "name": "wetter",
        "arguments": '{"land": "CH", "stadt": "Zürich"}',
    }
    assert dropped == 0


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
    # The orphan, the second result and the call re-declared by entry 5.
    assert report.dropped == 3
    assert [(f.index, f.kind, f.dropped) for f in lint(entries)] == [
        (0, "orphan_result", True),
        (1, "unanswered_call", False),
        (3, "duplicate_result", True),
        (5, "duplicate_call", True),
    ]
    assert entries == snapshot, "normalization never modifies its input"


def test_partly_duplicate_turn_keeps_its_new_call_and_that_call_keeps_its_result() -> None:
    """A turn re-declaring 'a' next to a new 'b': 'a' goes, 'b' and its result stay paired."""
    entries = [
        {"role": "assistant", "content": "", "tool_calls": [call("a")]},
        {"role": "tool", "content": "a done", "tool_call_id": "a"},
        {"role": "assistant", "content": "", "tool_calls": [call("a"), call("b", "lookup")]},
        {"role": "tool", "content": "b done", "tool_call_id": "b"},
    ]
    report = normalize_report(entries)
    assert report.messages == [
        {"role": "assistant", "content": "", "tool_calls": [call("a")]},
        {"role": "tool", "content": "a done", "tool_call_id": "a"},
        {"role": "assistant", "content": "", "tool_calls": [call("b", "lookup")]},
        {"role": "tool", "content": "b done", "tool_call_id": "b"},
    ]
    assert report.dropped == 1
    (drop,) = report.drops
    assert (drop.index, drop.call_index, drop.kind, drop.tool_call_id) == (
        2,
        0,
        "duplicate_call",
        "a",
    )
    assert str(drop) == (
        "entry 2, tool_calls[0]: dropped: tool_calls[0] repeats call id 'a', "
        "already declared by an earlier turn"
    )


def test_a_turn_whose_every_call_is_removed_goes_with_them() -> None:
    """Its calls all re-declared and no text: two call drops and the turn itself."""
    entries = [
        {"role": "assistant", "content": "", "tool_calls": [call("a"), call("b")]},
        {"role": "tool", "content": "a", "tool_call_id": "a"},
        {"role": "tool", "content": "b", "tool_call_id": "b"},
        {"role": "assistant", "content": " ", "tool_calls": [call("b"), call("a")]},
    ]
    report = normalize_report(entries)
    assert report.messages == [
        {"role": "assistant", "content": "", "tool_calls": [call("a"), call("b")]},
        {"role": "tool", "content": "a", "tool_call_id": "a"},
        {"role": "tool", "content": "b", "tool_call_id": "b"},
    ]
    assert [(f.index, f.call_index, f.kind, f.tool_call_id) for f in report.drops] == [
        (3, 0, "duplicate_call", "b"),
        (3, 1, "duplicate_call", "a"),
        (3, None, "empty_turn", None),
    ]
    assert report.dropped == 3


def test_calls_without_ids_and_repeats_in_one_turn_are_each_a_located_drop() -> None:
    entries = [
        {
            "role": "assistant",
            "content": "let me look",
            "tool_calls": [
                {"type": "function", "function": {"name": "no_id"}},
                {"id": "0"},
                {"tool_call_id": "  ", "id": "c1"},
                "c2",
                {"id": " c1 "},
            ],
        },
        {"role": "tool", "content": "r1", "tool_call_id": "c1"},
    ]
    report = normalize_report(entries)
    assert report.messages == [
        {
            "role": "assistant",
            "content": "let me look",
            "tool_calls": [
                {"id": "c1", "type": "function", "function": {"name": "", "arguments": "{}"}}
            ],
        },
        {"role": "tool", "content": "r1", "tool_call_id": "c1"},
    ]
    assert [str(f) for f in report.drops] == [
        "entry 0, tool_calls[0]: dropped: tool_calls[0] has no usable id "
        "(MEM-11: blank and '0' are no id)",
        "entry 0, tool_calls[1]: dropped: tool_calls[1] has no usable id "
        "(MEM-11: blank and '0' are no id)",
        "entry 0, tool_calls[3]: dropped: tool_calls[3] is not a call object (str)",
        "entry 0, tool_calls[4]: dropped: tool_calls[4] repeats call id 'c1' of this turn",
    ]
    assert report.dropped == 4
    assert report.findings == report.drops
    assert {f.rule for f in report.findings} == {"MEM-5"}
    assert report.findings[0].model_dump()["rule"] == "MEM-5"  # what normalize --json prints


def test_calls_on_a_message_that_cannot_declare_them_are_dropped() -> None:
    entries = [
        {"role": "user", "content": "hi", "tool_calls": [call("u1"), call("u2")]},
        {"role": "tool", "content": "r", "tool_call_id": "u1", "tool_calls": [call("t1")]},
    ]
    report = normalize_report(entries)
    assert report.messages == [{"role": "user", "content": "hi"}]
    assert [(f.index, f.call_index, f.kind) for f in report.drops] == [
        (0, 0, "misplaced_call"),
        (0, 1, "misplaced_call"),
        (1, 0, "misplaced_call"),
        (1, None, "orphan_result"),
    ]
    assert report.drops[0].message == "dropped: tool_calls[0] on a user message"


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
    assert [(f.index, f.kind, f.message) for f in report.drops] == [
        (3, "not_a_message", "dropped: not a message object (int)"),
        (4, "not_a_message", "dropped: no role"),
        (5, "not_a_message", "dropped: unknown role 'robot'"),
        (2, "idless_result", "dropped: tool result with no usable tool_call_id (MEM-11)"),
    ]
    assert report.dropped == 4
    assert str(report.findings[0]) == "entry 0: tool_calls is not a list (str); ignored"
    assert report.findings[0].dropped is False


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


def test_results_move_next_to_their_turn_and_the_output_never_opens_with_a_tool() -> None:
    """A result recorded after a user turn is placed right after its call's turn."""
    entries = [
        {"role": "tool", "content": "stale", "tool_call_id": "z"},
        {"role": "system", "content": "sys"},
        {"role": "assistant", "content": "", "tool_calls": [call("a")]},
        {"role": "user", "content": "well?"},
        {"role": "tool", "content": "late a", "tool_call_id": "a"},
    ]
    report = normalize_report(entries)
    assert report.messages == [
        {"role": "system", "content": "sys"},
        {"role": "assistant", "content": "", "tool_calls": [call("a")]},
        {"role": "tool", "content": "late a", "tool_call_id": "a"},
        {"role": "user", "content": "well?"},
    ]
    assert [(f.index, f.kind) for f in report.findings] == [(0, "orphan_result")]
    assert report.dropped == 1


def test_lint_is_in_buffer_order() -> None:
    entries = [
        {"role": "user", "content": "q"},
        {"role": "assistant", "content": "", "tool_calls": [call("a")]},
        {"role": "system", "content": "late system"},
        {"role": "tool", "content": "x", "tool_call_id": "nope"},
    ]
    assert [(f.index, f.kind) for f in lint(entries)] == [
        (1, "unanswered_call"),
        (3, "orphan_result"),
    ]
