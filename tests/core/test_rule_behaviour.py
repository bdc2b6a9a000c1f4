"""Behaviour a user sees, for the holes a mutation run found in the rule core.

Each test states an input and what the library must say about it (the error
text and its index, the event and the call it names, the object a caller can
keep), worked out from GR-MEM and the README's decisions, not from the code.
"""

from __future__ import annotations

import copy
import dataclasses
import pickle
from typing import Any

import pytest
from oracle import naive_append
from pydantic import ValidationError

from flowdrop_core import (
    AppendResult,
    Buffer,
    ExecutionContext,
    InvalidMessagesError,
    append_messages,
    resolve_scope,
    usable_id,
)
from flowdrop_core.importers import load_conversation
from flowdrop_core.replay import replay, replay_conversation
from flowdrop_core.scenario import ScenarioConfig


def after(res: AppendResult) -> list[dict[str, Any]]:
    """The buffer after a pure append (``append_messages`` always returns it)."""
    assert res.messages is not None
    return res.messages


# --------------------------------------------------------------------------- conflicting fields

CALLS = [{"id": "c1", "type": "function", "function": {"name": "search"}}]


def test_identical_calls_at_top_level_and_in_metadata_are_one_turn() -> None:
    msg = {
        "role": "assistant",
        "content": "",
        "tool_calls": CALLS,
        "metadata": {"tool_calls": CALLS},
    }
    res = append_messages([], msg)
    assert res.appended == 1
    assert res.messages == [{"role": "assistant", "content": "", "metadata": {"tool_calls": CALLS}}]
    # ...and it declares c1: a user turn heals it.
    healed = append_messages(res.messages, {"role": "user", "content": "?"})
    assert after(healed)[1]["metadata"] == {"tool_call_id": "c1", "healed": True}


def test_conflicting_calls_at_top_level_and_in_metadata_are_refused() -> None:
    other = [{"id": "c2", "type": "function", "function": {"name": "search"}}]
    msg = {
        "role": "assistant",
        "content": "",
        "tool_calls": CALLS,
        "metadata": {"tool_calls": other},
    }
    with pytest.raises(InvalidMessagesError) as info:
        append_messages([], [{"role": "user", "content": "q"}, msg])
    assert str(info.value) == (
        "1 invalid message: incoming[1]: 'tool_calls' given both at top level and in "
        "metadata with different values"
    )


def test_healed_given_twice_must_agree() -> None:
    both = {"role": "tool", "content": "r", "tool_call_id": "c1", "healed": True}
    agree = {**both, "metadata": {"healed": True}}
    res = append_messages([], agree)
    assert after(res)[0]["metadata"] == {"tool_call_id": "c1", "healed": True}
    disagree = {**both, "metadata": {"healed": False}}
    with pytest.raises(InvalidMessagesError) as info:
        append_messages([], disagree)
    assert str(info.value) == (
        "1 invalid message: incoming[0]: 'healed' given both at top level and in "
        "metadata with different values"
    )


# --------------------------------------------------------------------------- one invalid message


@pytest.mark.parametrize("where", ["live", "pure"])
def test_a_single_invalid_message_object_is_a_named_error_at_index_0(where: str) -> None:
    """A dict given alone (not in a list) is checked like a batch of one."""
    start = [{"role": "user", "content": "kept"}]
    snapshot = copy.deepcopy(start)
    bad = {"role": "robot", "content": "beep"}
    buf = Buffer(start)
    with pytest.raises(InvalidMessagesError) as info:
        if where == "live":
            buf.append(bad)
        else:
            append_messages(start, bad)
    assert [(p.where, p.index) for p in info.value.problems] == [("incoming", 0)]
    assert str(info.value) == (
        "1 invalid message: incoming[0]: unknown role 'robot' "
        "(expected one of system, user, assistant, tool)"
    )
    assert buf.messages() == snapshot and start == snapshot


# --------------------------------------------------------------------------- MEM-2 event


def test_duplicate_turn_names_its_first_call_and_where_that_call_was_declared() -> None:
    start = [
        {"role": "assistant", "content": "", "tool_calls": [{"id": "a"}]},
        {"role": "tool", "content": "A", "tool_call_id": "a"},
        {"role": "assistant", "content": "", "tool_calls": [{"id": "b"}]},
        {"role": "tool", "content": "B", "tool_call_id": "b"},
    ]
    res = append_messages(
        start, {"role": "assistant", "content": "", "tool_calls": [{"id": "b"}, {"id": "a"}]}
    )
    (event,) = res.events
    assert (str(event.kind), event.rule, event.tool_call_id, event.position) == (
        "duplicate_turn",
        "MEM-2",
        "b",
        2,
    )
    assert event.reason == (
        "MEM-2: assistant turn dropped as a duplicate; every call it declares is already "
        "declared (first at buffer position 2 (0-based)). Counts 0."
    )


# --------------------------------------------------------------------------- the result object


def _a_rich_result():
    start = [{"role": "assistant", "content": "", "tool_calls": [{"id": "c1"}]}]
    return append_messages(
        start,
        [
            {"role": "user", "content": "next"},
            {"role": "tool", "content": "x", "tool_call_id": "c1"},
        ],
        max_messages=2,
    )


def test_an_append_result_can_be_pickled_copied_and_printed() -> None:
    res = _a_rich_result()
    assert res.summary() == {"count": 2, "appended": 1, "appended_any": True}
    for clone in (pickle.loads(pickle.dumps(res)), copy.deepcopy(res), copy.copy(res)):
        assert clone.summary() == res.summary()
        assert clone.messages == res.messages
        assert [e.reason for e in clone.events] == [e.reason for e in res.events]
        assert clone.max_messages == 2
    text = repr(res)
    assert text.startswith("AppendResult(count=2, appended=1, appended_any=True")
    assert "placeholder_replaced" in text or "PLACEHOLDER_REPLACED" in text
    assert str(res).startswith("count=2 appended=1 appended_any=True")
    # replace works and leaves the original alone.
    other = res.replace(messages=[])
    assert other.messages == [] and res.messages != []


def test_a_live_append_result_can_be_pickled_too() -> None:
    buf = Buffer(max_messages=1)
    res = buf.append([{"role": "user", "content": "a"}, {"role": "user", "content": "b"}])
    back = pickle.loads(pickle.dumps(res))
    assert (back.count, back.appended, back.messages) == (1, 2, None)
    assert [str(e.kind) for e in back.events] == ["appended", "appended", "evicted"]


# --------------------------------------------------------------------------- frozen identities


def test_an_execution_context_cannot_change_under_a_resolution() -> None:
    ctx = ExecutionContext(user_id="7")
    with pytest.raises(ValidationError):
        ctx.user_id = "8"  # type: ignore[misc]
    assert resolve_scope("user", ctx).resolved_scope_id == "7"
    assert hash(ctx) == hash(ExecutionContext(user_id="7"))


def test_a_scope_resolution_cannot_be_edited_after_the_fact() -> None:
    res = resolve_scope("user", {"user_id": 0})
    assert res.refused
    with pytest.raises(dataclasses.FrozenInstanceError):
        res.refused = False  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        res.resolved_scope_id = "0"  # type: ignore[misc]
    assert (res.refused, res.resolved_scope_id) == (True, "")


# --------------------------------------------------------------------------- replay round trip


@pytest.mark.parametrize("window", [0, 5])
def test_a_replayed_recording_matches_the_oracle_step_by_step(window: int) -> None:
    """The replay of a recording, and of its saved scenario, against the independent model."""
    conv = load_conversation("sample_data/imports/openai_chat.json")
    first = replay_conversation(
        conv, per="turn", refire="results", config=ScenarioConfig(max_messages=window)
    )
    saved = first.to_scenario(name="saved")
    buf: list[dict] = []
    expected = []
    for step in saved.steps:
        batch = step.append if isinstance(step.append, list) else [step.append]
        buf, appended, _ = naive_append(buf, batch, window)
        expected.append((len(buf), appended))
    assert [(r.count, r.appended) for r in first.steps] == expected
    assert [(r.count, r.appended) for r in replay(saved).steps] == expected
    assert first.buffer_after(len(first.steps)) == buf
    assert any(r.refire for r in first.steps), "the recording's results are re-fired"


# --------------------------------------------------------------------------- identifiers


def test_an_id_given_as_a_str_subclass_is_read_as_its_text() -> None:
    """A runtime may hand ids as str subclasses (enums, tagged strings); they are still ids."""

    class Tag(str):
        pass

    assert usable_id(Tag(" u1 ")) == "u1"
    assert usable_id(Tag("0")) is None
    assert resolve_scope("user", {"user_id": Tag("alice")}).resolved_scope_id == "alice"


# --------------------------------------------------------------------------- reading messages


def test_read_only_mappings_are_messages_and_calls_too() -> None:
    """A message or a call given as any mapping (not only a dict) is read like a dict."""
    from types import MappingProxyType

    call = MappingProxyType({"id": "c1", "type": "function", "function": {"name": "f"}})
    turn = MappingProxyType({"role": "assistant", "content": "", "tool_calls": [call]})
    res = append_messages([], [turn, MappingProxyType({"role": "user", "content": "next"})])
    assert res.appended == 2
    assert after(res)[1] == {
        "role": "tool",
        "content": "Tool call was interrupted; no result.",
        "metadata": {"tool_call_id": "c1", "healed": True},
    }


def test_a_result_id_may_be_a_positive_integer_but_not_a_boolean() -> None:
    turn = {"role": "assistant", "content": "", "tool_calls": [{"id": 7}]}
    res = append_messages([turn], [{"role": "tool", "content": "r", "tool_call_id": 7}])
    assert res.appended == 1
    again = append_messages(after(res), {"role": "tool", "content": "r", "tool_call_id": " 7 "})
    assert [str(e.kind) for e in again.events] == ["duplicate_result"]  # 7 and " 7 " are one id
    with pytest.raises(InvalidMessagesError) as info:
        append_messages([], {"role": "tool", "content": "r", "tool_call_id": True})
    assert (
        str(info.value)
        == "1 invalid message: incoming[0]: 'tool_call_id' must be a string, got bool"
    )


def test_only_an_assistant_turn_declares_and_only_a_tool_message_answers() -> None:
    """Calls on a user message and an id on an assistant turn are kept verbatim but mean nothing."""
    start = [
        {"role": "user", "content": "hi", "tool_calls": [{"id": "u1"}]},
        {"role": "assistant", "content": "ok", "tool_call_id": "a1"},
    ]
    res = append_messages(start, {"role": "user", "content": "and?"})
    assert [str(e.kind) for e in res.events] == ["appended"]  # nothing to heal: u1 is no call
    assert after(res)[:2] == start
    res = append_messages(start, {"role": "tool", "content": "r", "tool_call_id": "a1"})
    assert [str(e.kind) for e in res.events] == ["appended"]  # a1 was never answered


def test_typed_models_round_trip_and_read_both_shapes() -> None:
    from flowdrop_core import Message, ToolCall

    call = ToolCall.model_validate({"tool_call_id": " c1 ", "name": "f", "args": {"q": 1}})
    assert (call.id, call.name, call.arguments) == ("c1", "f", {"q": 1})
    assert ToolCall.model_validate(call.model_dump()) == call
    assert ToolCall.model_validate(call) is call
    stored = Message.model_validate(
        {
            "role": "assistant",
            "content": "",
            "metadata": {"tool_calls": [{"id": "c1"}, {"id": "0"}]},
        }
    )
    assert [c.id for c in stored.tool_calls] == ["c1", None]
    assert stored.declared_ids == ("c1",)
    assert Message.model_validate(stored) is stored
    user = Message.model_validate({"role": "user", "content": "x", "tool_calls": [{"id": "u1"}]})
    assert user.declared_ids == ()
    with pytest.raises(ValidationError, match="must be an object"):
        ToolCall.model_validate("c1")


def test_incoming_that_is_neither_a_message_nor_a_list_is_named_at_index_0() -> None:
    for bad, kind in (("hello", "str"), (42, "int"), (None, "NoneType")):
        with pytest.raises(InvalidMessagesError) as info:
            Buffer().append(bad)
        assert str(info.value) == (
            "1 invalid message: incoming[0]: expected a message object or a list of "
            f"messages, got {kind}"
        )
        assert [(p.where, p.index) for p in info.value.problems] == [("incoming", 0)]


def test_a_buffers_length_is_its_entry_count_after_heals_and_evictions() -> None:
    buf = Buffer(
        [{"role": "assistant", "content": "", "tool_calls": [{"id": "c1"}]}], max_messages=3
    )
    assert len(buf) == 1
    buf.append({"role": "user", "content": "?"})  # + placeholder + the user turn
    assert len(buf) == 3 == len(buf.messages())
    buf.append([{"role": "user", "content": "a"}, {"role": "user", "content": "b"}])
    assert len(buf) == 3
    assert buf.open_calls() == []


def test_a_role_given_as_a_str_subclass_is_read_as_its_text() -> None:
    class Role(str):
        pass

    res = append_messages([], {"role": Role("user"), "content": "hi"})
    assert (res.appended, after(res)[0]["role"]) == (1, "user")


def test_a_message_with_every_known_field_still_keeps_its_other_fields() -> None:
    msg = {
        "role": "tool",
        "content": "r",
        "metadata": {"source": "db"},
        "tool_calls": [],
        "tool_call_id": "c1",
        "healed": False,
        "timestamp": "2026-01-01T00:00:00Z",
        "name": "search",
    }
    (row,) = after(append_messages([], msg))
    assert row == {
        "role": "tool",
        "content": "r",
        "metadata": {"source": "db", "tool_calls": [], "tool_call_id": "c1", "healed": False},
        "timestamp": "2026-01-01T00:00:00Z",
        "name": "search",
    }


# --------------------------------------------------------------------------- events and scopes


def test_every_event_explains_itself_and_only_an_append_counts() -> None:
    from flowdrop_core import Event, EventKind

    empty = Buffer().append([])
    assert [(str(e.kind), e.reason) for e in empty.events] == [
        ("pure_read", "MEM-16: empty batch; nothing appended.")
    ]
    late = Event(EventKind.UNSERIALIZED, "MEM-12")
    assert late.reason == (
        "MEM-12: the slot lock was not acquired within the bound; the append ran unserialized "
        "rather than fail or drop the turn (warning)."
    )
    res = append_messages(
        [{"role": "assistant", "content": "", "tool_calls": [{"id": "c1"}]}],
        [{"role": "user", "content": "?"}, {"role": "tool", "content": "x", "tool_call_id": "c1"}],
    )
    assert [(str(e.kind), e.counts) for e in res.events] == [
        ("placeholder_inserted", 0),
        ("appended", 1),
        ("placeholder_replaced", 0),
    ]
    assert sum(e.counts for e in res.events) == res.appended == 1


def test_a_scope_that_is_not_a_name_is_a_configuration_error() -> None:
    from flowdrop_core.context import as_scope

    for bad in (3, None, "planet"):
        with pytest.raises(ValueError, match="unknown memory scope"):
            as_scope(bad)  # type: ignore[arg-type]
    assert as_scope(" User ") == "user"


@pytest.mark.parametrize(
    ("scope", "context", "resolved", "source"),
    [
        ("workflow", {"workflow_id": "w1"}, "w1", "workflow_id"),
        ("workflow", {"workflow_id": "0"}, "", None),
        ("pipeline", {"pipeline_id": 5}, "5", "pipeline_id"),
        ("execution", {}, "", None),
        ("global", {"workflow_id": "w1"}, "", None),
        ("user", {"user_id": "7"}, "7", "user_id"),
        (
            "user",
            {"session_id": "s1", "session_owner_id": "o1", "user_id": "7"},
            "o1",
            "session_owner_id",
        ),
    ],
)
def test_a_resolution_names_the_field_its_id_came_from(
    scope: str, context: dict, resolved: str, source: str | None
) -> None:
    res = resolve_scope(scope, context)
    assert (res.resolved_scope_id, res.source, res.refused) == (resolved, source, False)


@pytest.mark.parametrize(
    ("value", "problem"),
    [
        ("   ", "it is only whitespace"),
        ("\t\n", "it is only whitespace"),
        ("a\ud800", "it holds the lone surrogate U+D800, which is not text"),
        (10**4305, "it has more than 4300 digits"),
    ],
    ids=["spaces", "tab-newline", "lone-surrogate", "huge-number"],
)
def test_an_unusable_id_says_why(value: object, problem: str) -> None:
    """The reason a refusal or an import note shows for an id that is not one (MEM-6, MEM-11)."""
    from flowdrop_core._ids import read_id

    assert (read_id(value).id, read_id(value).problem) == (None, problem)


def test_a_long_value_is_shown_cut_to_its_limit() -> None:
    from flowdrop_core._ids import shown_value

    shown = shown_value("x" * 300)
    assert len(shown) == 40 and shown.endswith("…")
    assert shown_value("short") == "'short'"
