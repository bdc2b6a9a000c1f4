"""The engine and the provider view against the independent oracle, over loaded buffers.

Starting buffers come from :func:`strategies.stored_buffers` (any mix of
rows as a store may hold them: both spellings, placeholders anywhere,
repeated ids, results ahead of their calls, more entries than the window),
not only from earlier appends. ``oracle.py`` imports nothing from
``flowdrop_core``; where the two disagree, GR-MEM decides.
"""

from __future__ import annotations

import copy
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st
from oracle import naive_append, naive_normalize, sendable_problems
from strategies import conversations, examples, stored_buffers, stored_entries, windows

from flowdrop_core import Buffer, append_messages, apply_events, normalize_report
from flowdrop_core.provider import NormalizeReport


def decisions(events: Any) -> list[tuple[Any, ...]]:
    """The engine's events in the oracle's terms: kind, rule, incoming index, position, call id."""
    return [(str(e.kind), e.rule, e.incoming_index, e.position, e.tool_call_id) for e in events]


@settings(max_examples=examples(500), deadline=None)
@given(start=stored_buffers, batch=conversations, window=windows)
def test_engine_matches_the_oracle_on_loaded_buffers(
    start: list[dict[str, Any]], batch: list[dict[str, Any]], window: int
) -> None:
    snapshot_start, snapshot_batch = copy.deepcopy(start), copy.deepcopy(batch)

    res = append_messages(start, batch, max_messages=window)
    expected, expected_appended, expected_decisions = naive_append(start, batch, window)

    assert res.messages == expected
    assert (res.count, res.appended, res.appended_any) == (
        len(expected),
        expected_appended,
        expected_appended > 0,
    )
    assert decisions(res.events) == expected_decisions
    assert apply_events(start, res.events) == expected
    assert start == snapshot_start and batch == snapshot_batch, "inputs are never mutated"


@settings(max_examples=examples(150), deadline=None)
@given(
    start=stored_buffers,
    batches=st.lists(conversations, min_size=1, max_size=4),
    window=windows,
)
def test_a_live_buffer_matches_the_oracle_append_after_append(
    start: list[dict[str, Any]], batches: list[list[dict[str, Any]]], window: int
) -> None:
    """The indexes survive several appends over a loaded buffer (evictions, re-opened calls)."""
    buf = Buffer(start, max_messages=window)
    expected = list(start)
    for batch in batches:
        res = buf.append(batch)
        expected, appended, expected_decisions = naive_append(expected, batch, window)
        assert buf.messages() == expected
        assert (res.count, res.appended) == (len(expected), appended)
        assert decisions(res.events) == expected_decisions


junk = st.sampled_from(
    [7, "text", None, {"content": "no role"}, {"role": "robot", "content": "?"}, {"role": 3}]
)
odd_fields = st.sampled_from(
    [
        {"role": "assistant", "content": "a", "tool_calls": "not a list"},
        {"role": "assistant", "content": "", "tool_calls": ["c1", None]},
        {"role": "user", "content": "u", "tool_calls": [{"id": "u1"}]},
        {"role": "tool", "content": "t", "tool_call_id": ["c1"]},
        {"role": "user", "content": {"parts": [1, 2]}, "metadata": "not an object"},
        {"role": "system", "content": None},
    ]
)


@settings(max_examples=examples(400), deadline=None)
@given(
    entries=st.lists(st.one_of(stored_entries(), stored_entries(), junk, odd_fields), max_size=30)
)
def test_provider_view_matches_the_oracle_and_is_sendable(entries: list[Any]) -> None:
    """MEM-5: the same messages, drop count and located findings; the output is sendable."""
    snapshot = copy.deepcopy(entries)
    report = normalize_report(entries)
    messages, dropped, found = naive_normalize(entries)

    assert report.messages == messages
    assert report.dropped == dropped == len(report.drops)
    got = sorted(
        ((f.index, f.call_index, f.kind, f.tool_call_id, f.dropped) for f in report.findings),
        key=repr,
    )
    assert got == sorted(found, key=repr)
    assert sendable_problems(report.messages) == []
    assert entries == snapshot, "the provider view never modifies its input"
    # Built without a second validation, it is still a valid report.
    assert NormalizeReport.model_validate(report.model_dump()) == report
    # The report is the caller's own: changing it changes no later report.
    for m in report.messages:
        for value in m.values():
            if isinstance(value, list):
                value.append({"id": "caller's change"})
        m.clear()
    assert normalize_report(entries).messages == messages


@settings(max_examples=examples(200), deadline=None)
@given(start=stored_buffers, batch=conversations, window=windows)
def test_provider_view_of_what_the_engine_stored_is_sendable(
    start: list[dict[str, Any]], batch: list[dict[str, Any]], window: int
) -> None:
    """Whatever the buffer holds after an append, MEM-5 turns it into a valid request."""
    after = append_messages(start, batch, max_messages=window).messages or []
    report = normalize_report(after)
    assert sendable_problems(report.messages) == []
    assert (report.messages, report.dropped) == naive_normalize(after)[:2]
