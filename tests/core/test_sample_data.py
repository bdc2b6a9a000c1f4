"""sample_data/: every GR-MEM example is a scenario, and every scenario passes ``check``.

The scenarios are teaching material for the spec-examples page and the
``check`` command: each one must parse, the examples listed
at the end of GR-MEM.md must each have a file named after its rule, and
replaying each file must meet its own ``expect`` exactly.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from flowdrop_core import normalize_report
from flowdrop_core.importers import load_conversation
from flowdrop_core.replay import check
from flowdrop_core.scenario import Scenario, load_scenario

SAMPLE_DATA = Path(__file__).resolve().parents[2] / "sample_data"
SCENARIO_FILES = sorted(SAMPLE_DATA.glob("*.json"))
PLACEHOLDER = "Tool call was interrupted; no result."

#: GR-MEM.md "The specification's examples, as data": one entry per example,
#: the scenario file(s) that run it.
SPEC_EXAMPLES: dict[str, tuple[str, ...]] = {
    "MEM-14 full window": ("mem-14-full-window",),
    "MEM-14 re-fired result": ("mem-14-refired-result",),
    "MEM-1 re-fired dropped / new result appended": (
        "mem-1-refired-dropped",
        "mem-1-new-result-appended",
    ),
    "MEM-1/MEM-10 placeholder replaced": ("mem-1-mem-10-placeholder-replaced",),
    "MEM-2 duplicate turn / one new call kept": ("mem-2-duplicate-turn", "mem-2-new-call-kept"),
    "MEM-3 heal on user turn": ("mem-3-heal-on-user-turn",),
    "MEM-11 provider id spelling": ("mem-11-provider-id-spelling",),
    "MEM-6 user_id 0": ("mem-6-user-id-zero",),
    "MEM-7/MEM-13 refused read": (
        "mem-7-mem-13-refused-read",
        "mem-7-mem-13-refused-session-read",
    ),
    "MEM-5 zero ids / result before call": ("mem-5-zero-ids", "mem-5-result-before-call"),
    "MEM-16 text to message": ("mem-16-text-to-message",),
}

RECORDED = ("recorded-crash-resume", "recorded-redelivery", "recorded-multi-user")


def _scenario(name: str) -> Scenario:
    return load_scenario(SAMPLE_DATA / f"{name}.json")


def test_there_are_scenarios() -> None:
    assert len(SCENARIO_FILES) >= 17


@pytest.mark.parametrize("path", SCENARIO_FILES, ids=lambda p: p.stem)
def test_scenario_parses_and_is_complete(path: Path) -> None:
    """Each file parses, is named after itself, and says what it teaches."""
    scenario = load_scenario(path)
    assert scenario.name == path.stem
    assert scenario.title and scenario.description and scenario.rules
    assert all(rule.startswith("MEM-") for rule in scenario.rules)
    assert all(step.label for step in scenario.steps)
    assert len(scenario.expect) == len(scenario.steps)
    assert all(e.count is not None and e.appended is not None for e in scenario.expect)


@pytest.mark.parametrize("path", SCENARIO_FILES, ids=lambda p: p.stem)
def test_scenario_passes_check(path: Path) -> None:
    """``python -m flowdrop_core check sample_data/*.json`` passes, file by file."""
    result = check(load_scenario(path))
    assert result.mismatches == []
    assert result.passed


@pytest.mark.parametrize("example", SPEC_EXAMPLES, ids=str)
def test_every_spec_example_has_a_scenario(example: str) -> None:
    for name in SPEC_EXAMPLES[example]:
        assert (SAMPLE_DATA / f"{name}.json").is_file(), f"{example}: {name}.json missing"


def test_every_scenario_is_a_spec_example_or_a_recording() -> None:
    """No stray file: a new sample is either listed above or a ``recorded-`` one."""
    listed = {name for names in SPEC_EXAMPLES.values() for name in names} | set(RECORDED)
    assert {p.stem for p in SCENARIO_FILES} == listed
    assert all(p.stem.startswith(("mem-", "recorded-")) for p in SCENARIO_FILES)


@pytest.mark.parametrize(
    ("name", "report"),
    [
        ("mem-14-full-window", {"count": 3, "appended": 1, "appended_any": True}),
        ("mem-14-refired-result", {"count": 2, "appended": 0, "appended_any": False}),
    ],
)
def test_mem14_reports_are_the_spec_verbatim(name: str, report: dict[str, object]) -> None:
    """The two JSON reports printed in MEM-14.txt, exactly."""
    expect = _scenario(name).expect[0]
    assert expect.model_dump(include={"count", "appended", "appended_any"}) == report


def test_mem1_mem10_slot_reads_as_the_spec_says() -> None:
    after = _scenario("mem-1-mem-10-placeholder-replaced").expect[0].messages
    assert after is not None
    assert after[1] == {
        "role": "tool",
        "content": "Found 3 cats",
        "metadata": {"tool_call_id": "c1"},
    }


def test_mem3_and_mem11_placeholders() -> None:
    mem3 = _scenario("mem-3-heal-on-user-turn").expect[0].messages
    assert mem3 is not None and len(mem3) == 5
    assert mem3[1] == {
        "role": "tool",
        "content": PLACEHOLDER,
        "metadata": {"tool_call_id": "c1", "healed": True},
    }
    assert mem3[4]["content"] == "try again"
    mem11 = _scenario("mem-11-provider-id-spelling").expect[0].messages
    assert mem11 is not None
    assert mem11[1]["metadata"] == {"tool_call_id": "call_1", "healed": True}


def test_mem6_three_contexts() -> None:
    scenario = _scenario("mem-6-user-id-zero")
    assert [s.context for s in scenario.steps] == [
        {"user_id": 0},
        {"user_id": "0"},
        {"user_id": "7"},
    ]
    assert [(e.refused, e.resolved_scope_id) for e in scenario.expect] == [
        (True, ""),
        (True, ""),
        (False, "7"),
    ]


def test_refused_reads_are_empty() -> None:
    for name in ("mem-7-mem-13-refused-read", "mem-7-mem-13-refused-session-read"):
        scenario = _scenario(name)
        refused = [e for e in scenario.expect if e.refused]
        assert refused and all(
            (e.count, e.appended, e.appended_any, e.resolved_scope_id, e.messages)
            == (0, 0, False, "", [])
            for e in refused
        )


def test_mem5_provider_view_of_the_samples() -> None:
    """MEM-5 is read-only: the samples hold the buffer side, normalize shows the spec's view."""
    zero = load_conversation(SAMPLE_DATA / "mem-5-zero-ids.json")
    report = normalize_report(zero.messages)
    assert (report.messages, report.dropped) == ([], 3)  # the call, its turn, the result
    early = load_conversation(SAMPLE_DATA / "mem-5-result-before-call.json")
    report = normalize_report(early.messages)
    assert [m["role"] for m in report.messages] == ["assistant", "tool"]
    assert report.messages[1] == {"role": "tool", "content": PLACEHOLDER, "tool_call_id": "c1"}
    assert report.dropped == 1


def test_recorded_multi_user_never_mixes_histories() -> None:
    scenario = _scenario("recorded-multi-user")
    timeline = check(scenario).timeline
    for record in timeline.steps:
        if record.refused:
            assert (record.count, record.resolved_scope_id) == (0, "")
            continue
        owner = record.resolved_scope_id
        assert owner in {"alice", "bob"}
        other = "bob" if owner == "alice" else "alice"
        text = json.dumps(timeline.buffer_after(record.step))
        assert other.capitalize() not in text


def test_recorded_redelivery_counts_stay() -> None:
    timeline = check(_scenario("recorded-redelivery")).timeline
    redelivered = [r for r in timeline.steps if "re-delivered" in r.label]
    assert len(redelivered) == 3
    assert all(r.appended == 0 and r.count_delta == 0 for r in redelivered)


def test_recorded_crash_resume_heals_then_replaces() -> None:
    timeline = check(_scenario("recorded-crash-resume")).timeline
    healed, late = timeline.steps[3], timeline.steps[4]
    assert (healed.appended, healed.count_delta) == (1, 2)
    assert [str(e.kind) for e in healed.events] == ["placeholder_inserted", "appended"]
    assert (late.appended, late.count_delta) == (0, 0)
    assert [str(e.kind) for e in late.events] == ["placeholder_replaced"]
