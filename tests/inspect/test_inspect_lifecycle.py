"""Tool-call lifecycle: one row per call id, and the what-if summary's two distinct fates."""

from __future__ import annotations

from pathlib import Path

from flowdrop_core.importers import load_conversation
from flowdrop_core.inspect.lifecycle import lifecycle, what_if
from flowdrop_core.replay import new_timeline, replay_conversation
from flowdrop_core.scenario import ScenarioConfig

IMPORTS = Path(__file__).resolve().parents[2] / "sample_data" / "imports"


def test_one_row_per_call_with_every_fate() -> None:
    life = lifecycle(replay_conversation(load_conversation(IMPORTS / "broken_history.json")))
    assert [(c.call_id, c.status) for c in life] == [
        ("call_a1", "answered"),
        ("call_Rf4m", "healed"),
        ("call_zz9", "orphan result"),
        ("call_late", "replaced"),
    ]
    a1 = life.get("call_a1")
    assert a1 is not None
    assert (a1.declared_step, a1.declared_position, a1.answered_step) == (2, 1, 3)
    assert a1.duplicate_result_steps == [4] and a1.duplicate_turn_steps == [8]
    late = life.get("call_late")
    assert late is not None
    assert (late.placeholder_step, late.replaced_step, late.answered_step) == (12, 13, 13)
    assert life.rows(status="healed")[0]["call id"] == "call_Rf4m"
    assert [r["call id"] for r in life.rows(text="A1")] == ["call_a1"]
    assert life.rows(call_ids=["call_zz9"])[0]["status"] == "orphan result"
    assert life.status_counts() == {"answered": 1, "healed": 1, "replaced": 1, "orphan result": 1}


def test_a_window_tells_a_lost_result_from_an_orphaned_one() -> None:
    conv = load_conversation(IMPORTS / "openai_chat.json")
    base = lifecycle(replay_conversation(conv))
    small = lifecycle(replay_conversation(conv, config=ScenarioConfig(max_messages=2)))
    lq = small.get("call_Lq3aW0xTn9")
    assert lq is not None
    # its turn left at step 5 while its result stayed: orphaned; the result left later: lost
    assert (lq.evicted_step, lq.orphaned_step) == (5, 5)
    assert lq.result_evicted_step is not None and lq.result_evicted_step > 5
    hk = small.get("call_Hk2sN8wQ5t")
    assert hk is not None and hk.orphaned_at_end and hk.status == "result orphaned"
    lines = what_if(base, small, "window 2")
    assert lines[0].startswith("window 2: ")
    assert "call(s) lose their result, the first at step" in lines[0]
    assert "result(s) left orphaned" in lines[0] and "1 still at the last step" in lines[0]
    assert lines[1] == "as made: no call loses its result; no result left orphaned."
    assert what_if(base, base, "same") == ["same: " + base.summary() + "."]


def test_the_starting_buffer_counts_as_step_zero() -> None:
    start = [
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": "", "tool_calls": [{"id": "c0", "function": {}}]},
    ]
    timeline = new_timeline(context={"session_id": "s"}, buffer=start)
    timeline.append_step({"role": "tool", "tool_call_id": "c0", "content": "ok"})
    life = lifecycle(timeline)
    c0 = life.get("c0")
    assert c0 is not None and (c0.declared_step, c0.answered_step) == (0, 1)


def test_a_long_windowed_timeline_has_a_row_per_call(size: int = 4_000) -> None:
    """A row per call, each evicted call orphaned first (one message per step), then lost."""
    msgs: list[dict[str, object]] = []
    for k in range(size // 4):
        cid = f"c{k}"
        msgs += [
            {"role": "user", "content": f"q{k}"},
            {"role": "assistant", "content": "", "tool_calls": [{"id": cid, "function": {}}]},
            {"role": "tool", "tool_call_id": cid, "content": "r"},
            {"role": "assistant", "content": "a"},
        ]
    timeline = new_timeline(config=ScenarioConfig(max_messages=50), context={"session_id": "s"})
    for m in msgs:
        timeline.append_step(m)
    life = lifecycle(timeline)
    assert len(life) == size // 4
    evicted = [c for c in life if c.evicted_step is not None]
    still = [c for c in life if c.orphaned_at_end]
    assert len(still) == 1  # the window of 50 ends just after a call's turn left it
    assert len(life.orphaned()) == len(evicted) == len(life.lost()) + len(still)
    assert all(c.orphaned_step == c.evicted_step for c in evicted)
