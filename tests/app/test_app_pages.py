"""AppTest: the Replay, Spec examples and Learn MEM-14 pages, and the router."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from apptest_helpers import shown
from streamlit.testing.v1 import AppTest

ROOT = Path(__file__).resolve().parents[2]
APP = str(ROOT / "app.py")
SAMPLES = ROOT / "sample_data"
TIMEOUT = 60


def nav_table(at: AppTest):
    """The timeline table (the health panel's findings table may come before it)."""
    return next(df.value for df in at.dataframe if "incoming" in df.value.columns)


def origin_column(at: AppTest) -> list[str]:
    """The timeline's origin column (the health panel's table comes first on the page)."""
    frame = next(df.value for df in at.dataframe if "origin" in df.value.columns)
    return frame["origin"].tolist()


def open_page(page: str) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=TIMEOUT).run()
    assert not at.exception, at.exception
    at.switch_page(page).run()
    assert not at.exception, at.exception
    return at


def metrics(at: AppTest) -> dict[str, str]:
    return {m.label: shown(m.value) for m in at.metric[:4]}


# --------------------------------------------------------------------------- replay


def test_replay_renders_a_sample_by_default():
    at = open_page("pages/replay.py")
    assert at.success and "step(s)" in shown(at.success[0].value)
    assert metrics(at)["count"] != "0"
    assert len(nav_table(at)) > 0


def test_replay_upload_per_message_then_per_turn_and_refire():
    at = open_page("pages/replay.py")
    data = (SAMPLES / "imports" / "openai_chat.json").read_bytes()
    at.file_uploader(key="r_upload").upload("openai_chat.json", data, "application/json").run()
    assert not at.exception, at.exception
    assert shown(at.success[0].value).startswith("Showing your upload openai_chat.json: 13 step(s)")
    # The recording re-fires a tool result: one step is a dropped duplicate.
    frame = nav_table(at)
    assert (frame["decisions"] == "duplicate result").sum() == 1

    at.segmented_control(key="r_per").set_value("turn").run()
    assert not at.exception
    assert shown(at.success[0].value).startswith("Showing your upload openai_chat.json: 4 step(s)")

    at.selectbox(key="r_refire").select("steps").run()
    assert shown(at.success[0].value).startswith("Showing your upload openai_chat.json: 8 step(s)")
    frame = nav_table(at)
    # Re-fired tool results and assistant calls are dropped; only plain turns land again.
    refired = frame.iloc[4:]
    assert refired["decisions"].str.contains("duplicate").sum() > 0
    assert refired["appended"].sum() < frame.iloc[:4]["appended"].sum()

    at.slider(key="rstep").set_value(1).run()
    assert not at.exception
    assert metrics(at)["count"] == str(frame.iloc[0]["count"])


def test_replay_a_scenario_file_and_a_bad_file():
    at = open_page("pages/replay.py")
    data = (SAMPLES / "mem-14-full-window.json").read_bytes()
    at.file_uploader(key="r_upload").upload(
        "mem-14-full-window.json", data, "application/json"
    ).run()
    assert not at.exception
    assert metrics(at)["count"] == "3"
    assert metrics(at)["appended"] == "1"

    at = open_page("pages/replay.py")
    at.file_uploader(key="r_upload").upload(
        "broken.json", b'{"messages": [', "application/json"
    ).run()
    assert not at.exception
    said = [shown(e.value) for e in at.error]
    # not JSON says so first, with its line and column: no reason per format before it
    first = re.compile(
        r"^Cannot replay broken\.json:\s+broken\.json: not JSON \(.* line 1, column 15\)$"
    )
    assert any(first.match(e) for e in said), said


@pytest.mark.parametrize(
    ("data", "problem"),
    [
        (
            b'[{"role": "user", "content": "x", "n": ' + b"9" * 5000 + b"}]",
            "not JSON (integer too long: more than 4300 digits)",
        ),
        (
            b'{"name": "s", "steps": [], "n": ' + b"9" * 5000 + b"}",
            "not JSON (integer too long: more than 4300 digits)",
        ),
        (b"[" * 100_000, "not JSON (nested too deeply)"),
    ],
    ids=["conversation-huge-integer", "scenario-huge-integer", "deep-nesting"],
)
def test_replay_upload_json_refuses_is_an_error_not_a_traceback(data, problem):
    """json.loads raises ValueError / RecursionError for these, not a JSONDecodeError."""
    at = open_page("pages/replay.py")
    at.file_uploader(key="r_upload").upload("big.json", data, "application/json").run()
    assert not at.exception, at.exception
    errors = [shown(e.value) for e in at.error]
    assert any("Cannot replay big.json" in e and problem in e for e in errors), errors
    assert not at.success


def test_replay_window_changes_results():
    at = open_page("pages/replay.py")
    at.selectbox(key="r_sample").select("imports/openai_chat.json").run()
    assert nav_table(at)["count"].max() == 13
    at.number_input(key="r_window").set_value(3).run()
    assert not at.exception
    frame = nav_table(at)
    assert frame["count"].max() == 3
    assert frame["decisions"].str.contains("hidden append").any()


def test_replay_long_conversation_travels_and_stays_paged():
    at = open_page("pages/replay.py")
    at.selectbox(key="r_sample").select("long_conversation.jsonl").run()
    assert not at.exception, at.exception
    assert shown(at.success[0].value).startswith(
        "Showing the sample long_conversation.jsonl: 5002 step(s)"
    )
    assert len(nav_table(at)) == 5002 - 200 * 25  # the last page of 25-row pages
    assert at.number_input(key="r_page").value == 201  # the page of the last step
    at.slider(key="rstep").set_value(2500).run()
    assert not at.exception
    assert at.number_input(key="r_page").value == 100
    assert nav_table(at)["step"].tolist()[-1] == 2500
    # The selected step's buffer is drawn around its changes, not whole.
    at.session_state["r_tab"] = "Step before / after"
    at.run()
    assert any("kept entries not shown" in c.value for c in at.caption)


# --------------------------------------------------------------------------- spec examples


# --------------------------------------------------------------------------- learn MEM-14


def test_a_saved_session_loads_back_on_the_replay_page():
    from flowdrop_core.replay import replay
    from flowdrop_core.scenario import dump_scenario, load_scenario

    saved = replay(load_scenario(SAMPLES / "mem-14-refired-result.json")).to_scenario("session")
    at = open_page("pages/replay.py")
    at.file_uploader(key="r_upload").upload(
        "session.json", dump_scenario(saved).encode(), "application/json"
    ).run()
    assert not at.exception
    assert metrics(at)["count"] == "2"
    assert metrics(at)["appended"] == "0"
    assert metrics(at)["appended_any"] == "false"


def test_replay_lists_the_conversations_of_a_fine_tuning_file_and_replays_the_one_picked():
    """A JSONL file of one conversation per line: the page lists them and replays one."""
    at = open_page("pages/replay.py")
    at.selectbox(key="r_sample").select("imports/openai_finetune_drone.jsonl").run()
    assert not at.exception, at.exception
    picker = at.selectbox(key="r_conversation")
    assert picker.options == [
        "1: line 1, 3 messages",
        "2: line 2, 3 messages",
        "3: line 3, 3 messages",
    ]
    assert origin_column(at) == [f"line 1: messages[{k}]" for k in range(3)]
    picker.select(2).run()
    assert not at.exception, at.exception
    # the only alert is the health verdict: each line ends with an unanswered call
    assert [e.icon for e in at.error] == [":material/report:"]
    assert origin_column(at) == [f"line 3: messages[{k}]" for k in range(3)]
    timeline = next(df.value for df in at.dataframe if "incoming" in df.value.columns)
    cell = timeline["incoming"][1]  # cut to its column, and saying so
    assert cell.endswith("…") and "user: Can you safely bring the drone down".startswith(cell[:-1])
