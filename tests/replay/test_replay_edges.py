"""The playground timeline at its edges: nothing to undo, undoing to empty, other stores."""

from __future__ import annotations

from typing import Any

import pytest

from flowdrop_core.replay import ReplayError, new_timeline
from flowdrop_core.scenario import ScenarioConfig
from flowdrop_core.storage import SQLiteStore

CTX = {"session_id": "d"}
SLOT = ("session", "d", "chat_history")


def call_turn(call_id: str) -> dict[str, Any]:
    call = {"id": call_id, "type": "function", "function": {"name": "f", "arguments": "{}"}}
    return {"role": "assistant", "content": None, "tool_calls": [call]}


def test_nothing_to_refire_or_undo_on_an_empty_timeline() -> None:
    tl = new_timeline(ScenarioConfig(), CTX)
    assert tl.refire_last() is None
    assert tl.undo() is None
    assert tl.steps == []


def test_undoing_the_only_step_empties_the_slot() -> None:
    tl = new_timeline(ScenarioConfig(), CTX)
    tl.append_step({"role": "user", "content": "one"})
    assert tl.buffer.store.get(*SLOT)[1] is True
    tl.undo()
    assert tl.buffer.messages(CTX) == []
    assert tl.buffer.store.get(*SLOT) == (None, False)  # deleted, not left as an empty list


def test_sqlite_storage_runs_the_timeline_on_a_temporary_file() -> None:
    tl = new_timeline(ScenarioConfig(storage="sqlite"), CTX)
    tl.append_step({"role": "user", "content": "x"})
    assert isinstance(tl.buffer.store, SQLiteStore)
    assert [m["content"] for m in tl.buffer.messages(CTX)] == ["x"]


def test_unknown_storage_is_a_replay_error_naming_the_field() -> None:
    with pytest.raises(ReplayError) as err:
        new_timeline(ScenarioConfig(storage="redis"))
    assert str(err.value) == "config.storage: unknown storage 'redis' (expected memory or sqlite)"


def test_invalid_starting_buffer_is_a_replay_error_naming_the_entry() -> None:
    with pytest.raises(ReplayError) as err:
        new_timeline(ScenarioConfig(), CTX, buffer=[{"role": "wizard"}])
    assert str(err.value) == (
        "playground: 1 invalid message: buffer[0]: unknown role 'wizard' "
        "(expected one of system, user, assistant, tool)"
    )


def test_a_placeholder_inserted_before_the_new_message_is_in_the_rebuilt_buffer() -> None:
    """MEM-3 heal: the rebuilt buffer puts the placeholder between the turn and the new message."""
    tl = new_timeline(ScenarioConfig(), CTX)
    tl.append_step([call_turn("c1")])
    step = tl.append_step([{"role": "user", "content": "next"}])
    assert (step.appended, step.count_delta, step.mem14_flag) == (1, 2, None)
    rebuilt = list(tl.buffers_after())[-1]
    assert [(m["role"], m["content"]) for m in rebuilt] == [
        ("assistant", None),
        ("tool", "Tool call was interrupted; no result."),
        ("user", "next"),
    ]
    assert rebuilt == tl.buffer.messages(CTX)


@pytest.mark.parametrize(
    "append",
    [{"role": "user", "content": "hi"}, [{"role": "user", "content": "a"}, {"role": "tool"}]],
)
def test_the_step_shortcut_is_model_construct_on_every_field(append: Any) -> None:
    """``replay._step`` writes pydantic's slots itself (the replay's setup cost, one per
    message): it must make exactly what the public ``model_construct`` makes, so a pydantic
    upgrade or a new field of ScenarioStep that changes that fails here."""
    from flowdrop_core.replay import _step
    from flowdrop_core.scenario import ScenarioStep

    made = _step("messages[3]", append)
    public = ScenarioStep.model_construct(label="messages[3]", append=append)
    assert type(made) is ScenarioStep
    assert made.__dict__ == public.__dict__
    assert list(made.__dict__) == list(ScenarioStep.model_fields)
    assert made.__pydantic_fields_set__ == public.__pydantic_fields_set__
    assert made.__pydantic_extra__ == public.__pydantic_extra__
    assert made.__pydantic_private__ == public.__pydantic_private__
    slots = [s for cls in type(public).__mro__ for s in getattr(cls, "__slots__", ())]
    for slot in slots:  # every slot pydantic's model has, set alike
        assert getattr(made, slot, None) == getattr(public, slot, None), slot
    assert made == public
    assert made.model_dump() == public.model_dump()
