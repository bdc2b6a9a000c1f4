"""AppTest: the guided MEM-14 walk (every stop's report), presenter mode, glossary, conformance."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest
from apptest_helpers import shown
from streamlit.testing.v1 import AppTest

from flowdrop_core.conformance.kit import load_kit
from flowdrop_core.conformance.runner import Subprocess, run_kit
from flowdrop_core.inspect.glossary import GLOSSARY, help_for
from flowdrop_core.inspect.walk import MEM14_POINTS, WALK

ROOT = Path(__file__).resolve().parents[2]
APP = str(ROOT / "app.py")
TIMEOUT = 60

#: What each stop must report, from MEM-14 and the example files: count, change, appended,
#: appended_any, verdict.
REPORTS = {
    "window": ("3", 0, "1", "true", "appended"),
    "dedup": ("2", 0, "0", "false", "dropped"),
    "replace": ("2", 0, "0", "false", "replaced"),
    "refuse": ("0", 0, "0", "false", "refused"),
    "heal": ("5", 2, "1", "true", "healed"),
}


def open_page(page: str, **params: str) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.run()
    assert not at.exception, at.exception
    for k, v in params.items():
        at.query_params[k] = v
    at.switch_page(page).run()
    assert not at.exception, at.exception
    return at


def report(at: AppTest) -> tuple[str, int, str, str, str]:
    m = {x.label: x for x in at.metric}
    delta = m["count"].delta
    return (
        m["count"].value,
        int(delta) if delta not in (None, "") else 0,
        m["appended"].value,
        m["appended_any"].value,
        m["verdict"].value,
    )


def test_every_stop_of_the_walk_reports_what_mem14_says() -> None:
    at = open_page("pages/learn_mem14.py")
    quoted = [md.value for md in at.markdown]
    for n, sentence in enumerate(MEM14_POINTS, start=1):
        assert f"{n}. {sentence}" in quoted
    for stop in WALK:
        at.session_state["walk_stop"] = stop.key
        at.run()
        assert not at.metric, stop.key  # nothing appended until the button is pressed
        assert f"> **MEM-14, point {stop.point}.** {stop.sentence}" in [
            m.value for m in at.markdown
        ]
        at.button(key=f"walk_{stop.key}_press").click().run()
        assert not at.exception, at.exception
        assert report(at) == REPORTS[stop.key], stop.key
        table = at.dataframe[0]
        assert list(table.value["agrees"]) == ["yes"] * len(table.value)
        assert any(stop.lesson == i.value for i in at.info), stop.key
    assert any("Only appended tells what came in" in s.value for s in at.success)
    summary = at.dataframe[-1].value
    assert list(summary["count change"]) == [0, 0, 0, 0, 2]
    assert list(summary["appended"]) == [1, 0, 0, 0, 1]


def test_a_refused_stop_draws_its_empty_buffer() -> None:
    at = open_page("pages/learn_mem14.py")
    at.session_state["walk_stop"] = "refuse"
    at.run()
    at.button(key="walk_refuse_press").click().run()
    assert any("refused scope returns nothing" in i.value for i in at.info)


def test_refire_and_start_over_and_next() -> None:
    at = open_page("pages/learn_mem14.py")
    at.button(key="walk_window_press").click().run()
    at.button(key="walk_window_press").click().run()  # re-fire: a new user turn lands again
    assert report(at)[:4] == ("3", 0, "1", "true")
    assert len(at.dataframe[0].value) == 6
    at.button(key="walk_window_reset").click().run()
    assert not at.metric
    at.button(key="walk_next").click().run()
    assert at.session_state["walk_stop"] == "dedup"
    at.button(key="walk_prev").click().run()
    at.button(key="walk_prev").click().run()
    assert at.session_state["walk_stop"] == "heal"  # previous wraps around


def test_every_metric_has_its_glossary_help() -> None:
    at = open_page("pages/learn_mem14.py")
    at.session_state["walk_stop"] = "heal"
    at.run()
    at.button(key="walk_heal_press").click().run()
    helps = {m.label: m.help for m in at.metric}
    for label in ("count", "appended", "appended_any"):
        assert helps[label] == help_for(label) and helps[label]
    assert helps["verdict"].startswith("a user turn landed")


def test_presenter_mode_one_example_at_a_time_in_large_type() -> None:
    at = open_page("pages/learn_mem14.py", present="1")
    assert at.toggle(key="present").value is True
    assert not any(m.value.startswith("**MEM-14.**") for m in at.markdown)  # no walk intro
    assert [h.value for h in at.header] == [WALK[0].title]
    assert at.subheader[0].value == f"MEM-14, point 2: {MEM14_POINTS[1]}"
    at.button(key="walk_window_press").click().run()
    assert report(at) == REPORTS["window"]
    at.button(key="walk_next").click().run()
    assert [h.value for h in at.header] == [WALK[1].title]
    at.button(key="walk_dedup_press").click().run()
    assert report(at) == REPORTS["dedup"]
    assert [c.value for c in at.code] == [
        '{"count": 2, "appended": 0, "appended_any": false}\nverdict="dropped"'
    ] * 2
    assert [s.value for s in at.subheader][-2:] == ["The example expects", "The buffer reported"]
    at.toggle(key="present").set_value(False).run()
    assert "present" not in at.query_params


def test_the_glossary_page_lists_every_term() -> None:
    at = open_page("pages/glossary.py")
    shown = [m.value for m in at.markdown]
    for term in GLOSSARY.values():
        assert f"**{term.term}**" in shown
        assert term.short in shown
    assert "refused" in list(at.dataframe[0].value["verdict"])


def test_the_conformance_page_shows_every_rule() -> None:
    at = open_page("pages/conformance.py")
    table = at.dataframe[0].value
    assert list(table["rule"]) == [f"MEM-{n}" for n in range(1, 17)]
    status = dict(zip(table["rule"], table["status"], strict=True))
    assert status == {f"MEM-{n}": "pass" for n in range(1, 17)}
    assert any(re.match(r"No rule fails: 16 pass", s.value) for s in at.success)
    assert len(at.expander) == 16


@pytest.mark.parametrize("page", ["pages/glossary.py", "pages/conformance.py"])
def test_new_pages_have_no_exception(page: str) -> None:
    assert not open_page(page).exception


def test_every_metric_of_the_replay_page_has_help() -> None:
    at = open_page("pages/replay.py")
    assert at.metric, "the replay page shows the step's report"
    for metric in at.metric:
        assert metric.help, metric.label
    by_label = {m.label: m.help for m in at.metric}
    assert by_label["appended"] == help_for("appended")
    assert by_label["appended_any"] == help_for("appended_any")


def test_an_uploaded_standing_is_shown_beside_ours_rule_by_rule() -> None:
    broken = Path(__file__).resolve().parents[1] / "core" / "broken_adapter.py"
    transport = Subprocess(f"{sys.executable} {broken} drop-count-off-by-one", timeout=20)
    try:
        theirs = run_kit(load_kit(), transport, implementation="their-buffer")
    finally:
        transport.close()
    at = open_page("pages/conformance.py")
    at.file_uploader(key="conformance_standing").upload(
        "standing.json", theirs.to_json().encode(), "application/json"
    ).run()
    assert not at.exception
    table = at.dataframe[1].value
    assert list(table["rule"]) == [f"MEM-{n}" for n in range(1, 17)]
    mem5 = table[table["rule"] == "MEM-5"].iloc[0]
    assert (mem5["ours"], mem5["theirs"], mem5["same"]) == (
        "pass",
        "fail",
        False,
    )
    assert any("Differs from ours on MEM-5" in shown(i.value) for i in at.info)
    texts = [t.value for t in at.text]
    assert any("dropped: expected 1, got 2" in t for t in texts)


def test_a_standing_file_that_is_not_one_is_named() -> None:
    at = open_page("pages/conformance.py")
    at.file_uploader(key="conformance_standing").upload(
        "notes.json", b'{"rules": [{"rule": "MEM-1", "status": "great"}]}', "application/json"
    ).run()
    assert not at.exception
    said = "notes.json: rules[0].status: 'great' is not one of"
    assert any(said in shown(e.value) for e in at.error)
    assert len(at.dataframe) == 1  # only ours
