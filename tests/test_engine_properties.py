"""Property-based tests of the append engine over random agent conversations.

Random conversations mix both message shapes, usable and unusable call ids,
re-fired results, healed messages, empty user turns and random windows. The
engine is checked against the naive model in ``oracle.py`` and against the
invariants GR-MEM promises.
"""

from __future__ import annotations

import copy
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st
from oracle import naive_append

from flowdrop_core import Buffer, EventKind, append_messages, apply_events
from flowdrop_core.messages import read_message

IDS = ["c1", "c2", "c3", "c4", "c5", "call_6", " c1 "]
BAD_IDS = ["0", "", "   ", 0]


def _shape(msg: dict[str, Any], stored: bool) -> dict[str, Any]:
    """Spell a flat message as a stored row when ``stored``."""
    if not stored:
        return msg
    meta = {k: msg.pop(k) for k in ("tool_calls", "tool_call_id", "healed") if k in msg}
    return {**msg, "metadata": meta}


@st.composite
def messages(draw: st.DrawFn, usable_only: bool = False) -> dict[str, Any]:
    ids = st.sampled_from(IDS) if usable_only else st.sampled_from(IDS + BAD_IDS)
    kind = draw(st.sampled_from(["user", "assistant", "calls", "tool", "system"]))
    stored = draw(st.booleans())
    if kind == "user":
        msg = {"role": "user", "content": draw(st.sampled_from(["hi", "more?", "", "  ", None]))}
    elif kind == "assistant":
        msg = {"role": "assistant", "content": draw(st.sampled_from(["ok", ""]))}
    elif kind == "system":
        msg = {"role": "system", "content": "be brief"}
    elif kind == "calls":
        spell = draw(st.sampled_from(["id", "tool_call_id"]))
        calls = [
            {spell: cid, "name": "search"} for cid in draw(st.lists(ids, min_size=1, max_size=3))
        ]
        msg = {"role": "assistant", "content": None, "tool_calls": calls}
    else:
        msg = {"role": "tool", "content": draw(st.sampled_from(["r1", "r2"]))}
        msg["tool_call_id"] = draw(ids)
        if draw(st.integers(0, 5)) == 0:
            msg["healed"] = True
    return _shape(msg, stored)


conversations = st.lists(messages(), max_size=25)
windows = st.integers(min_value=0, max_value=8)


def _answer_ids(buffer: list[dict[str, Any]]) -> list[str]:
    out = []
    for entry in buffer:
        parsed = read_message(entry)
        if parsed.result_id is not None:
            out.append(parsed.result_id)
    return out


@settings(max_examples=300, deadline=None)
@given(history=conversations, batch=conversations, window=windows)
def test_engine_matches_the_naive_model_and_invariants(
    history: list[dict[str, Any]], batch: list[dict[str, Any]], window: int
) -> None:
    start = append_messages([], history, max_messages=window).messages
    assert start is not None
    snapshot_start, snapshot_batch = copy.deepcopy(start), copy.deepcopy(batch)

    res = append_messages(start, batch, max_messages=window)
    expected, expected_appended = naive_append(start, batch, window)

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


@settings(max_examples=300, deadline=None)
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

    parsed = [read_message(e) for e in entries]
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


@settings(max_examples=200, deadline=None)
@given(
    history=conversations,
    batch=st.lists(
        messages(usable_only=True).filter(lambda m: m["role"] in ("tool", "assistant")), max_size=12
    ).map(lambda ms: [m for m in ms if read_message(m).role == "tool" or read_message(m).calls]),
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


@settings(max_examples=100, deadline=None)
@given(history=conversations, batches=st.lists(conversations, max_size=5), window=windows)
def test_buffer_and_pure_form_agree_step_by_step(
    history: list[dict[str, Any]], batches: list[list[dict[str, Any]]], window: int
) -> None:
    buf = Buffer(max_messages=window)
    entries: list[dict[str, Any]] = []
    for batch in [history, *batches]:
        live = buf.append(batch)
        pure = append_messages(entries, batch, max_messages=window)
        assert (live.count, live.appended, live.events) == (pure.count, pure.appended, pure.events)
        entries = pure.messages or []
        assert buf.messages() == entries
