"""Property-based tests of the append engine over random agent conversations.

Random conversations (``strategies.py``) mix both message shapes, usable and
unusable call ids, re-fired results, healed messages, empty user turns and
random windows. Here the starting buffer is built by earlier appends; the
loaded buffers a store can hold are in ``test_oracle_properties.py``. The
engine is checked against the independent model in ``oracle.py`` and against
the invariants GR-MEM promises.
"""

from __future__ import annotations

import copy
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st
from oracle import naive_append
from strategies import conversations, examples, messages, windows

from flowdrop_core import Buffer, EventKind, append_messages, apply_events
from flowdrop_core.messages import ParsedMessage, read_message


def _read(entry: Any) -> ParsedMessage:
    """``read_message`` of an entry the engine stored or made: always a message."""
    parsed = read_message(entry)
    assert not isinstance(parsed, str), parsed
    return parsed


def _answer_ids(buffer: list[dict[str, Any]]) -> list[str]:
    out = []
    for entry in buffer:
        parsed = _read(entry)
        if parsed.result_id is not None:
            out.append(parsed.result_id)
    return out


@settings(max_examples=examples(300), deadline=None)
@given(history=conversations, batch=conversations, window=windows)
def test_engine_matches_the_naive_model_and_invariants(
    history: list[dict[str, Any]], batch: list[dict[str, Any]], window: int
) -> None:
    start = append_messages([], history, max_messages=window).messages
    assert start is not None
    snapshot_start, snapshot_batch = copy.deepcopy(start), copy.deepcopy(batch)

    res = append_messages(start, batch, max_messages=window)
    expected, expected_appended, _ = naive_append(start, batch, window)

    assert res.messages == expected
    assert res.appended == expected_appended
    assert res.count == len(expected)
    # appended = incoming messages that became entries, one event each.
    assert res.appended == sum(1 for e in res.events if e.kind is EventKind.APPENDED)
    assert res.appended <= len(batch)
    assert res.appended_any == (res.appended > 0)
    if window:
        assert res.count <= window
    # The events alone rebuild the step.
    assert apply_events(start, res.events) == res.messages
    # The inputs are untouched.
    assert start == snapshot_start and batch == snapshot_batch


@settings(max_examples=examples(300), deadline=None)
@given(history=conversations, batch=conversations, window=windows)
def test_no_call_answered_twice_and_placeholders_sit_by_their_turn(
    history: list[dict[str, Any]], batch: list[dict[str, Any]], window: int
) -> None:
    buf = Buffer(max_messages=window)
    inserted: set[int] = set()  # ids of the placeholder entries the engine inserted
    for step in (history, batch):
        res = buf.append(step)
        inserted |= {id(e.entry) for e in res.events if e.kind is EventKind.PLACEHOLDER_INSERTED}
    entries = buf.messages()
    answers = _answer_ids(entries)
    assert len(answers) == len(set(answers)), "a tool call id is answered twice"

    parsed = [_read(e) for e in entries]
    for k, p in enumerate(parsed):
        if id(entries[k]) not in inserted:
            continue
        # Walk back over results answering the same turn; the turn must come next.
        j = k - 1
        while j >= 0 and parsed[j].role == "tool" and parsed[j].result_id is not None:
            j -= 1
        if j < 0:
            continue  # the declaring turn was evicted by the window
        turn_calls = parsed[j].calls
        assert p.result_id in turn_calls, f"placeholder {p.result_id} is not next to its turn"
        for between in parsed[j + 1 : k]:
            assert between.result_id in turn_calls


@settings(max_examples=examples(200), deadline=None)
@given(
    history=conversations,
    batch=st.lists(
        messages(usable_only=True).filter(lambda m: m["role"] in ("tool", "assistant")), max_size=12
    ).map(lambda ms: [m for m in ms if _read(m).role == "tool" or _read(m).calls]),
)
def test_refiring_results_and_calling_turns_is_idempotent(
    history: list[dict[str, Any]], batch: list[dict[str, Any]]
) -> None:
    buf = Buffer()
    buf.append(history)
    buf.append(batch)
    before = buf.messages()
    again = buf.append(batch)
    assert again.appended == 0
    assert again.appended_any is False
    assert buf.messages() == before


@settings(max_examples=examples(100), deadline=None)
@given(history=conversations, batches=st.lists(conversations, max_size=5), window=windows)
def test_buffer_and_pure_form_agree_step_by_step(
    history: list[dict[str, Any]], batches: list[list[dict[str, Any]]], window: int
) -> None:
    """The live buffer, the pure form and the oracle agree after every step.

    The pure form wraps :class:`Buffer`, so agreeing with each other alone
    would prove little: both are also held to the oracle's buffer and count.
    """
    buf = Buffer(max_messages=window)
    entries: list[dict[str, Any]] = []
    for batch in [history, *batches]:
        expected, expected_appended, _ = naive_append(entries, batch, window)
        live = buf.append(batch)
        pure = append_messages(entries, batch, max_messages=window)
        assert (live.count, live.appended, live.events) == (pure.count, pure.appended, pure.events)
        assert (pure.messages, pure.appended) == (expected, expected_appended)
        entries = pure.messages or []
        assert buf.messages() == entries
