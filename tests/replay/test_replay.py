"""Replay and timelines: steps rebuilt from events match a direct run of the engine."""

from __future__ import annotations

import random
from typing import Any

import pytest

from flowdrop_core import append_messages
from flowdrop_core.importers import load_conversation
from flowdrop_core.replay import (
    ReplayError,
    check,
    conversation_to_scenario,
    new_timeline,
    replay,
    replay_conversation,
)
from flowdrop_core.scenario import Expectation, Scenario, ScenarioConfig, ScenarioStep
from flowdrop_core.storage import MemoryStore

LONG = "sample_data/long_conversation.jsonl"


def direct_buffers(messages: list[dict], window: int) -> list[list[dict]]:
    """The buffer after each one-message append, by the pure engine."""
    out: list[list[dict]] = []
    entries: list[dict] = []
    for msg in messages:
        entries = append_messages(entries, msg, window).messages or []
        out.append(entries)
    return out


@pytest.mark.parametrize("window", [0, 7])
def test_rebuilt_buffers_match_a_direct_run(window: int) -> None:
    conv = load_conversation(LONG)
    messages = conv.messages[:400]
    conv.messages[:] = messages
    conv.origins[:] = conv.origins[:400]
    timeline = replay_conversation(conv, config=ScenarioConfig(max_messages=window))
    timeline.checkpoint_every = 16  # exercise checkpoints on a short run
    expected = direct_buffers(messages, window)
    for step in random.Random(3).sample(range(1, 401), 40):
        assert timeline.buffer_after(step) == expected[step - 1]
        assert timeline.steps[step - 1].count == len(expected[step - 1])
        before = expected[step - 2] if step > 1 else []
        assert timeline.steps[step - 1].count_before == len(before)
    assert timeline.steps[0].origins == ["line 1"]


def test_checkpoints_are_used_for_long_slots() -> None:
    scenario = Scenario(
        name="many",
        context={"session_id": "s"},
        steps=[ScenarioStep(append={"role": "user", "content": str(i)}) for i in range(600)],
    )
    timeline = replay(scenario)
    slot = ("session", "s", "chat_history")
    assert sorted(timeline._checkpoints[slot]) == [256, 512]
    assert [m["content"] for m in timeline.buffer_after(600)] == [str(i) for i in range(600)]
    # Rebuilt in place from a checkpoint, the list is still the caller's own: changing it
    # changes neither the checkpoint nor a later rebuild.
    mine = timeline.buffer_after(520)
    mine.clear()
    assert [m["content"] for m in timeline.buffer_after(530)] == [str(i) for i in range(530)]
    assert len(timeline.buffer_before(520)) == 519


def test_json_lines_carry_the_buffer_after_each_step() -> None:
    scenario = Scenario(
        name="two",
        config=ScenarioConfig(max_messages=1),
        context={"session_id": "s"},
        steps=[ScenarioStep(append={"role": "user", "content": c}) for c in "ab"],
    )
    lines = list(replay(scenario).to_json_lines(include_messages=True))
    import json

    second = json.loads(lines[1])
    assert second["messages"] == [{"role": "user", "content": "b", "metadata": {}}]
    assert (second["count"], second["appended"], second["mem14_flag"]) == (1, 1, "hidden append")
    assert [e["kind"] for e in second["events"]] == ["appended", "evicted"]


def test_json_lines_reuse_encoded_entries_without_changing_them() -> None:
    import json

    conv = load_conversation(LONG)
    del conv.messages[300:], conv.origins[300:]
    timeline = replay_conversation(conv, config=ScenarioConfig(max_messages=9), refire="results")
    for step, line in enumerate(timeline.to_json_lines(include_messages=True), start=1):
        data = json.loads(line)
        assert data["step"] == step
        assert data["messages"] == json.loads(json.dumps(timeline.buffer_after(step)))
    bare = json.loads(next(timeline.to_json_lines()))  # the default: the delta only
    assert "messages" not in bare and bare["count"] == 1


def test_refire_modes() -> None:
    msgs: list[dict[str, Any]] = [
        {"role": "assistant", "content": None, "tool_calls": [{"id": "c1"}]},
        {"role": "tool", "content": "r", "tool_call_id": "c1"},
    ]
    scenario = Scenario(
        name="r", context={"session_id": "s"}, steps=[ScenarioStep(append=m) for m in msgs]
    )
    steps = replay(scenario, refire="steps").steps
    assert [(s.appended, s.refire) for s in steps] == [(1, False), (1, False), (0, True), (0, True)]
    steps = replay(scenario, refire="results").steps
    assert [(s.appended, s.count, s.refire) for s in steps] == [
        (1, 1, False),
        (1, 2, False),
        (0, 2, True),
    ]
    assert steps[2].tally == {"duplicate_result": 1}


def test_playground_timeline_append_refire_undo() -> None:
    tl = new_timeline(ScenarioConfig(max_messages=3), {"session_id": "demo"})
    for text in ("one", "two", "three"):
        tl.append_step({"role": "user", "content": text})
    step = tl.append_step({"role": "user", "content": "four"})
    assert (step.count, step.appended, step.appended_any, step.mem14_flag) == (
        3,
        1,
        True,
        "hidden append",
    )
    again = tl.refire_last()
    assert again is not None and again.refire and again.label == "re-fire of step 4"
    undone = tl.undo()
    assert undone is again and len(tl.steps) == 4
    assert [m["content"] for m in tl.buffer.messages({"session_id": "demo"})] == [
        "two",
        "three",
        "four",
    ]
    tl.undo()
    assert [m["content"] for m in tl.buffer.messages({"session_id": "demo"})] == [
        "one",
        "two",
        "three",
    ]


def test_tagged_before_and_after() -> None:
    buffer = [
        {"role": "assistant", "content": "", "tool_calls": [{"id": "c1"}, {"id": "c2"}]},
        {
            "role": "tool",
            "content": "Tool call was interrupted; no result.",
            "tool_call_id": "c1",
            "healed": True,
        },
    ]
    scenario = Scenario(
        name="t",
        config=ScenarioConfig(max_messages=3),
        context={"session_id": "s"},
        buffer=buffer,
        steps=[
            ScenarioStep(
                append=[
                    {"role": "tool", "content": "real", "tool_call_id": "c1"},
                    {"role": "tool", "content": "real", "tool_call_id": "c1"},
                    {"role": "user", "content": "next"},
                ]
            )
        ],
    )
    before, after, dropped = replay(scenario).tagged(1)
    assert [tag for _, tag in before] == ["evicted", "replaced"]
    # c2's placeholder goes directly after its turn, ahead of c1's real result;
    # the window of 3 then evicts the turn itself.
    assert [tag for _, tag in after] == ["placeholder inserted", "replaced", "new"]
    assert [str(e.kind) for e in dropped] == ["duplicate_result"]


def test_refused_steps_and_separate_slots() -> None:
    scenario = Scenario(
        name="users",
        config=ScenarioConfig(scope="user"),
        steps=[
            ScenarioStep(append={"role": "user", "content": "a1"}, context={"user_id": "alice"}),
            ScenarioStep(append={"role": "user", "content": "b1"}, context={"user_id": "bob"}),
            ScenarioStep(append={"role": "user", "content": "x"}, context={"user_id": 0}),
            ScenarioStep(append={"role": "user", "content": "a2"}, context={"user_id": "alice"}),
        ],
    )
    tl = replay(scenario)
    assert [(s.count, s.refused, s.resolved_scope_id) for s in tl.steps] == [
        (1, False, "alice"),
        (1, False, "bob"),
        (0, True, ""),
        (2, False, "alice"),
    ]
    assert [m["content"] for m in tl.buffer_after(4)] == ["a1", "a2"]
    assert tl.buffer_after(3) == [] and tl.steps[2].tally == {"refused": 1}


def test_a_store_that_already_holds_a_buffer_is_respected() -> None:
    store = MemoryStore()
    store.set("session", "s", "chat_history", [{"role": "user", "content": "old"}])
    tl = new_timeline(ScenarioConfig(), {"session_id": "other"}, store=store)
    step = tl.append_step({"role": "user", "content": "new"}, context={"session_id": "s"})
    assert (step.count_before, step.count) == (1, 2)
    assert [m["content"] for m in tl.buffer_before(1)] == ["old"]


def test_bad_step_fails_before_any_step_runs() -> None:
    scenario = Scenario(
        name="bad",
        context={"session_id": "s"},
        steps=[
            ScenarioStep(append={"role": "user", "content": "fine"}),
            ScenarioStep(append={"content": "no role"}),
        ],
    )
    with pytest.raises(
        ReplayError, match=r"bad: step 2: 1 invalid message: incoming\[0\]: missing 'role'"
    ):
        replay(scenario)


def test_round_trip_through_a_saved_scenario() -> None:
    conv = load_conversation("sample_data/imports/openai_chat.json")
    first = replay_conversation(conv, per="turn", refire="results")
    saved = first.to_scenario(name="saved")
    again = replay(saved)
    assert again.rows() == first.rows()
    assert check(saved).passed


def test_check_reports_each_mismatch() -> None:
    scenario = Scenario(
        name="m",
        context={"session_id": "s"},
        steps=[ScenarioStep(append={"role": "user", "content": "hi"})],
        expect=[Expectation(count=2, appended=1, appended_any=False)],
    )
    result = check(scenario)
    assert not result.passed
    assert [str(m) for m in result.mismatches] == [
        "m: step 1: count: expected 2, got 1",
        "m: step 1: appended_any: expected false, got true",
    ]


def test_per_turn_groups_a_recorded_turn_into_one_append() -> None:
    conv = load_conversation("sample_data/imports/openai_chat.json")
    scenario = conversation_to_scenario(conv, per="turn")
    assert len(scenario.steps) == len(conv.turns)
    assert sum(len(s.append) for s in scenario.steps) == len(conv.messages)  # type: ignore[arg-type]


def test_a_refire_survives_saving_and_replaying() -> None:
    tl = new_timeline(ScenarioConfig(), {"session_id": "s"})
    tl.append_step({"role": "tool", "content": "r", "tool_call_id": "c1"})
    tl.refire_last()
    saved = tl.to_scenario(name="saved")
    assert [s.refire for s in saved.steps] == [False, True]
    again = replay(saved)
    assert [(s.refire, s.appended) for s in again.steps] == [(False, 1), (True, 0)]


def test_starting_buffer_goes_to_the_first_slot_that_resolves() -> None:
    scenario = Scenario(
        name="seed",
        buffer=[{"role": "user", "content": "a"}, {"role": "user", "content": "b"}],
        steps=[ScenarioStep(append={"role": "user", "content": "c"}, context={"session_id": "s1"})],
        expect=[Expectation(count=3)],
    )
    assert check(scenario).passed
    orphan = scenario.model_copy(
        update={"steps": [ScenarioStep(append={"role": "user", "content": "c"})]}
    )
    with pytest.raises(ReplayError, match="the starting buffer has no slot"):
        replay(orphan)


def test_provider_expectations_are_checked() -> None:
    from flowdrop_core.scenario import ProviderExpectation

    scenario = Scenario(
        name="p",
        context={"session_id": "s"},
        steps=[ScenarioStep(append={"role": "tool", "content": "early", "tool_call_id": "c1"})],
        expect=[Expectation(provider=ProviderExpectation(messages=[], dropped=0))],
    )
    result = check(scenario)
    assert [str(m) for m in result.mismatches] == ["p: step 1: provider.dropped: expected 0, got 1"]


def test_checkpoints_of_a_growing_buffer_stay_linear_and_rebuild_every_step() -> None:
    """Checkpoints come at most every count/2 steps, and every step's buffer is still exact."""
    n = 3000
    scenario = Scenario(
        name="growing",
        context={"session_id": "s"},
        steps=[ScenarioStep(append={"role": "user", "content": str(i)}) for i in range(n)],
    )
    timeline = replay(scenario)
    timeline_marks = sorted(timeline._checkpoints[("session", "s", "chat_history")])
    assert timeline_marks == [256, 512, 1023, 2045]  # about doubling: O(n) entries in all
    for step in (1, 255, 256, 700, 1024, 2047, 2999, 3000):
        assert [m["content"] for m in timeline.buffer_after(step)] == [str(i) for i in range(step)]
    buffers = timeline.buffers_after()
    first = next(buffers)
    first.append({"role": "user", "content": "mine"})  # the caller's own list
    assert [m["content"] for m in next(buffers)] == ["0", "1"]


def test_json_lines_are_strict_json_even_for_a_library_callers_nan() -> None:
    """``--json`` output is JSON; a ``NaN`` a caller put in a message is an error, not text."""
    timeline = new_timeline(ScenarioConfig())
    timeline.append_step({"role": "user", "content": "hi", "score": float("nan")})
    with pytest.raises(ValueError, match="JSON compliant"):
        list(timeline.to_json_lines(include_messages=True))
