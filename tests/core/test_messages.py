"""Reading messages: both shapes, the one call-id reader (MEM-11), and malformed input.

Every malformed shape must raise one clear error naming the index of each bad
message and what is wrong, before any work: the buffer is unchanged.
"""

from __future__ import annotations

import copy
from types import MappingProxyType
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from flowdrop_core import (
    Buffer,
    InvalidMessagesError,
    Message,
    ToolCall,
    append_messages,
    read_call_id,
)
from flowdrop_core.messages import read_message, read_row, to_stored_row
from flowdrop_core.nesting import MAX_MESSAGE_DEPTH

GOOD = {"role": "user", "content": "hi"}


@pytest.mark.parametrize(
    ("call", "expected"),
    [
        ({"tool_call_id": "c1"}, "c1"),
        ({"id": "call_1", "type": "function", "function": {"name": "f"}}, "call_1"),
        ({"tool_call_id": "  c1  "}, "c1"),
        ({"tool_call_id": "", "id": "call_2"}, "call_2"),
        ({"tool_call_id": "0"}, None),
        ({"id": "   "}, None),
        ({"id": 0}, None),
        ({"id": 12}, "12"),
        ({"name": "no id at all"}, None),
    ],
)
def test_read_call_id_under_either_spelling(call: dict, expected: str | None) -> None:
    assert read_call_id(call) == expected


@pytest.mark.parametrize(
    ("bad", "problem"),
    [
        ("just text", "incoming[1]: expected a message object, got str"),
        ({"content": "no role"}, "incoming[1]: missing 'role'"),
        ({"role": ["user"], "content": "x"}, "incoming[1]: 'role' must be a string, got list"),
        ({"role": {"name": "user"}}, "incoming[1]: 'role' must be a string, got dict"),
        (
            {"role": "operator", "content": "x"},
            "incoming[1]: unknown role 'operator' (expected one of system, user, assistant, tool)",
        ),
        (
            {"role": "assistant", "tool_calls": {"id": "c1"}},
            "incoming[1]: 'tool_calls' must be a list, got dict",
        ),
        (
            {"role": "assistant", "tool_calls": ["c1"]},
            "incoming[1]: tool_calls[0] must be an object, got str",
        ),
        (
            {"role": "assistant", "metadata": {"tool_calls": "c1"}},
            "incoming[1]: 'tool_calls' must be a list, got str",
        ),
        (
            {"role": "user", "content": 42},
            "incoming[1]: 'content' must be text, a list of parts, an object or null, got int",
        ),
        (
            {"role": "user", "content": "x", "metadata": []},
            "incoming[1]: 'metadata' must be an object, got list",
        ),
        (
            {"role": "tool", "content": "x", "tool_call_id": ["c1"]},
            "incoming[1]: 'tool_call_id' must be a string, got list",
        ),
        (
            {"role": "tool", "content": "x", "healed": "yes"},
            "incoming[1]: 'healed' must be true or false, got 'yes'",
        ),
        (
            {
                "role": "tool",
                "content": "x",
                "tool_call_id": "a",
                "metadata": {"tool_call_id": "b"},
            },
            "incoming[1]: 'tool_call_id' given both at top level and in metadata with different values",
        ),
    ],
)
def test_malformed_message_fails_the_whole_call_and_changes_nothing(
    bad: object, problem: str
) -> None:
    buffer = [{"role": "user", "content": "before"}]
    snapshot = copy.deepcopy(buffer)
    batch = [GOOD, bad, GOOD]
    with pytest.raises(InvalidMessagesError) as info:
        append_messages(buffer, batch)
    assert str(info.value) == f"1 invalid message: {problem}"
    assert [p.index for p in info.value.problems] == [1]
    assert buffer == snapshot

    live = Buffer(buffer)
    with pytest.raises(InvalidMessagesError):
        live.append(batch)
    assert live.messages() == snapshot


def test_every_bad_message_is_named_in_one_error() -> None:
    buf = Buffer([GOOD])
    with pytest.raises(InvalidMessagesError) as info:
        buf.append([{"role": "nobody"}, GOOD, 7])
    assert str(info.value) == (
        "2 invalid messages: incoming[0]: unknown role 'nobody' (expected one of system, user, "
        "assistant, tool); incoming[2]: expected a message object, got int"
    )
    assert buf.messages() == [GOOD]


def test_incoming_must_be_a_message_or_a_list() -> None:
    with pytest.raises(
        InvalidMessagesError, match=r"expected a message object or a list of messages, got str"
    ):
        append_messages([], "hello")


def test_a_bad_buffer_entry_is_named_as_such() -> None:
    with pytest.raises(InvalidMessagesError, match=r"buffer\[1\]: missing 'role'"):
        append_messages([GOOD, {"content": "?"}], GOOD)


def test_bad_window_is_rejected() -> None:
    for bad in (-1, 1.5, True, "3"):
        with pytest.raises(ValueError, match="max_messages must be an integer >= 0"):
            Buffer(max_messages=bad)  # type: ignore[arg-type]


def test_stored_row_and_flat_shapes_read_the_same() -> None:
    flat = {"role": "assistant", "content": None, "tool_calls": [{"id": "c1", "type": "function"}]}
    stored = {
        "role": "assistant",
        "content": None,
        "metadata": {"tool_calls": [{"id": "c1", "type": "function"}]},
    }
    assert (
        Message.model_validate(flat).declared_ids
        == Message.model_validate(stored).declared_ids
        == ("c1",)
    )
    result = Message.model_validate(
        {"role": "tool", "content": "x", "metadata": {"tool_call_id": " c1 "}}
    )
    assert result.tool_call_id == "c1"
    assert ToolCall.model_validate({"tool_call_id": "c2", "name": "search"}).id == "c2"
    with pytest.raises(ValueError, match="unknown role"):
        Message.model_validate({"role": "robot"})


def test_engine_writes_stored_rows_and_keeps_extra_fields() -> None:
    res = append_messages(
        [], {"role": "tool", "content": "x", "tool_call_id": "c1", "name": "search", "timestamp": 5}
    )
    assert res.messages == [
        {
            "role": "tool",
            "content": "x",
            "metadata": {"tool_call_id": "c1"},
            "name": "search",
            "timestamp": 5,
        }
    ]


@pytest.mark.parametrize(
    ("call", "expected"),
    [
        ({"id": "c", "function": {"name": "f", "arguments": "{}"}}, ("f", "{}")),
        ({"tool_call_id": "c", "name": "f", "arguments": {"q": 1}}, ("f", {"q": 1})),
        ({"id": "c", "name": "f", "args": {"q": 1}}, ("f", {"q": 1})),
        ({"id": "c", "name": "f", "input": {"q": 1}}, ("f", {"q": 1})),
        ({"id": "c"}, (None, None)),
    ],
    ids=["openai", "buffer row", "langchain", "anthropic", "bare"],
)
def test_read_call_function_under_every_spelling(call: dict, expected: tuple) -> None:
    from flowdrop_core.messages import read_call_function

    assert read_call_function(call) == expected
    assert (ToolCall.model_validate(call).name, ToolCall.model_validate(call).arguments) == expected


_VALUES: dict[str, list[Any]] = {
    "role": ["user", "assistant", "tool", "system", "robot", 3, None],
    "content": ["hi", "", None, [], {}, [{"type": "text"}], 2.5],
    "tool_calls": [
        [{"id": "c1", "type": "function"}],
        [{"tool_call_id": " c2 "}, {"id": "c2"}, {"id": "0"}],
        [{"tool_call_id": 0, "id": 7}],
        [{"tool_call_id": "c3", "id": "c4"}, {"id": "\uff43\uff15"}, {"id": "call_6"}],
        [],
        None,
        {"id": "c1"},
        ["c1"],
    ],
    "tool_call_id": ["c1", " c1 ", "\uff43\uff11", "0", "", 7, -1, 0, True, 1.5, None, ["c1"]],
    "healed": [True, False, None, "yes", 1],
    "timestamp": ["2026-11-30T12:00:00Z"],
    "name": ["search"],
}


@st.composite
def _any_message(draw: st.DrawFn) -> dict:
    """A message with a random subset of fields at either level, valid or not."""
    msg: dict = {}
    meta: dict = {}
    for key in draw(st.lists(st.sampled_from(sorted(_VALUES)), unique=True)):
        value = draw(st.sampled_from(_VALUES[key]))
        if key in ("tool_calls", "tool_call_id", "healed") and draw(st.booleans()):
            meta[key] = value
            if draw(st.integers(0, 4)) == 0:
                msg[key] = copy.deepcopy(value)  # both levels, maybe equal
        else:
            msg[key] = value
    if len(meta) > 0 or draw(st.booleans()):
        msg["metadata"] = meta if draw(st.integers(0, 9)) else "not an object"
    return msg


@settings(max_examples=600, deadline=None)
@given(msg=_any_message())
def test_read_row_is_read_message_then_to_stored_row(msg: dict) -> None:
    """The engine's one-pass reader agrees with the reference pair on every input."""
    before = copy.deepcopy(msg)
    got = read_row(msg)
    parsed = read_message(msg)
    if isinstance(parsed, str):
        assert got == parsed  # the same problem text
    else:
        assert got == [to_stored_row(parsed), parsed.calls, parsed.result_id, parsed.healed, 0]
        assert got[0]["metadata"] is not msg.get("metadata")  # a copy: the input stays unshared
    assert msg == before


def test_read_row_handles_other_mappings_like_dicts() -> None:
    msg = {"role": "tool", "content": "x", "tool_call_id": " c1 ", "timestamp": 1}
    row = read_row(MappingProxyType(msg))
    assert row == read_row(msg)
    assert row[0] == {
        "role": "tool",
        "content": "x",
        "metadata": {"tool_call_id": " c1 "},
        "timestamp": 1,
    }
    assert row[2] == "c1"


@pytest.mark.parametrize("shape", ["provider-flat", "stored row"])
def test_call_ids_are_read_the_same_on_the_engines_short_path(shape: str) -> None:
    """MEM-11 through the engine: ``tool_call_id`` wins when a call spells two usable
    ids, and a fullwidth id is the same id however a turn or a result spells it,
    while a plain ASCII name (the engine reads it without normalizing) is itself."""
    calls = [{"tool_call_id": "c3", "id": "c4"}, {"id": "\uff43\uff15"}, {"id": "call_6"}]
    turn: dict = {"role": "assistant", "content": None, "tool_calls": calls}
    if shape == "stored row":
        turn = {"role": "assistant", "content": None, "metadata": {"tool_calls": calls}}
    buf = Buffer()
    buf.append(turn)
    assert buf.open_calls() == ["c3", "c5", "call_6"]
    answered = buf.append({"role": "tool", "content": "r", "tool_call_id": "\uff43\uff15"})
    assert answered.appended == 1
    assert buf.open_calls() == ["c3", "call_6"]
    again = buf.append({"role": "tool", "content": "r", "tool_call_id": "c5"})
    assert again.appended == 0  # MEM-1: the same id, already answered
    assert buf.append({"role": "tool", "content": "r", "tool_call_id": "c4"}).appended == 1
    assert buf.open_calls() == ["c3", "call_6"]  # c4 was never declared


_OPENAI_CALL = {"id": "call_1", "type": "function", "function": {"name": "f", "arguments": "{}"}}


def _row(role: str, content: object = None, **meta: object) -> dict:
    return {"role": role, "content": content, "metadata": meta}


@pytest.mark.parametrize(
    ("msg", "expected"),
    [
        # role and content only, the commonest shape
        ({"role": "user", "content": "hi"}, [_row("user", "hi"), (), None, False, 0]),
        ({"role": "assistant", "content": None}, [_row("assistant"), (), None, False, 0]),
        ({"role": "system"}, [_row("system"), (), None, False, 0]),
        (
            {"role": "user", "content": [{"type": "text", "text": "hi"}]},
            [_row("user", [{"type": "text", "text": "hi"}]), (), None, False, 0],
        ),
        ({"role": "user", "content": {}}, [_row("user", {}), (), None, False, 0]),
        # provider-flat tool results: the id as given in the row, its usable form answered
        (
            {"role": "tool", "content": "r", "tool_call_id": "call_1"},
            [_row("tool", "r", tool_call_id="call_1"), (), "call_1", False, 0],
        ),
        (
            {"role": "tool", "content": "r", "tool_call_id": " c1 "},
            [_row("tool", "r", tool_call_id=" c1 "), (), "c1", False, 0],
        ),
        (
            {"role": "tool", "content": "r", "tool_call_id": "\uff43\uff11"},
            [_row("tool", "r", tool_call_id="\uff43\uff11"), (), "c1", False, 0],
        ),
        (
            {"role": "tool", "content": "r", "tool_call_id": 7},
            [_row("tool", "r", tool_call_id=7), (), "7", False, 0],
        ),
        (
            {"role": "tool", "content": "r", "tool_call_id": "0"},
            [_row("tool", "r", tool_call_id="0"), (), None, False, 0],
        ),
        (
            {"role": "tool", "tool_call_id": "call_1"},
            [_row("tool", tool_call_id="call_1"), (), "call_1", False, 0],
        ),
        (  # only a tool message answers a call
            {"role": "user", "content": "r", "tool_call_id": "call_1"},
            [_row("user", "r", tool_call_id="call_1"), (), None, False, 0],
        ),
        # provider-flat assistant turns: usable ids in order, without repeats
        (
            {"role": "assistant", "content": None, "tool_calls": [_OPENAI_CALL]},
            [_row("assistant", tool_calls=[_OPENAI_CALL]), ("call_1",), None, False, 0],
        ),
        (
            {
                "role": "assistant",
                "content": "",
                "tool_calls": [{"id": "c1"}, {"id": "c1"}, {"id": "0"}, {"tool_call_id": "c2"}],
            },
            [
                _row(
                    "assistant",
                    "",
                    tool_calls=[{"id": "c1"}, {"id": "c1"}, {"id": "0"}, {"tool_call_id": "c2"}],
                ),
                ("c1", "c2"),
                None,
                False,
                0,
            ],
        ),
        (  # only an assistant turn declares calls
            {"role": "user", "content": "x", "tool_calls": [_OPENAI_CALL]},
            [_row("user", "x", tool_calls=[_OPENAI_CALL]), (), None, False, 0],
        ),
        (
            {"role": "assistant", "tool_calls": []},
            [_row("assistant", tool_calls=[]), (), None, False, 0],
        ),
        (  # a null list of calls is no calls, and no field of the row
            {"role": "assistant", "content": None, "tool_calls": None},
            [_row("assistant"), (), None, False, 0],
        ),
        (
            {"role": "tool", "content": "r", "tool_call_id": None},
            [_row("tool", "r"), (), None, False, 0],
        ),
        # stored rows, and either shape with other fields kept as they are
        (
            {"role": "assistant", "content": None, "metadata": {"tool_calls": [_OPENAI_CALL]}},
            [_row("assistant", tool_calls=[_OPENAI_CALL]), ("call_1",), None, False, 0],
        ),
        (
            {"role": "tool", "content": "r", "metadata": {"tool_call_id": "c1", "healed": True}},
            [_row("tool", "r", tool_call_id="c1", healed=True), (), "c1", True, 0],
        ),
        (
            {"role": "user", "content": "x", "metadata": {}, "timestamp": 5},
            [{**_row("user", "x"), "timestamp": 5}, (), None, False, 0],
        ),
        (
            {"role": "tool", "content": "r", "tool_call_id": "c1", "healed": True, "name": "s"},
            [{**_row("tool", "r", tool_call_id="c1", healed=True), "name": "s"}, (), "c1", True, 0],
        ),
        (
            {"role": "assistant", "tool_calls": [{"id": "c1"}], "healed": False, "timestamp": 1},
            [
                {**_row("assistant", tool_calls=[{"id": "c1"}], healed=False), "timestamp": 1},
                ("c1",),
                None,
                False,
                0,
            ],
        ),
    ],
)
def test_read_row_reads_each_common_shape(msg: dict, expected: list) -> None:
    """Each shape the engine reads in one pass gives its stored row, the ids it
    declares or answers, its healed marking and a free last slot, exactly as the
    reference pair does."""
    before = copy.deepcopy(msg)
    got = read_row(msg)
    assert got == expected
    parsed = read_message(msg)
    assert not isinstance(parsed, str), parsed
    assert got == [to_stored_row(parsed), parsed.calls, parsed.result_id, parsed.healed, 0]
    assert msg == before


@pytest.mark.parametrize(
    ("msg", "problem"),
    [
        (
            {"role": "tool", "content": "r", "tool_call_id": True},
            "'tool_call_id' must be a string, got bool",
        ),
        (
            {"role": "tool", "content": "r", "tool_call_id": 1.5},
            "'tool_call_id' must be a string, got float",
        ),
        ({"role": "assistant", "tool_calls": "c1"}, "'tool_calls' must be a list, got str"),
        ({"role": "assistant", "tool_calls": ""}, "'tool_calls' must be a list, got str"),
        (  # the same refusals when the row has other fields or keeps calls in metadata
            {"role": "assistant", "tool_calls": "", "timestamp": 1},
            "'tool_calls' must be a list, got str",
        ),
        (
            {"role": "assistant", "metadata": {"tool_calls": {}}},
            "'tool_calls' must be a list, got dict",
        ),
        (
            {"role": "assistant", "metadata": {"tool_calls": ({"id": "c1"},)}},
            "'tool_calls' must be a list, got tuple",
        ),
        ({"role": "assistant", "tool_calls": {}}, "'tool_calls' must be a list, got dict"),
        (
            {"role": "assistant", "tool_calls": ({"id": "c1"},)},
            "'tool_calls' must be a list, got tuple",
        ),
        (
            {"role": "assistant", "tool_calls": [{"id": "c1"}, "c2"]},
            "tool_calls[1] must be an object, got str",
        ),
        (
            {"role": "user", "content": 3},
            "'content' must be text, a list of parts, an object or null, got int",
        ),
        ({"role": "user", "content": "x", "healed": 1}, "'healed' must be true or false, got 1"),
        (
            {"role": "user", "content": "x", "healed": True, "metadata": {"healed": False}},
            "'healed' given both at top level and in metadata with different values",
        ),
        (
            {"role": "robot", "content": "x"},
            "unknown role 'robot' (expected one of system, user, assistant, tool)",
        ),
    ],
)
def test_read_row_refuses_what_read_message_refuses_with_its_text(msg: dict, problem: str) -> None:
    assert read_row(msg) == problem == read_message(msg)


def test_typed_message_carries_what_was_read() -> None:
    """The typed model exposes each field read from either shape, and the input as given."""
    stored = {
        "role": "tool",
        "content": "r",
        "metadata": {"tool_call_id": " c1 ", "healed": True},
        "timestamp": 3,
    }
    msg = Message.model_validate(stored)
    assert (msg.role, msg.content, msg.tool_calls, msg.tool_call_id, msg.healed) == (
        "tool",
        "r",
        (),
        "c1",
        True,
    )
    assert msg.raw == stored
    turn = Message.model_validate(
        {"role": "assistant", "content": "", "tool_calls": [_OPENAI_CALL]}
    )
    assert (turn.content, turn.healed, turn.tool_call_id) == ("", False, None)
    assert turn.tool_calls == (ToolCall(id="call_1", name="f", arguments="{}", raw=_OPENAI_CALL),)
    assert turn.declared_ids == ("call_1",)


def test_typed_message_built_without_validation_has_empty_defaults() -> None:
    """``model_construct`` (trusted data, no validation) fills what is not given:
    no content, no calls, no result id, not healed."""
    msg = Message.model_construct(role="assistant", raw={})
    assert (msg.content, msg.tool_calls, msg.tool_call_id, msg.healed) == (None, (), None, False)
    assert msg.declared_ids == ()
    call = ToolCall.model_construct(id="c1", raw={"id": "c1"})
    assert (call.name, call.arguments) == (None, None)


def test_typed_messages_and_calls_are_immutable() -> None:
    from pydantic import ValidationError

    msg = Message.model_validate({"role": "assistant", "tool_calls": [{"id": "c1"}]})
    with pytest.raises(ValidationError, match="frozen"):
        msg.role = "user"  # type: ignore[misc]
    with pytest.raises(ValidationError, match="frozen"):
        msg.tool_calls[0].id = "c2"  # type: ignore[misc]
    assert msg.declared_ids == ("c1",)
    assert Message.model_validate(msg) is msg  # an instance is taken as it is
    assert ToolCall.model_validate(msg.tool_calls[0]) is msg.tool_calls[0]


@pytest.mark.parametrize(
    ("calls", "ids"),
    [
        ([{"id": "call_1", "type": "function"}], ("call_1",)),  # a plain ASCII name
        ([{"id": "\uff43\uff11"}], ("c1",)),  # not ASCII: normalized (MEM-11)
        ([{"id": " c1 "}], ("c1",)),  # not a plain name: trimmed
        ([{"id": "0"}], ()),  # no usable id: not a declaration
        ([{"id": 7}], ("7",)),  # not a string
        ([{"tool_call_id": "c3", "id": "c4"}], ("c3",)),  # tool_call_id wins
        ([MappingProxyType({"id": "c1"})], ("c1",)),  # a mapping that is not a dict
        ([{"id": "a"}, {"id": "b"}], ("a", "b")),  # declaration order
        ([{"id": "a"}, {"id": "a"}], ("a",)),  # without repeats
        ([{"id": "0"}, {"id": "b"}], ("b",)),  # an id-less call declares nothing, the rest do
    ],
)
@pytest.mark.parametrize("where", ["provider-flat", "stored row"])
def test_a_turns_call_ids_are_read_like_the_reference_pair(
    calls: list, ids: tuple[str, ...], where: str
) -> None:
    """A turn's declared ids: the engine's reader gives the ids MEM-11 gives."""
    if where == "provider-flat":
        turn: dict = {"role": "assistant", "content": None, "tool_calls": calls}
    else:
        turn = {"role": "assistant", "content": None, "metadata": {"tool_calls": calls}}
    parsed = read_message(turn)
    assert not isinstance(parsed, str)
    assert read_row(turn) == [to_stored_row(parsed), ids, None, False, 0]
    assert parsed.calls == ids
    # Not a turn: a tool message's calls declare nothing, however they are spelled.
    other = {**turn, "role": "tool"}
    assert read_row(other)[1] == ()


def test_a_one_call_list_whose_call_is_not_an_object_is_refused() -> None:
    turn = {"role": "assistant", "content": None, "tool_calls": ["c1"]}
    assert read_row(turn) == "tool_calls[0] must be an object, got str"


def _deep_value(levels: int) -> Any:
    """A value ``levels`` containers deep (lists and objects by turns)."""
    value: Any = "leaf"
    for n in range(levels):
        value = {"a": value} if n % 2 else [value]
    return value


def _call_with(place: str, value: Any) -> dict[str, Any]:
    """The common provider call with ``value`` put at ``place``."""
    call: dict[str, Any] = {"id": "c1", "type": "function", "function": {"name": "f"}}
    call["function"]["arguments"] = "{}"
    if place.startswith("function."):
        call["function"][place.removeprefix("function.")] = value
    else:
        call[place] = value
    return call


_CALL_PLACES = [
    "id",
    "type",
    "function",
    "function.name",
    "function.arguments",
    "function.extra",
    "extra",
]


@pytest.mark.parametrize("place", _CALL_PLACES)
@pytest.mark.parametrize("where", ["provider-flat", "stored row"])
def test_a_call_nested_too_deep_is_refused_wherever_the_depth_hides(place: str, where: str) -> None:
    """The engine's short path reads a common call without a walk: a value nested
    past the bound anywhere in a call (a field of the call or of its function) is
    refused as :func:`read_message` refuses it, and one at the bound is accepted.
    The message is level 1, its call list level 2 (3 under ``metadata``)."""
    calls = [{"id": "c0", "type": "function", "function": {"name": "g", "arguments": "{}"}}]
    for levels, refused in ((MAX_MESSAGE_DEPTH + 1, True), (MAX_MESSAGE_DEPTH, False)):
        at = (5 if place.startswith("function.") else 4) + (where == "stored row")
        call = _call_with(place, _deep_value(levels - at + 1))
        if where == "provider-flat":
            turn: dict = {"role": "assistant", "content": None, "tool_calls": [*calls, call]}
        else:
            turn = {"role": "assistant", "content": None, "metadata": {"tool_calls": [call]}}
        got = read_row(turn)
        expected = read_message(turn)
        if refused:
            assert isinstance(got, str) and f"nested more than {MAX_MESSAGE_DEPTH}" in got
            assert got == expected
            with pytest.raises(InvalidMessagesError, match="nested more than"):
                Buffer().append(turn)
        else:
            assert not isinstance(expected, str), expected
            assert got == [to_stored_row(expected), expected.calls, None, False, 0]


@pytest.mark.parametrize(
    "shape",
    [
        {"role": "user"},
        {"role": "tool", "tool_call_id": "c1"},
        {"role": "assistant", "tool_calls": [_OPENAI_CALL]},
        {"role": "user", "timestamp": 1},
    ],
    ids=["role and content", "tool result", "turn with calls", "other fields"],
)
def test_content_nested_too_deep_is_refused_in_every_shape_the_engine_reads(shape: dict) -> None:
    """Content is level 2: a list or object nesting past the bound is refused in each
    shape :func:`read_row` reads in one pass, with :func:`read_message`'s text."""
    for levels, refused in ((MAX_MESSAGE_DEPTH, True), (MAX_MESSAGE_DEPTH - 1, False)):
        msg = {**shape, "content": _deep_value(levels)}
        got = read_row(msg)
        expected = read_message(msg)
        if refused:
            assert isinstance(got, str) and got == expected
            assert got.startswith(f"nested more than {MAX_MESSAGE_DEPTH} levels (at content.")
        else:
            assert not isinstance(expected, str), expected
            assert got == [to_stored_row(expected), expected.calls, expected.result_id, False, 0]
