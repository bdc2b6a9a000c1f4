"""The lean engine behaves exactly like the frozen reference in this package.

Random agent conversations (seeded, and drawn by hypothesis) go through
``flowdrop_core`` and through ``legacy_engine`` side by side, one call at a
time: single messages, batches, empty batches, invalid messages and invalid
batches, both id spellings, provider-flat and stored shapes, re-fired and
healed results, empty user turns, starting buffers (with stale open calls and
over their window) and windows from none to tiny. After every call the two
must agree on the MEM-14 report, every event (kind, rule, index, position,
id, entry, window, reason, JSON form), the buffer, its open calls and, for an
invalid call, the error text; neither may modify its inputs.
"""

from __future__ import annotations

import copy
import random
from collections.abc import Callable, Mapping
from types import MappingProxyType
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from flowdrop_core import engine as lean
from flowdrop_core.events import apply_events
from flowdrop_core.messages import InvalidMessagesError

from . import engine as legacy
from .events import apply_events as legacy_apply_events
from .messages import InvalidMessagesError as LegacyInvalidMessagesError

GOOD_IDS: list[Any] = ["c1", "c2", "c3", "c4", "c5", " c1 ", "call_6", 7, "7"]
BAD_IDS: list[Any] = ["0", "", "   ", 0, -3, True, None]


def _call(rng: random.Random, cid: Any) -> dict[str, Any]:
    """One tool call under a random spelling (MEM-11: ``id`` or ``tool_call_id``)."""
    spelling = rng.choice(["id", "tool_call_id", "both", "none"])
    call: dict[str, Any] = {"type": "function", "function": {"name": "search", "arguments": "{}"}}
    if spelling == "id":
        call["id"] = cid
    elif spelling == "tool_call_id":
        call["tool_call_id"] = cid
    elif spelling == "both":
        call["tool_call_id"] = rng.choice(BAD_IDS)
        call["id"] = cid
    return call


def _shape(rng: random.Random, msg: dict[str, Any]) -> Any:
    """Spell a provider-flat message as a stored row half the time; add extras sometimes."""
    if rng.random() < 0.5:
        meta = {k: msg.pop(k) for k in ("tool_calls", "tool_call_id", "healed") if k in msg}
        if meta or rng.random() < 0.5:
            msg["metadata"] = meta
        if meta and rng.random() < 0.1:  # the same value at both levels is not a conflict
            key = next(iter(meta))
            msg[key] = meta[key]
    if rng.random() < 0.1:
        msg["timestamp"] = "2026-11-30T12:00:00Z"
    if rng.random() < 0.05:
        msg["name"] = "helper"
    if rng.random() < 0.03:
        return MappingProxyType(msg)  # a Mapping that is not a dict
    return msg


def _invalid(rng: random.Random) -> Any:
    """A malformed message: each kind of problem the reader names."""
    return rng.choice(
        [
            "not a message",
            42,
            None,
            {"content": "no role"},
            {"role": "robot", "content": "x"},
            {"role": 3, "content": "x"},
            {"role": ["user"], "content": "x"},
            {"role": "user", "content": 3.5},
            {"role": "user", "content": "x", "metadata": "m"},
            {
                "role": "tool",
                "content": "x",
                "tool_call_id": "c1",
                "metadata": {"tool_call_id": "c2"},
            },
            {"role": "assistant", "tool_calls": [{"id": "c1"}], "metadata": {"tool_calls": []}},
            {"role": "tool", "content": "x", "healed": "yes"},
            {"role": "tool", "content": "x", "healed": True, "metadata": {"healed": False}},
            {"role": "assistant", "content": None, "tool_calls": {"id": "c1"}},
            {"role": "assistant", "content": None, "tool_calls": ["c1"]},
            {"role": "tool", "content": "x", "tool_call_id": 1.5},
            {"role": "tool", "content": "x", "tool_call_id": ["c1"]},
            {"role": "tool", "content": "x", "tool_call_id": False},
        ]
    )


def random_message(rng: random.Random, answered: list[Any]) -> Any:
    """One message of a mixed agent conversation (sometimes malformed)."""
    r = rng.random()
    msg: dict[str, Any]
    if r < 0.2:
        content = rng.choice(["hi", "more?", "go on", "", "  ", None, [], {}, [{"type": "text"}]])
        msg = {"role": "user", "content": content}
    elif r < 0.27:
        msg = {"role": rng.choice(["assistant", "system"]), "content": rng.choice(["ok", "", None])}
    elif r < 0.5:
        ids = [rng.choice(GOOD_IDS + BAD_IDS[:3]) for _ in range(rng.randint(1, 3))]
        msg = {"role": "assistant", "content": None, "tool_calls": [_call(rng, c) for c in ids]}
        if rng.random() < 0.05:
            msg["tool_calls"] = []
    elif r < 0.9:
        if answered and rng.random() < 0.3:
            cid = rng.choice(answered)  # the orchestrator re-fires a result
        else:
            cid = rng.choice(GOOD_IDS + BAD_IDS)
        msg = {"role": "tool", "content": rng.choice(["r1", "r2", None])}
        if cid is not None:
            msg["tool_call_id"] = cid
        if rng.random() < 0.12:
            msg["healed"] = rng.choice([True, False])
        answered.append(cid)
    elif r < 0.95:
        msg = {"role": rng.choice(["user", "system", "assistant"]), "content": "stray"}
        msg[rng.choice(["tool_call_id", "tool_calls"])] = (
            rng.choice(GOOD_IDS) if rng.random() < 0.5 else [_call(rng, "c9")]
        )
        if isinstance(msg.get("tool_calls"), str):
            del msg["tool_calls"]
    else:
        return _invalid(rng)
    return _shape(rng, msg)


def random_call(rng: random.Random, answered: list[Any]) -> Any:
    """What one append receives: mostly one message, sometimes a batch or a bad batch."""
    r = rng.random()
    if r < 0.7:
        return random_message(rng, answered)
    if r < 0.95:
        batch = [random_message(rng, answered) for _ in range(rng.randint(0, 5))]
        return tuple(batch) if rng.random() < 0.2 else batch
    return rng.choice(["a string", 7, None, {1, 2}])


# -- comparing the two engines ----------------------------------------------------------------


def _event_view(ev: Any) -> tuple[Any, ...]:
    return (
        str(ev.kind),
        ev.rule,
        ev.incoming_index,
        ev.position,
        ev.tool_call_id,
        ev.entry,
        ev.max_messages,
        ev.reason,
        ev.counts,
        ev.to_dict(),
    )


def _result_view(res: Any) -> dict[str, Any]:
    return {
        "count": res.count,
        "appended": res.appended,
        "appended_any": res.appended_any,
        "max_messages": res.max_messages,
        "messages": res.messages,
        "events": [_event_view(ev) for ev in res.events],
        "changed": res.changed,
        "tally": dict(res.tally()),
        "summary": res.summary(),
        "dump": res.model_dump(warnings=False),  # verbatim entries may be any Mapping
    }


def _plain(value: Any) -> Any:
    """A deep, plain copy of an input (mappings as dicts), to check it was not modified."""
    if isinstance(value, Mapping):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [type(value).__name__, *(_plain(v) for v in value)]
    return copy.copy(value)


def _outcome(fn: Callable[[], Any], error: type[Exception]) -> tuple[str, Any]:
    try:
        return "ok", fn()
    except error as exc:  # the same message, naming the same indexes
        return "invalid", str(exc)
    except ValueError as exc:  # a bad window
        return "value", str(exc)


def _same_step(
    new_buf: lean.Buffer, old_buf: legacy.Buffer, incoming: Any, before: list[dict[str, Any]]
) -> None:
    """Append ``incoming`` to both buffers and require the same outcome in every detail."""
    snapshot = _plain(incoming)
    new = _outcome(lambda: new_buf.append(incoming), InvalidMessagesError)
    old = _outcome(lambda: old_buf.append(incoming), LegacyInvalidMessagesError)
    assert new[0] == old[0], (incoming, new, old)
    if new[0] != "ok":
        assert new[1] == old[1]
    else:
        assert _result_view(new[1]) == _result_view(old[1])
        # Events replay the step (the storage layer depends on these positions).
        assert apply_events(before, new[1].events) == new_buf.messages()
        assert legacy_apply_events(before, old[1].events) == old_buf.messages()
    assert _plain(incoming) == snapshot  # the input is never modified
    assert new_buf.messages() == old_buf.messages()
    assert len(new_buf) == len(old_buf)
    assert new_buf.open_calls() == old_buf.open_calls()


def _run_conversation(rng: random.Random, calls: int) -> int:
    """One random conversation through both engines; returns how many calls were made."""
    window = rng.choice([0, 0, 1, 2, 3, 5, 8, 50])
    start: list[Any] = []
    answered: list[Any] = []
    if rng.random() < 0.4:  # a loaded buffer: verbatim entries, maybe stale open calls
        for _ in range(rng.randint(0, 12)):
            msg = random_message(rng, answered)
            if not isinstance(legacy.read_message(msg), str):
                start.append(msg)
    new_buf = lean.Buffer(start, window)
    old_buf = legacy.Buffer(start, window)
    assert new_buf.messages() == old_buf.messages()
    assert new_buf.open_calls() == old_buf.open_calls()
    for _ in range(calls):
        before = new_buf.messages()
        _same_step(new_buf, old_buf, random_call(rng, answered), before)
        if rng.random() < 0.02:  # the pure form, from the current buffer
            incoming = random_call(rng, answered)
            entries = new_buf.messages()
            pure_new = _outcome(
                lambda e=entries, m=incoming: lean.append_messages(e, m, window),
                InvalidMessagesError,
            )
            pure_old = _outcome(
                lambda e=entries, m=incoming: legacy.append_messages(e, m, window),
                LegacyInvalidMessagesError,
            )
            assert pure_new[0] == pure_old[0]
            if pure_new[0] == "ok":
                assert _result_view(pure_new[1]) == _result_view(pure_old[1])
                # untouched entries are the same dict objects in both
                new_ids = [id(m) for m in pure_new[1].messages]
                old_ids = [id(m) for m in pure_old[1].messages]
                kept = {id(m) for m in entries}
                assert [i in kept for i in new_ids] == [i in kept for i in old_ids]
            else:
                assert pure_new[1] == pure_old[1]
    return calls


@pytest.mark.parametrize("seed", range(8))
def test_seeded_conversations_match_the_legacy_engine(seed: int) -> None:
    """A few thousand messages per seed, in conversations of random length and window."""
    rng = random.Random(seed)
    made = 0
    while made < 1_500:
        made += _run_conversation(rng, rng.randint(1, 300))


@settings(max_examples=150, deadline=None)
@given(seed=st.integers(min_value=0, max_value=2**32 - 1), calls=st.integers(1, 40))
def test_hypothesis_conversations_match_the_legacy_engine(seed: int, calls: int) -> None:
    _run_conversation(random.Random(seed), calls)


def test_a_bad_window_gives_the_same_error() -> None:
    for window in (-1, 1.5, True, "3"):
        new = _outcome(lambda w=window: lean.Buffer([], w), InvalidMessagesError)
        old = _outcome(lambda w=window: legacy.Buffer([], w), LegacyInvalidMessagesError)
        assert new == old and new[0] == "value"


def test_an_invalid_starting_buffer_gives_the_same_error() -> None:
    entries = [{"role": "user", "content": "hi"}, {"role": "robot"}, "x"]
    new = _outcome(lambda: lean.Buffer(entries), InvalidMessagesError)
    old = _outcome(lambda: legacy.Buffer(entries), LegacyInvalidMessagesError)
    assert new == old and new[0] == "invalid"
    assert "buffer[1]" in new[1] and "buffer[2]" in new[1]


def test_the_comparison_can_fail() -> None:
    """A guard on the harness: a buffer that differs by one entry is caught."""
    new_buf = lean.Buffer([{"role": "user", "content": "hi"}])
    old_buf = legacy.Buffer([])
    with pytest.raises(AssertionError):
        _same_step(new_buf, old_buf, {"role": "user", "content": "again"}, new_buf.messages())
