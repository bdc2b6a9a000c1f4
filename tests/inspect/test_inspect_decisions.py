"""Decision kinds per step: counts, filter, previous / next, row cells."""

from __future__ import annotations

from collections import Counter

from flowdrop_core.events import EventKind
from flowdrop_core.importers import load_conversation
from flowdrop_core.inspect.decisions import (
    Decision,
    DecisionIndex,
    decision_cells,
    step_decisions,
)
from flowdrop_core.replay import new_timeline, replay, replay_conversation
from flowdrop_core.scenario import Scenario, ScenarioConfig, ScenarioStep

LONG = "sample_data/long_conversation.jsonl"

CALL = {
    "role": "assistant",
    "content": "",
    "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{}"}}],
}
RESULT = {"role": "tool", "content": "r", "tool_call_id": "c1"}


def _timeline(steps: list, window: int = 0, context: dict | None = None):
    return replay(
        Scenario(
            name="t",
            config=ScenarioConfig(max_messages=window),
            context=context if context is not None else {"session_id": "s"},
            steps=[ScenarioStep(append=s) for s in steps],
        )
    )


def test_every_kind_is_found_on_the_step_that_holds_it() -> None:
    tl = _timeline(
        [
            {"role": "user", "content": "a"},  # 1 appended
            CALL,  # 2 appended
            {"role": "user", "content": "b"},  # 3 appended + placeholder inserted
            RESULT,  # 4 placeholder replaced
            RESULT,  # 5 duplicate result
            CALL,  # 6 duplicate turn
            {"role": "user", "content": ""},  # 7 pure read
            {"role": "user", "content": "c"},  # 8 appended + evicted (window 4), hidden append
        ],
        window=4,
    )
    idx = DecisionIndex(tl.steps)
    assert idx.steps_with(Decision.PLACEHOLDER_INSERTED) == [3]
    assert idx.steps_with(Decision.PLACEHOLDER_REPLACED) == [4]
    assert idx.steps_with(Decision.DUPLICATE_RESULT) == [5]
    assert idx.steps_with(Decision.DUPLICATE_TURN) == [6]
    assert idx.steps_with(Decision.PURE_READ) == [7]
    assert idx.steps_with(Decision.EVICTED) == [8]
    assert idx.steps_with(Decision.HIDDEN_APPEND) == [8]
    assert idx.steps_with(Decision.APPENDED) == [1, 2, 3, 8]
    assert idx.steps_with(None) == list(range(1, 9))
    counts = {c.kind: (c.steps, c.decisions) for c in idx.counts()}
    assert len(counts) == len(Decision)  # zeros included, every kind listed
    assert counts[Decision.APPENDED] == (4, 4)
    assert counts[Decision.REFUSED] == (0, 0)


def test_counts_agree_with_the_events_of_a_long_recording() -> None:
    tl = replay_conversation(load_conversation(LONG))
    idx = DecisionIndex(tl.steps)
    events = Counter(str(ev.kind) for r in tl.steps for ev in r.events)
    counts = {c.kind: c.decisions for c in idx.counts()}
    for kind in EventKind:
        assert counts[Decision(str(kind))] == events.get(str(kind), 0)
    assert counts[Decision.DUPLICATE_RESULT] + counts[Decision.DUPLICATE_TURN] == 73
    assert counts[Decision.PLACEHOLDER_INSERTED] == 7


def test_next_and_previous_jump_between_steps_of_a_kind() -> None:
    tl = replay_conversation(load_conversation(LONG))
    idx = DecisionIndex(tl.steps)
    dups = [r.step for r in tl.steps if step_decisions(r)[Decision.DUPLICATE_RESULT]]
    assert idx.next_step("duplicate_result", 0) == dups[0]
    assert idx.next_step("duplicate_result", dups[0]) == dups[1]
    assert idx.previous_step("duplicate_result", dups[1]) == dups[0]
    assert idx.previous_step("duplicate_result", dups[0]) is None
    assert idx.next_step("duplicate_result", dups[-1]) is None
    assert idx.next_step("duplicate_result", dups[3] - 1) == dups[3]  # from between two
    assert idx.position("duplicate_result", dups[2]) == (3, len(dups))
    assert idx.position("duplicate_result", dups[2] + 1) is None


def test_update_reads_only_new_steps_and_rebuilds_after_undo() -> None:
    tl = new_timeline(context={"session_id": "s"})
    idx = DecisionIndex()
    tl.append_step({"role": "user", "content": "a"})
    idx.update(tl.steps)
    tl.append_step({"role": "user", "content": ""})
    idx.update(tl.steps)
    assert idx.steps_with("pure_read") == [2] and len(idx) == 2
    tl.undo()
    tl.append_step({"role": "user", "content": "b"})
    idx.update(tl.steps)  # same length, a different last step: rebuilt
    assert idx.steps_with("pure_read") == []
    assert idx.steps_with("appended") == [1, 2]


def test_refusal_and_its_reason_are_in_the_row_cells() -> None:
    tl = _timeline([{"role": "user", "content": "hi"}], context={"user_id": 0})
    tl2 = replay(
        tl.scenario.model_copy(
            update={"config": ScenarioConfig(scope="user"), "context": {"user_id": 0}}
        )
    )
    cells = decision_cells(tl2.steps[0])
    assert cells["decisions"] == "refused"
    assert "MEM-7" in cells["rules"]
    assert "refused because" in cells["reasons"]


def test_cells_hold_every_reason_in_full() -> None:
    tl = _timeline([CALL, {"role": "user", "content": "go on"}], window=1)
    cells = decision_cells(tl.steps[1])
    reasons = cells["reasons"].split("\n")
    assert len(reasons) == len(tl.steps[1].events) + 1  # + the MEM-14 flag
    assert all(ev.reason in reasons for ev in tl.steps[1].events)
    assert cells["rules"].split(", ")[:2] == ["MEM-3", "MEM-14"]
    assert "placeholder inserted" in cells["decisions"] and "evicted" in cells["decisions"]
