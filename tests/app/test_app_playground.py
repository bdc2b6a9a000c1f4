"""AppTest: the Playground page (default page of app.py).

Covers the issue-5 "Done when" items for the playground: it renders; the two
MEM-14 examples report count 3 / appended 1 / true and count 2 / appended 0 /
false in the metrics and in the timeline; window, scope and identity change
the results; a refused scope shows the refusal and an empty buffer; bad
input shows an error naming its place, keeps the text, and appends nothing.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from apptest_helpers import paste, shown, start_app
from streamlit.testing.v1 import AppTest

APP = str(Path(__file__).resolve().parents[2] / "app.py")
TIMEOUT = 60  # this machine is slow; a cold first run imports pandas and altair


def start(**query: str) -> AppTest:
    return start_app(TIMEOUT, **query)


def metrics(at: AppTest) -> dict[str, str]:
    """The first four metrics: the selected step's MEM-14 report."""
    return {m.label: shown(m.value) for m in at.metric[:4]}


def timeline(at: AppTest):
    """The navigator's timeline table (the compare view's tables come before it)."""
    return next(df.value for df in at.dataframe if "incoming" in df.value.columns)


def load_example(at: AppTest, name: str) -> AppTest:
    at.selectbox(key="pg_example").select(name)
    at.button(key="pg_load_example").click().run()
    assert not at.exception, at.exception
    return at


def open_tab(at: AppTest, label: str, prefix: str = "pg") -> AppTest:
    """Open one of the inspector's tabs (only the open tab runs) and rerun."""
    at.session_state[f"{prefix}_tab"] = label
    at.run()
    assert not at.exception, at.exception
    return at


def steps(at: AppTest) -> list:
    return at.session_state["pg_recipe"]["steps"]


def test_renders_ready_with_defaults():
    at = start()
    assert metrics(at)["count"] == "0"
    assert any("No appends yet" in i.value for i in at.info)
    # One click away: the sample conversation.
    at.button(key="pg_load_conversation").click().run()
    assert not at.exception
    assert len(timeline(at)) == 13
    assert metrics(at)["appended"] == "1"


def test_mem14_full_window_metrics_and_timeline():
    at = load_example(start(), "mem-14-full-window")
    assert metrics(at) == {
        "count": "3",
        "appended": "1",
        "appended_any": "true",
        "resolved_scope_id": "'demo'",
    }
    row = timeline(at).iloc[-1]
    assert (row["count"], row["appended"], bool(row["appended_any"])) == (3, 1, True)
    assert row["change"] == 0
    assert "evicted" in row["decisions"]
    assert "hidden append" in row["decisions"]  # count unchanged, appended 1
    assert "MEM-14" in row["rules"] and "window of 3 evicted" in row["reason"]
    assert at.query_params["scenario"] in ("mem-14-full-window", ["mem-14-full-window"])


def test_mem14_refired_result_metrics_and_timeline():
    at = load_example(start(), "mem-14-refired-result")
    assert metrics(at)["count"] == "2"
    assert metrics(at)["appended"] == "0"
    assert metrics(at)["appended_any"] == "false"
    row = timeline(at).iloc[-1]
    assert (row["count"], row["appended"], bool(row["appended_any"])) == (2, 0, False)
    assert row["decisions"] == "duplicate result" and row["rules"] == "MEM-1"


def test_mem14_full_window_by_pasting():
    at = start()
    at.number_input(key="window").set_value(3).run()
    paste(
        at,
        json.dumps(
            [
                {"role": "user", "content": "one"},
                {"role": "assistant", "content": "two"},
                {"role": "user", "content": "three"},
            ]
        ),
    )
    assert metrics(at)["count"] == "3"
    paste(at, '{"role": "user", "content": "four"}')
    assert metrics(at)["count"] == "3"
    assert metrics(at)["appended"] == "1"
    assert metrics(at)["appended_any"] == "true"
    decisions = list(timeline(at)["decisions"])
    assert decisions[0] == "appended (3)"
    assert "hidden append" in decisions[1]


def test_url_opens_a_scenario():
    at = start(scenario="mem-14-full-window")
    assert metrics(at)["count"] == "3"
    assert metrics(at)["appended"] == "1"


def test_window_changes_results():
    at = start()
    at.button(key="pg_load_conversation").click().run()
    assert timeline(at)["count"].max() == 13
    at.number_input(key="window").set_value(4).run()
    assert not at.exception
    # Compare, don't rewrite: the steps keep the settings they were made with ...
    assert timeline(at)["count"].max() == 13
    assert any("report differently" in shown(w.value) for w in at.warning)
    # ... until the new ones are picked.
    at.button(key="pg_adopt").click().run()
    frame = timeline(at)
    assert frame["count"].max() == 4
    assert frame["decisions"].str.contains("evicted").any()
    assert frame["decisions"].str.contains("hidden append").any()
    assert metrics(at)["count"] == "4"


def test_scope_and_identity_change_results_and_refusal_is_empty():
    at = start()
    paste(at, '{"role": "user", "content": "hello"}')
    assert metrics(at)["resolved_scope_id"] == "'s-42'"

    at.selectbox(key="scope").select("user").run()
    at.button(key="pg_adopt").click().run()
    assert metrics(at)["resolved_scope_id"] == "'7'"

    at.button(key="preset_the no-user id 0").click().run()
    assert not at.exception
    assert at.session_state["session"] == "s-42"  # the preset leaves the session alone
    at.button(key="pg_adopt").click().run()
    assert metrics(at) == {
        "count": "0",
        "appended": "0",
        "appended_any": "false",
        "resolved_scope_id": "refused",
    }
    assert any("Refused" in shown(e.value) and "MEM-6" in shown(e.value) for e in at.error)
    row = timeline(at).iloc[-1]
    assert row["decisions"] == "refused" and row["count"] == 0 and "MEM-7" in row["rules"]
    open_tab(at, "Step before / after")
    assert any("Empty buffer (refused scope)" in i.value for i in at.info)
    open_tab(at, "Timeline")

    at.button(key="preset_no identity").click().run()
    at.button(key="pg_adopt").click().run()
    assert metrics(at)["resolved_scope_id"] == "refused"
    assert any("MEM-7" in shown(e.value) for e in at.error)

    at.selectbox(key="scope").select("global").run()
    at.button(key="pg_adopt").click().run()
    assert metrics(at)["resolved_scope_id"] == "''"
    assert metrics(at)["appended"] == "1"


def test_session_owner_is_the_user_identity():
    at = start()
    at.selectbox(key="scope").select("user").run()
    at.text_input(key="owner").input("owner-9").run()
    paste(at, '{"role": "user", "content": "hi"}')
    assert metrics(at)["resolved_scope_id"] == "'owner-9'"  # MEM-8


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('{"role": "user", "content": }', "line 1, column 29"),
        (
            '[{"role": "user", "content": "ok"}, {"role": "bogus", "content": "x"}]',
            "incoming[1]: unknown role 'bogus'",
        ),
        ("", "empty"),
        # json.loads refuses these with a ValueError / RecursionError, not a JSONDecodeError
        (
            '{"role": "user", "content": "x", "n": ' + "9" * 5000 + "}",
            "not JSON (integer too long: more than 4300 digits)",
        ),
        ("[" * 100_000, "not JSON (nested too deeply)"),
        ('{"role": ["user"], "content": "x"}', "incoming[0]: 'role' must be a string"),
    ],
    ids=["bad-json", "bad-role", "empty", "huge-integer", "deep-nesting", "role-list"],
)
def test_bad_input_shows_error_keeps_text_appends_nothing(text, expected):
    at = start()
    paste(at, text)
    assert any(expected in shown(e.value) for e in at.error), [shown(e.value) for e in at.error]
    assert at.text_area(key="pg_paste").value == text
    assert steps(at) == []
    assert metrics(at)["count"] == "0"


def test_refire_undo_reset_and_compose():
    at = load_example(start(), "mem-14-refired-result")
    at.button(key="pg_refire").click().run()
    assert len(timeline(at)) == 2
    assert metrics(at)["appended"] == "0"
    at.button(key="pg_undo").click().run()
    assert len(timeline(at)) == 1
    assert "scenario" not in at.query_params  # modified: no longer the sample
    at.button(key="pg_reset").click().run()
    assert steps(at) == []

    at.selectbox(key="pg_role").select("tool").run()
    at.text_input(key="pg_content").input("result")
    at.text_input(key="pg_call_id").input("  c9 ")
    at.button(key="pg_compose_append").click().run()
    assert steps(at)[-1]["append"] == {"role": "tool", "content": "result", "tool_call_id": "c9"}
    at.button(key="pg_compose_append").click().run()  # same id again: MEM-1 duplicate
    assert metrics(at)["appended"] == "0"
    assert timeline(at).iloc[-1]["decisions"] == "duplicate result"


def test_composed_inputs_append_in_one_step_in_declared_order():
    """MEM-4: messages added as inputs are assembled in the order they were added."""
    at = start()
    at.selectbox(key="pg_role").select("assistant").run()
    at.text_input(key="pg_content").input("")
    at.text_input(key="pg_declare").input("c1")
    at.button(key="pg_add_input").click().run()
    at.selectbox(key="pg_role").select("user").run()
    at.text_input(key="pg_declare").input("")
    at.text_input(key="pg_content").input("and then?")
    at.button(key="pg_add_input").click().run()
    assert steps(at) == []  # nothing appended yet: the inputs wait
    assert [t.value for t in at.text][-2:] == [
        "in_1: assistant[calls 1]:",
        "in_2: user: and then?",
    ]
    at.button(key="pg_append_inputs").click().run()
    assert not at.exception
    (step,) = steps(at)
    assert [m["role"] for m in step["append"]] == ["assistant", "user"]
    assert step["label"] == "assembled 2 inputs (MEM-4)"
    assert metrics(at)["appended"] == "2"
    assert at.session_state["pg_inputs"] == []


def test_sqlite_storage_gives_the_same_report():
    at = start()
    at.segmented_control(key="storage").set_value("sqlite").run()
    load_example(at, "mem-14-full-window")
    at.segmented_control(key="storage").set_value("sqlite").run()
    assert not at.exception
    assert at.session_state["storage"] == "sqlite"
    assert metrics(at)["count"] == "3"
    assert metrics(at)["appended"] == "1"


def test_step_detail_and_provider_view_render():
    at = load_example(start(), "mem-3-heal-on-user-turn")
    assert not at.exception
    # Only the open tab runs: the step views are not derived for the Timeline tab.
    assert "dropped (MEM-5)" not in [m.label for m in at.metric]
    # Step detail: the events table cites rules; the provider view has its metrics.
    open_tab(at, "Step before / after")
    frames = [d.value for d in at.dataframe]
    events = next(f for f in frames if "rule" in f.columns and "reason" in f.columns)
    assert set(events["kind"]) >= {"placeholder_inserted", "appended"}
    assert "MEM-3" in set(events["rule"])
    open_tab(at, "Provider view")
    labels = [m.label for m in at.metric]
    assert "dropped (MEM-5)" in labels
    # JSON view toggle.
    open_tab(at, "Step before / after")
    at.segmented_control(key="pg_mode").set_value("JSON").run()
    assert not at.exception
    assert at.json


def test_step_zero_is_the_starting_buffer_and_exports_are_offered():
    at = load_example(start(), "mem-14-full-window")
    at.slider(key="step").set_value(0).run()
    assert not at.exception
    assert metrics(at)["count"] == "3"
    assert metrics(at)["appended"] == "n/a"
    open_tab(at, "Export")
    labels = [b.proto.label for b in at.get("download_button")]
    assert labels == [
        "Timeline CSV",
        "Timeline JSON lines",
        "Scenario file",
        "JSON lines with buffers",
    ]


def test_typed_data_is_never_rendered_as_markup():
    at = start()
    at.selectbox(key="scope").select("user").run()
    # With a session, the user identity is the session owner (MEM-8).
    at.text_input(key="owner").input("**bold** [link](http://example.com) :red[x]").run()
    paste(at, '{"role": "user", "content": "<b>not html</b> **not bold**"}')
    success = next(s.value for s in at.success if "scope resolves to" in s.value)
    assert "\\*\\*bold\\*\\*" in success and "\\:red\\[x\\]" in success
    assert "`[link](http://example.com)`" in success  # a linkable word: a code span, read as is
    # Message content is plain text (st.text), never Markdown or HTML.
    open_tab(at, "Step before / after")
    assert "<b>not html</b> **not bold**" in [t.value for t in at.text]


def test_a_copied_link_keeps_its_own_settings_and_step():
    at = start(scenario="mem-14-full-window", window="0", step="0")
    assert at.session_state["window"] == 0
    assert metrics(at)["appended"] == "n/a"  # step 0: the starting buffer
    at.slider(key="step").set_value(1).run()
    # No window: the fourth message is appended without evicting.
    assert metrics(at)["count"] == "4"
    assert metrics(at)["appended"] == "1"
