"""The count column: Δcount in parts, and which rows the MEM-14 highlight picks."""

from __future__ import annotations

from pathlib import Path

from flowdrop_core.importers import load_conversation
from flowdrop_core.inspect.decisions import DecisionIndex
from flowdrop_core.inspect.rows import count_flag, count_parts, nav_row
from flowdrop_core.replay import replay_conversation
from flowdrop_core.scenario import ScenarioConfig

DATA = Path(__file__).resolve().parents[2] / "sample_data"


def test_every_row_adds_up_and_a_full_window_does_not_light_every_row() -> None:
    conv = load_conversation(DATA / "long_conversation.jsonl")
    timeline = replay_conversation(conv, config=ScenarioConfig(max_messages=50))
    for record in timeline.steps:
        parts = count_parts(record)
        assert parts.delta == record.count_delta
        assert nav_row(record)["parts"] == parts.text()
    flagged = [r.step for r in timeline.steps if count_flag(r)]
    index = DecisionIndex(timeline.steps)
    expected = index.steps_with_any(
        ["placeholder_inserted", "placeholder_replaced", "duplicate_result", "duplicate_turn"]
    )
    assert flagged == expected
    assert len(flagged) == 80  # of 5,002 rows; the old "hidden append" flag lit 4,879
    assert sum(1 for r in timeline.steps if r.mem14_flag) == 4879
    full = next(
        r for r in timeline.steps if r.count == 50 and r.appended == 1 and r.count_delta == 0
    )
    assert count_flag(full) is None and count_parts(full).text() == "1 + 0 - 1"


def test_a_heal_and_a_replacement_stand_out() -> None:
    timeline = replay_conversation(load_conversation(DATA / "imports" / "broken_history.json"))
    heal = timeline.steps[5]  # the user turn after the unanswered call: +2 for 1 appended
    assert (heal.count_delta, heal.appended) == (2, 1)
    assert heal.mem14_flag is None  # the old flag missed it
    assert count_parts(heal).text() == "1 + 1 - 0"
    assert (count_flag(heal) or "").startswith("heal: 1 placeholder(s) grew the count")
    replaced = timeline.steps[12]
    assert (replaced.count_delta, replaced.appended) == (0, 0)
    assert "replaced a placeholder in place" in (count_flag(replaced) or "")
    assert count_flag(timeline.steps[0]) is None
