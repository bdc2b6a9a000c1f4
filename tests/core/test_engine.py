"""Engine decisions the spec examples do not cover: events, edge cases, cost shape."""

from __future__ import annotations

import json
from typing import Any

from flowdrop_core import Buffer, EventKind, append_messages, apply_events


def kinds(res) -> list[str]:
    return [str(e.kind) for e in res.events]


def test_result_without_usable_id_is_appended_with_a_warning_event() -> None:
    res = append_messages([], [{"role": "tool", "content": "?", "tool_call_id": "0"}] * 2)
    assert res.appended == 2 and res.count == 2
    assert kinds(res) == ["appended", "idless_result", "appended", "idless_result"]
    assert res.events[1].rule == "MEM-11"
    assert "cannot be deduplicated" in res.events[1].reason


def test_call_without_usable_id_is_not_a_declaration() -> None:
    buf = Buffer([{"role": "assistant", "content": "", "tool_calls": [{"id": "0"}, {"id": ""}]}])
    assert buf.open_calls() == []
    res = buf.append({"role": "user", "content": "next"})
    assert kinds(res) == ["appended"]  # nothing healed
    # MEM-2 cannot call such a turn a duplicate: it declares nothing.
    again = buf.append({"role": "assistant", "content": "", "tool_calls": [{"id": "0"}]})
    assert again.appended == 1


def test_empty_user_message_is_a_pure_read() -> None:
    buf = Buffer([{"role": "assistant", "content": "", "tool_calls": [{"id": "c1"}]}])
    empty: str | list[Any] | None
    for empty in ("", "   ", None, []):
        res = buf.append({"role": "user", "content": empty})
        assert (res.appended, res.count, kinds(res)) == (0, 1, ["pure_read"])
        assert res.events[0].rule == "MEM-16"
    assert buf.open_calls() == ["c1"], "a pure read must not heal"


def test_empty_batch_reports_a_pure_read() -> None:
    res = append_messages([{"role": "user", "content": "x"}], [])
    assert res.summary() == {"count": 1, "appended": 0, "appended_any": False}
    assert kinds(res) == ["pure_read"] and res.events[0].incoming_index is None


def test_duplicate_within_one_batch() -> None:
    batch = [
        {"role": "assistant", "content": None, "tool_calls": [{"id": "c1"}]},
        {"role": "tool", "content": "a", "tool_call_id": "c1"},
        {"role": "tool", "content": "a", "tool_call_id": "c1"},
        {"role": "assistant", "content": None, "tool_calls": [{"id": "c1"}]},
    ]
    res = append_messages([], batch)
    assert kinds(res) == ["appended", "appended", "duplicate_result", "duplicate_turn"]
    assert [e.incoming_index for e in res.events] == [0, 1, 2, 3]
    assert res.events[2].position == 1 and res.events[3].position == 0


def test_healed_incoming_message_never_replaces_a_placeholder() -> None:
    buf = Buffer([{"role": "assistant", "content": "", "tool_calls": [{"id": "c1"}]}])
    buf.append({"role": "user", "content": "go on"})
    res = buf.append(
        {"role": "tool", "content": "also healed", "tool_call_id": "c1", "healed": True}
    )
    assert kinds(res) == ["duplicate_result"]
    assert buf.messages()[1]["content"] == "Tool call was interrupted; no result."


def test_placeholders_keep_the_declaration_order_of_their_turn() -> None:
    turn = {
        "role": "assistant",
        "content": "",
        "tool_calls": [{"id": "z"}, {"id": "a"}, {"id": "m"}],
    }
    buf = Buffer([turn, {"role": "tool", "content": "a done", "tool_call_id": "a"}])
    res = buf.append({"role": "user", "content": "next"})
    assert [e.tool_call_id for e in res.events if e.kind is EventKind.PLACEHOLDER_INSERTED] == [
        "z",
        "m",
    ]
    ids = [
        m.get("metadata", {}).get("tool_call_id") or m.get("tool_call_id") for m in buf.messages()
    ]
    assert ids == [None, "z", "m", "a", None]


def test_appended_then_evicted_in_one_call_still_counts() -> None:
    res = append_messages(
        [], [{"role": "user", "content": str(i)} for i in range(5)], max_messages=2
    )
    assert res.summary() == {"count": 2, "appended": 5, "appended_any": True}
    assert kinds(res).count("evicted") == 3


def test_healing_grows_the_buffer_without_an_append() -> None:
    """Why appended is never the change in size (GR-MEM step 7)."""
    buf = Buffer([{"role": "assistant", "content": "", "tool_calls": [{"id": "c1"}, {"id": "c2"}]}])
    res = buf.append([{"role": "user", "content": "?"}])
    assert (res.count, res.appended) == (4, 1)  # grew by 3, one append


def test_evicting_a_result_reopens_a_call_still_declared() -> None:
    # A verbatim buffer can hold a result ahead of its call; once the window
    # evicts that result, the call has no result anywhere and heals (MEM-3).
    buf = Buffer(
        [
            {"role": "tool", "content": "early", "tool_call_id": "c1"},
            {"role": "assistant", "content": "", "tool_calls": [{"id": "c1"}]},
        ],
        max_messages=2,
    )
    res = buf.append({"role": "system", "content": "note"})
    assert kinds(res) == ["appended", "evicted"]
    assert buf.open_calls() == ["c1"]


def test_buffer_over_its_cap_is_trimmed_by_the_next_append() -> None:
    entries = [{"role": "user", "content": str(i)} for i in range(5)]
    before = list(entries)
    res = append_messages(entries, {"role": "user", "content": ""}, max_messages=3)
    assert kinds(res) == ["pure_read", "evicted", "evicted"]
    assert res.count == 3 and res.appended == 0
    assert apply_events(before, res.events) == res.messages


def test_buffer_append_leaves_messages_unset_and_events_explain() -> None:
    buf = Buffer(max_messages=1)
    res = buf.append([{"role": "user", "content": "a"}, {"role": "user", "content": "b"}])
    assert res.messages is None
    assert res.changed and res.tally() == {"appended": 2, "evicted": 1}
    assert all(e.reason.startswith(e.rule + ":") for e in res.events)
    dumped = json.loads(res.to_json())
    assert dumped["appended_any"] is True and dumped["count"] == 1
    assert dumped == res.to_dict()
    assert [ev.to_dict()["kind"] for ev in res.events] == ["appended", "appended", "evicted"]


def test_the_fast_result_is_like_one_built_by_hand() -> None:
    """The engine makes AppendResult without ``__init__``; it must equal one built by hand."""
    from flowdrop_core import AppendResult

    fast = Buffer(max_messages=1).append(
        [{"role": "user", "content": "a"}, {"role": "user", "content": "b"}]
    )
    slow = AppendResult(
        count=fast.count,
        appended=fast.appended,
        appended_any=fast.appended_any,
        messages=None,
        events=fast.events,
        max_messages=1,
    )
    assert fast == slow
    assert fast.to_dict() == slow.to_dict()
    assert fast.fields().keys() == slow.fields().keys() == set(AppendResult.FIELDS)
    assert fast.replace(count=9).count == 9 and fast.count == 1
    assert AppendResult.from_dict(fast.to_dict()).appended == 2


def _unread_result():
    """A fresh result nobody has read yet: one append, one eviction, one duplicate."""
    buf = Buffer(
        [{"role": "tool", "content": "r", "tool_call_id": "c1"}],
        max_messages=1,
    )
    return buf.append(
        [
            {"role": "tool", "content": "again", "tool_call_id": "c1"},
            {"role": "user", "content": "next"},
        ]
    )


def _eager(res):
    """The same result built by hand, from its dict."""
    from flowdrop_core import AppendResult

    return AppendResult.from_dict(res.to_dict())


def test_a_result_is_built_only_when_read_and_then_like_any_result() -> None:
    """Buffer.append defers the Event objects until ``events`` is read.

    Every way of reading a fresh result must see its fields, lazy ones
    included: fields, dict, JSON, equality, copy, pickle, repr, replace, and
    an assignment of ``messages`` (what append_messages does).
    """
    import copy
    import pickle

    from flowdrop_core import AppendResult, Event

    res = _unread_result()
    assert type(res._events) is list  # the engine's decisions: no Event built before a read
    assert res.changed and res.tally() == {"duplicate_result": 1, "appended": 1, "evicted": 1}
    raw = [tuple(d) for d in res.decisions()]
    assert type(res._events) is list  # changed, tally and decisions() do not build the events
    assert raw == [tuple(ev) for ev in res.events]  # the events, laid out the same
    assert list(res.decisions()) == list(res.events)  # once built, the events themselves

    expected = {
        "count": 1,
        "appended": 1,
        "appended_any": True,
        "messages": None,
        "max_messages": 1,
    }
    reads = {
        "field": lambda r: {k: getattr(r, k) for k in expected},
        "dict": lambda r: {k: r.to_dict()[k] for k in expected},
        "json": lambda r: {
            k: getattr(AppendResult.from_dict(json.loads(r.to_json())), k) for k in expected
        },
        "copy": lambda r: {k: getattr(copy.copy(r), k) for k in expected},
        "deepcopy": lambda r: {k: getattr(copy.deepcopy(r), k) for k in expected},
        "pickle": lambda r: {k: getattr(pickle.loads(pickle.dumps(r)), k) for k in expected},
        "fields": lambda r: {k: v for k, v in r.fields().items() if k in expected},
        "replace": lambda r: {k: getattr(r.replace(), k) for k in expected},
        "equal": lambda r: expected if r == _eager(_unread_result()) else {},
        "field names": lambda r: expected if set(r.to_dict()) == set(AppendResult.FIELDS) else {},
    }
    for name, read in reads.items():
        assert read(_unread_result()) == expected, name
    assert repr(_unread_result()).startswith("AppendResult(count=1, appended=1,")
    events = _unread_result().events
    assert [type(ev) for ev in events] == [Event] * 3
    assert [str(ev.kind) for ev in events] == ["duplicate_result", "appended", "evicted"]
    assert copy.deepcopy(_unread_result()).events == events

    res = _unread_result()
    res.messages = [{"role": "user", "content": "next", "metadata": {}}]
    assert res.count == 1 and res.messages == [{"role": "user", "content": "next", "metadata": {}}]
    assert res == AppendResult.from_dict(res.to_dict())
    assert isinstance(res, AppendResult) and type(res) is AppendResult


def _turn(*ids: str) -> dict:
    return {"role": "assistant", "content": None, "tool_calls": [{"id": c} for c in ids]}


def _result(cid: str) -> dict:
    return {"role": "tool", "content": f"{cid} done", "tool_call_id": cid}


def _shown(buf: Buffer) -> list[str]:
    """Each entry as role:call-ids-or-result-id, placeholders marked with '*'.

    Entries given to the constructor are kept as given (flat here); the engine
    writes stored rows: read the fields from either level."""
    out = []
    for m in buf.messages():
        meta = {**m, **m.get("metadata", {})}
        if m["role"] == "tool":
            out.append(f"tool:{meta['tool_call_id']}" + ("*" if meta.get("healed") else ""))
        elif meta.get("tool_calls"):
            out.append("turn:" + ",".join(c["id"] for c in meta["tool_calls"]))
        else:
            out.append(f"{m['role']}:{m['content']}")
    return out


def _events(res) -> list[tuple[str, int | None, str | None]]:
    return [(str(e.kind), e.position, e.tool_call_id) for e in res.events]


def test_one_open_call_heals_right_after_its_turn_and_moves_what_follows() -> None:
    """MEM-3 with a single open call (the engine's short path): the placeholder goes
    right after its declaring turn, and every later entry's position moves on by one."""
    buf = Buffer(
        [
            {"role": "user", "content": "q"},
            _turn("a", "b"),
            _result("a"),
            _turn("c"),
            _result("c"),
        ]
    )
    assert buf.open_calls() == ["b"]
    res = buf.append({"role": "user", "content": "next"})
    assert _events(res) == [("placeholder_inserted", 2, "b"), ("appended", 6, None)]
    assert res.summary() == {"count": 7, "appended": 1, "appended_any": True}
    assert res.events[0].entry == {
        "role": "tool",
        "content": "Tool call was interrupted; no result.",
        "metadata": {"tool_call_id": "b", "healed": True},
    }
    assert _shown(buf) == [
        "user:q",
        "turn:a,b",
        "tool:b*",
        "tool:a",
        "turn:c",
        "tool:c",
        "user:next",
    ]
    assert buf.open_calls() == []
    # The entries after the placeholder are found at their new positions.
    assert _events(buf.append(_result("c"))) == [("duplicate_result", 5, "c")]
    assert _events(buf.append(_result("a"))) == [("duplicate_result", 3, "a")]
    assert _events(buf.append(_turn("c"))) == [("duplicate_turn", 4, "c")]
    assert _events(buf.append(_result("b"))) == [("placeholder_replaced", 2, "b")]
    # And a later append and heal count from there.
    buf.append(_turn("d"))
    res = buf.append({"role": "user", "content": "again"})
    assert _events(res) == [("placeholder_inserted", 8, "d"), ("appended", 9, None)]
    assert len(buf) == 10


def test_one_open_call_in_the_last_turn_heals_at_the_end_then_evicts_in_order() -> None:
    buf = Buffer([{"role": "user", "content": "q"}, _turn("x")], max_messages=3)
    res = buf.append({"role": "user", "content": "next"})
    assert _events(res) == [
        ("placeholder_inserted", 2, "x"),
        ("appended", 3, None),
        ("evicted", 0, None),
    ]
    assert _shown(buf) == ["turn:x", "tool:x*", "user:next"]
    assert _events(buf.append(_result("x"))) == [("placeholder_replaced", 1, "x")]
    res = buf.append(_turn("y"))
    assert _events(res) == [("appended", 3, None), ("evicted", 0, None)]
    assert _shown(buf) == ["tool:x", "user:next", "turn:y"]


def test_open_calls_of_several_turns_heal_after_each_turn_in_declaration_order() -> None:
    """MEM-3 with several open calls over several turns (the engine's general path)."""
    buf = Buffer(
        [
            {"role": "user", "content": "q"},
            _turn("x"),
            _turn("y", "z", "w"),
            _result("z"),
            _turn("v"),
        ]
    )
    assert buf.open_calls() == ["x", "y", "w", "v"]
    res = buf.append({"role": "user", "content": "next"})
    assert _events(res) == [
        ("placeholder_inserted", 2, "x"),
        ("placeholder_inserted", 4, "y"),
        ("placeholder_inserted", 5, "w"),
        ("placeholder_inserted", 8, "v"),
        ("appended", 9, None),
    ]
    assert _shown(buf) == [
        "user:q",
        "turn:x",
        "tool:x*",
        "turn:y,z,w",
        "tool:y*",
        "tool:w*",
        "tool:z",
        "turn:v",
        "tool:v*",
        "user:next",
    ]
    assert buf.open_calls() == []
    assert _events(buf.append(_result("z"))) == [("duplicate_result", 6, "z")]
    assert _events(buf.append(_turn("v"))) == [("duplicate_turn", 7, "v")]
    assert _events(buf.append(_result("y"))) == [("placeholder_replaced", 4, "y")]
    assert _events(buf.append(_turn("u"))) == [("appended", 10, None)]
    assert _events(buf.append(_turn("u"))) == [("duplicate_turn", 10, "u")]


def _moved_window() -> Buffer:
    """A buffer whose window has moved: [user:3, turn:a, turn:b,c, tool:c, turn:d, tool:d]."""
    buf = Buffer(max_messages=6)
    for k in range(4):
        buf.append({"role": "user", "content": str(k)})
    for msg in (_turn("a"), _turn("b", "c"), _result("c"), _turn("d"), _result("d")):
        buf.append(msg)
    assert _shown(buf) == ["user:3", "turn:a", "turn:b,c", "tool:c", "turn:d", "tool:d"]
    return buf


def test_one_open_call_heals_at_its_position_once_the_window_has_moved() -> None:
    buf = _moved_window()
    buf.append(_result("a"))  # evicts user:3; only b is open now (the short path)
    assert buf.open_calls() == ["b"]
    res = buf.append({"role": "user", "content": "next"})
    assert _events(res) == [
        ("placeholder_inserted", 2, "b"),
        ("appended", 7, None),
        ("evicted", 0, None),
        ("evicted", 0, None),
    ]
    assert _shown(buf) == ["tool:b*", "tool:c", "turn:d", "tool:d", "tool:a", "user:next"]
    assert _events(buf.append(_result("b"))) == [("placeholder_replaced", 0, "b")]
    assert _events(buf.append(_result("d"))) == [("duplicate_result", 3, "d")]


def test_several_open_calls_heal_at_their_positions_once_the_window_has_moved() -> None:
    """The general path, with an answered turn (d) among the entries it re-lays."""
    buf = _moved_window()
    assert buf.open_calls() == ["a", "b"]
    res = buf.append({"role": "user", "content": "next"})
    assert _events(res) == [
        ("placeholder_inserted", 2, "a"),
        ("placeholder_inserted", 4, "b"),
        ("appended", 8, None),
        ("evicted", 0, None),
        ("evicted", 0, None),
        ("evicted", 0, "a"),  # a's placeholder went with its turn
    ]
    assert _shown(buf) == ["turn:b,c", "tool:b*", "tool:c", "turn:d", "tool:d", "user:next"]
    assert buf.open_calls() == []
    assert _events(buf.append(_result("b"))) == [("placeholder_replaced", 1, "b")]
    assert _events(buf.append(_turn("d"))) == [("duplicate_turn", 3, "d")]


def test_positions_stay_right_when_an_idless_result_is_the_oldest_entry() -> None:
    """MEM-11: an id-less result appended and later left oldest by the window still
    anchors positions: a re-fired result is located at the stored one."""
    buf = Buffer([{"role": "user", "content": "a"}], max_messages=2)
    buf.append({"role": "tool", "content": "no id"})
    buf.append({"role": "tool", "content": "r", "tool_call_id": "c9"})  # evicts "a"
    assert [m["content"] for m in buf.messages()] == ["no id", "r"]
    result = buf.append({"role": "tool", "content": "again", "tool_call_id": "c9"})
    (event,) = result.events
    assert (event.kind, event.position, event.tool_call_id) == ("duplicate_result", 1, "c9")


def test_a_real_result_replaces_the_first_of_two_placeholders_for_its_id() -> None:
    """MEM-10 on a loaded buffer holding two healed placeholders for one id: the first
    (oldest) is replaced in place, the other stays."""
    from flowdrop_core.messages import make_placeholder

    turn = {"role": "assistant", "content": None, "tool_calls": [{"id": "c1", "type": "function"}]}
    entries = [
        turn,
        make_placeholder("c1"),
        {"role": "user", "content": "x"},
        make_placeholder("c1"),
    ]
    buf = Buffer(entries)
    result = buf.append({"role": "tool", "content": "real", "tool_call_id": "c1"})
    (event,) = result.events
    assert (event.kind, event.position) == ("placeholder_replaced", 1)
    contents = [m["content"] for m in buf.messages()]
    assert contents[1] == "real" and contents[3] == make_placeholder("c1")["content"]
