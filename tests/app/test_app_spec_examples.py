"""AppTest: Spec examples read like the specification, one rule at a time."""

from __future__ import annotations

import re
from pathlib import Path

from streamlit.testing.v1 import AppTest

from flowdrop_core.replay import check
from inspector_ui.samples import group_by_rule, sample_scenarios

ROOT = Path(__file__).resolve().parents[2]
APP = str(ROOT / "app.py")
TIMEOUT = 60
STEP = re.compile(r"\*\*Step (\d+): .*\*\*: expected \*\*(.+?)\*\*, actual \*\*(.+?)\*\*")


def open_rule(rule: str | None = None) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=TIMEOUT).run()
    at.switch_page("pages/spec_examples.py").run()
    assert not at.exception, at.exception
    if rule:
        at.session_state["spec_rule"] = rule
        at.run()
        assert not at.exception, at.exception
    return at


def step_lines(at: AppTest) -> list[tuple[int, str, str]]:
    return [
        (int(m[1]), m[2], m[3])
        for md in at.markdown
        if (m := STEP.fullmatch(md.value.replace("\\", "")))
    ]


def test_every_card_shows_the_spec_verdicts_expected_next_to_actual() -> None:
    samples = sample_scenarios()
    groups = group_by_rule(samples)
    at = open_rule()
    assert at.success[0].value == f"All {sum(1 for s in samples if s.rules)} examples pass."
    for rule, members in groups.items():
        at.session_state["spec_rule"] = rule
        at.run()
        assert not at.exception, at.exception
        assert at.query_params["rule"] == [rule] or at.query_params["rule"] == rule
        lines = step_lines(at)
        want = []
        for sample in members:
            assert at.get_by_key(f"card_{sample.name}") is not None
            assert sample.scenario is not None
            timeline = check(sample.scenario).timeline
            for k, record in enumerate(timeline.steps, start=1):
                expected = sample.scenario.expect[k - 1].verdict
                want.append((k, expected or "(not said)", record.verdict))
        assert lines == want, rule
        badges = [m.value for m in at.markdown if "-badge[" in m.value]
        assert sum("meets the spec" in b for b in badges) == len(members)
        assert not any("does not meet" in b for b in badges)


def test_the_mem14_cards_draw_both_buffers_and_the_spec_words() -> None:
    at = open_rule("MEM-14")
    assert step_lines(at) == [(1, "appended", "appended"), (1, "dropped", "dropped")]
    tables = [df.value for df in at.dataframe]
    assert all(list(f.columns) == ["field", "expected", "actual", "result", "rule"] for f in tables)
    first = tables[0].set_index("field")
    assert first.loc["verdict", "expected"] == '"appended"'
    assert first.loc["count", "actual"] == "3" and first.loc["appended", "actual"] == "1"
    # Buffers before and after are drawn as entries, tagged: the full window evicts one.
    badges = [m.value for m in at.markdown if "-badge[" in m.value]
    assert any("evicted" in b for b in badges) and any("new" in b for b in badges)


def test_placeholder_fields_are_visible_as_json_without_a_click() -> None:
    at = open_rule("MEM-11")
    shown = [j.value for j in at.json]
    assert any('"healed": true' in s for s in shown), shown
    assert all(j.proto.expanded for j in at.json)


def test_mem16_shows_its_text_inputs() -> None:
    at = open_rule("MEM-16")
    shown = [j.value for j in at.json]
    assert any('"role": "operator"' in s and '"text": "hello"' in s for s in shown), shown


def test_mem7_13_shows_found_false() -> None:
    at = open_rule("MEM-7")
    tables = [df.value.set_index("field") for df in at.dataframe]
    found = [t.loc["found"] for t in tables if "found" in t.index]
    assert [(f["expected"], f["actual"], f["result"]) for f in found][:2] == [
        ("false", "false", "pass"),
        ("false", "false", "pass"),
    ]


def test_descriptions_have_no_literal_escapes() -> None:
    at = open_rule("MEM-7")
    source = " ".join(
        m.value for m in at.markdown if "refused user or session scope returns" in m.value
    )
    seen = re.sub(r"\\(.)", r"\1", source)  # what a reader sees: escapes read back
    assert seen and '\\"' not in seen
    assert "`found: false`" in source  # a code span, not literal backticks


def test_a_link_opens_its_rule_and_a_card_opens_in_playground() -> None:
    at = AppTest.from_file(APP, default_timeout=TIMEOUT).run()
    at.query_params["rule"] = "MEM-3"
    at.switch_page("pages/spec_examples.py").run()
    assert at.session_state["spec_rule"] == "MEM-3"
    at.session_state["spec_rule"] = "MEM-14"
    at.run()
    at.button(key="open_mem-14-full-window").click().run()
    assert not at.exception, at.exception
    assert at.session_state["window"] == 3


def test_mem5_shows_the_provider_view_on_every_step_checked_where_the_file_says() -> None:
    at = open_rule("MEM-5")
    tables = [df.value.set_index("field") for df in at.dataframe]
    dropped = [t.loc["provider.dropped"] for t in tables if "provider.dropped" in t.index]
    assert [(d["actual"], d["result"]) for d in dropped][-2:] == [
        ("2", "not checked"),
        ("3", "pass"),
    ]
    provider = [m.value for m in at.markdown if m.value.startswith("**provider.messages**")]
    assert provider and all(p.endswith(("pass", "not checked")) for p in provider)
    captions = " ".join(c.value for c in at.caption)
    assert '"0" (not an id, MEM-11)' in captions.replace("\\", "")
