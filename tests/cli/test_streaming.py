"""``replay`` and ``doctor`` of a recording keep no step record once it is printed or read.

Memory must not grow with the steps' records: when the output is written,
the records of the steps already run are gone (the table keeps one compact row
per step; ``--json`` lines are written as the steps run; ``doctor`` reads each
record into its findings). And the streamed forms give what the whole timeline
gives: the same records (every re-fire mode) and the same health report.
"""

from __future__ import annotations

import contextlib
import gc
import io
import sys
from pathlib import Path

import pytest

from flowdrop_core.cli import main
from flowdrop_core.importers import parse_conversation
from flowdrop_core.inspect.health import Place, health, health_of_steps
from flowdrop_core.replay import (
    StepRecord,
    conversation_to_scenario,
    replay,
    step_origins,
    stream_replay,
)
from flowdrop_core.scenario import ScenarioConfig

ROOT = Path(__file__).resolve().parents[2]
MESSAGES = 400


def _recording_text() -> str:
    sys.path.insert(0, str(ROOT / "scripts"))
    try:
        from gen_long_conversation import generate, render
    finally:
        sys.path.remove(str(ROOT / "scripts"))
    return render(generate(MESSAGES))


@pytest.fixture(scope="module")
def recording(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("stream") / "agent.jsonl"
    path.write_text(_recording_text(), encoding="utf-8")
    return path


class _Watching(io.StringIO):
    """Output that counts, at its first write, the step records still alive (every step has
    run by then: the table and the findings come after the replay)."""

    most = -1

    def write(self, text: str) -> int:
        if self.most < 0:
            self.most = _alive()
        return super().write(text)


def _alive() -> int:
    return sum(1 for obj in gc.get_objects() if type(obj) is StepRecord)


@pytest.mark.parametrize(
    "argv",
    [["replay"], ["replay", "--json"], ["doctor"], ["doctor", "--json"]],
    ids=" ".join,
)
def test_no_step_record_is_alive_when_the_output_is_written(
    argv: list[str], recording: Path
) -> None:
    gc.collect()  # what earlier tests still hold (a module fixture's timeline) is not ours
    before = _alive()
    out = _Watching()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        main([*argv, str(recording)])
    assert out.getvalue()
    made = out.most - before
    assert made <= 1, f"{made} step records alive while the output was written"


def _conversation(recording: Path):  # type: ignore[no-untyped-def]
    return parse_conversation(recording.read_text(encoding="utf-8"), source_name="agent.jsonl")


@pytest.mark.parametrize("refire", ["none", "results", "steps"])
def test_streamed_records_are_the_timeline_s(refire: str, recording: Path) -> None:
    conv = _conversation(recording)
    scenario = conversation_to_scenario(conv, config=ScenarioConfig(max_messages=50))
    whole = replay(scenario, refire=refire)  # type: ignore[arg-type]
    timeline, records = stream_replay(scenario, refire=refire)  # type: ignore[arg-type]
    streamed = list(records)
    assert streamed == whole.steps
    assert timeline.steps == []


@pytest.mark.parametrize("per", ["message", "turn"])
def test_health_of_steps_is_health_of_the_timeline(per: str, recording: Path) -> None:
    conv = _conversation(recording)
    config = ScenarioConfig(max_messages=10)  # a window: results left orphaned too
    scenario = conversation_to_scenario(conv, per=per, config=config)  # type: ignore[arg-type]
    origins = step_origins(conv, per)  # type: ignore[arg-type]
    whole = health(replay(scenario, origins=origins))
    _, records = stream_replay(scenario)
    places = [Place(s, j) for s, where in enumerate(origins, start=1) for j in range(len(where))]
    streamed = health_of_steps(records, conv.messages, conv.origins, places)
    assert streamed.findings == whole.findings
    assert {f.kind for f in whole.findings} >= {"orphaned_by_window", "unanswered_call"}
    assert (streamed.messages, streamed.steps) == (whole.messages, whole.steps)
