"""Compare, don't rewrite: the same steps under other settings, lined up step by step."""

from __future__ import annotations

import pytest

from flowdrop_core.importers import load_conversation
from flowdrop_core.inspect.compare import (
    Settings,
    call_fates,
    compare,
    plan_keys,
    scenario_appends,
    with_settings,
)
from flowdrop_core.replay import conversation_to_scenario, replay
from flowdrop_core.scenario import Scenario, ScenarioStep

OPENAI = "sample_data/imports/openai_chat.json"


def _scenario() -> Scenario:
    return conversation_to_scenario(load_conversation(OPENAI))


def test_unchanged_settings_differ_nowhere() -> None:
    sc = _scenario()
    base = Settings.of(sc)
    _, cmp = compare(sc, base, base)
    assert cmp.differences == [] and cmp.changed == []
    assert "report the same" in cmp.summary()


def test_a_window_marks_exactly_the_steps_whose_report_changes() -> None:
    sc = _scenario()
    base = Settings.of(sc)
    small = Settings(2, base.scope, base.key, base.context)
    other, cmp = compare(sc, base, small)
    made = replay(sc)
    expected = [
        r.step
        for r, o in zip(made.steps, other.steps, strict=True)
        if (r.count, r.appended) != (o.count, o.appended) or len(r.events) != len(o.events)
    ]
    assert expected and cmp.differing_steps == expected
    first = cmp.differences[0]
    assert "count" in first.fields and first.fields["count"][1] <= 2
    assert cmp.changed == ["max_messages"]
    row = first.row()
    assert row["count (made)"] == str(first.fields["count"][0])


def test_a_refusing_identity_is_a_comparison_not_a_rewrite() -> None:
    sc = _scenario()
    base = Settings.of(sc)
    zero = Settings(base.max_messages, "user", base.key, {"user_id": 0})
    other, cmp = compare(sc, base, zero)
    assert all(r.refused for r in other.steps)
    assert cmp.differing_steps == [r.step for r in replay(sc).steps]
    assert "refused" in cmp.differences[0].fields
    assert not any(r.refused for r in replay(sc).steps)  # the made timeline is untouched


@pytest.mark.parametrize("refire", ["none", "results", "steps"])
def test_plan_keys_follow_replays_own_plan(refire: str) -> None:
    sc = _scenario()
    keys = plan_keys(scenario_appends(sc), refire)  # type: ignore[arg-type]
    tl = replay(sc, refire=refire)  # type: ignore[arg-type]
    assert len(keys) == len(tl.steps)
    for (number, again), record in zip(keys, tl.steps, strict=True):
        assert record.label.startswith("re-fire: ") == bool(again)
        assert (
            record.incoming == [sc.steps[number - 1].append]
            or record.incoming == sc.steps[number - 1].append
        )


def test_re_fire_steps_line_up_by_origin_and_extra_steps_are_listed() -> None:
    sc = _scenario()
    base = Settings.of(sc)
    other, cmp = compare(sc, base, Settings(**{**base.__dict__, "refire": "results"}))
    extra = [d for d in cmp.differences if d.base_step is None]
    tools = sum(1 for s in sc.steps if s.append.get("role") == "tool")  # type: ignore[union-attr]
    assert len(extra) == tools and len(other.steps) == len(sc.steps) + tools
    assert all(d.key[1] == 1 for d in extra)


def test_would_a_window_have_kept_this_call() -> None:
    call = {
        "role": "assistant",
        "content": "",
        "tool_calls": [{"id": "c1", "function": {"name": "f", "arguments": "{}"}}],
    }
    steps = [call, {"role": "tool", "content": "r", "tool_call_id": "c1"}] + [
        {"role": "user", "content": str(i)} for i in range(3)
    ]
    sc = Scenario(
        name="w", context={"session_id": "s"}, steps=[ScenarioStep(append=m) for m in steps]
    )
    base = Settings.of(sc)
    small = Settings(3, base.scope, base.key, base.context)
    other, _ = compare(sc, base, small)
    made = replay(with_settings(sc, base))
    fates = call_fates(made.buffer_after(5), other.buffer_after(5))
    assert [(f.call_id, f.in_base, f.in_other) for f in fates] == [("c1", True, False)]
    assert fates[0].verdict == "evicted with its result under the other settings"
    assert fates[0].answered_base and not fates[0].answered_other
    early = call_fates(made.buffer_after(2), other.buffer_after(2))
    assert early[0].verdict == "kept under both"
