"""Exports at size: the long sample's timeline JSON lines with bounded memory."""

from __future__ import annotations

import json
import tracemalloc
from pathlib import Path

from flowdrop_core.importers import load_conversation
from flowdrop_core.replay import replay_conversation
from flowdrop_core.scenario import ScenarioConfig
from inspector_ui.export import BUFFER_EXPORT_ENTRIES, buffer_entries, timeline_json_lines

LONG = Path(__file__).resolve().parents[2] / "sample_data" / "long_conversation.jsonl"
MB = 1024 * 1024


def test_long_sample_json_lines_export_peak_memory_is_bounded():
    """The export the Replay page offers for the long sample, unbounded window, under 200 MB."""
    conv = load_conversation(LONG.read_bytes(), name=LONG.name)
    timeline = replay_conversation(
        conv, per="message", config=ScenarioConfig(scope="session", max_messages=0)
    )
    assert buffer_entries(timeline) > BUFFER_EXPORT_ENTRIES  # no with-buffers export offered
    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        data = timeline_json_lines(timeline)
        peak = tracemalloc.get_traced_memory()[1] - base
    finally:
        tracemalloc.stop()
    lines = data.decode().splitlines()
    assert len(lines) == len(timeline.steps)
    first, last = json.loads(lines[0]), json.loads(lines[-1])
    assert first["step"] == 1 and last["step"] == len(timeline.steps)
    assert "events" in last and "messages" not in last
    print(f"export {len(data) / MB:.1f} MB, peak growth {peak / MB:.1f} MB")
    assert peak < 200 * MB


def test_small_timelines_also_export_their_buffers():
    conv = load_conversation(
        (LONG.parent / "imports" / "openai_chat.json").read_bytes(), name="openai_chat.json"
    )
    timeline = replay_conversation(conv, per="message", config=ScenarioConfig(scope="session"))
    assert buffer_entries(timeline) <= BUFFER_EXPORT_ENTRIES
    lines = timeline_json_lines(timeline, with_buffers=True).decode().splitlines()
    last = json.loads(lines[-1])
    assert len(last["messages"]) == last["count"]
