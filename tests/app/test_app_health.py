"""AppTest: the health panel, the Tool calls tab, provider-error paste and filter links.

The pages run in-process; every expected number comes from the library
(flowdrop_core.inspect.health / lifecycle), never typed in by hand.
"""

from __future__ import annotations

from pathlib import Path

from apptest_helpers import shown
from streamlit.testing.v1 import AppTest

from flowdrop_core.importers import load_conversation
from flowdrop_core.inspect.decisions import DecisionIndex
from flowdrop_core.inspect.health import health
from flowdrop_core.replay import replay_conversation

ROOT = Path(__file__).resolve().parents[2]
APP = str(ROOT / "app.py")
BROKEN = "imports/broken_history.json"
LONG = ROOT / "sample_data" / "long_conversation.jsonl"
TIMEOUT = 120


def replay_page(**query: str) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.run()
    at.switch_page("pages/replay.py")
    for name, value in query.items():
        at.query_params[name] = value
    at.run()
    assert not at.exception, at.exception
    return at


def broken_report():
    return health(replay_conversation(load_conversation(ROOT / "sample_data" / BROKEN)))


def test_the_panel_says_why_a_provider_rejects_and_jumps_to_a_finding() -> None:
    report = broken_report()
    at = replay_page(r_sample=BROKEN)
    assert any(shown(e.value) == report.summary() for e in at.error)
    picker = at.selectbox(key="r_finding")
    assert len(picker.options) == len(report.findings)
    healed = next(k for k, f in enumerate(report.findings) if f.kind == "unanswered_call")
    finding = report.findings[healed]
    assert finding.jump_step == 6 and finding.step == 5  # healed one step after it came in
    picker.set_value(healed).run()
    assert not at.exception, at.exception
    assert at.slider(key="rstep").value == finding.jump_step
    assert at.query_params["rstep"] in (str(finding.jump_step), [str(finding.jump_step)])
    table = next(df.value for df in at.dataframe if "in the file" in df.value.columns)
    assert table["in the file"].tolist() == [f.origin for f in report.findings]
    assert table["step (1-based)"].tolist() == [f.step for f in report.findings]


def test_a_finding_opens_its_call_in_the_lifecycle_view() -> None:
    report = broken_report()
    at = replay_page(r_sample=BROKEN)
    k = next(k for k, f in enumerate(report.findings) if f.kind == "late_result")
    at.selectbox(key="r_finding").set_value(k).run()
    at.button(key="r_finding_calls").click().run()
    assert not at.exception, at.exception
    assert at.session_state["r_tab"] == "Tool calls"
    assert at.text_input(key="r_calls_id").value == "call_late"
    rows = next(df.value for df in at.dataframe if "declared at step" in df.value.columns)
    assert rows["call id"].tolist() == ["call_late"]
    assert rows["status"].tolist() == ["replaced"]
    assert rows["placeholder inserted at step"].tolist() == [12]
    assert rows["placeholder replaced at step"].tolist() == [13]


def test_the_lifecycle_view_filters_by_status() -> None:
    at = replay_page(r_sample=BROKEN)
    at.session_state["r_tab"] = "Tool calls"
    at.run()
    rows = next(df.value for df in at.dataframe if "declared at step" in df.value.columns)
    assert rows["call id"].tolist() == ["call_a1", "call_Rf4m", "call_zz9", "call_late"]
    at.selectbox(key="r_calls_status").set_value("healed").run()
    rows = next(df.value for df in at.dataframe if "declared at step" in df.value.columns)
    assert rows["call id"].tolist() == ["call_Rf4m"]
    assert rows["declared at step"].tolist() == [5]


def test_a_pasted_provider_error_names_the_rule_and_jumps_to_its_cause() -> None:
    at = replay_page(r_sample=BROKEN)
    # the text as OpenAI returns it (github.com/BerriAI/litellm/issues/10083), our call id
    at.text_area(key="r_perr").input(
        "An assistant message with 'tool_calls' must be followed by tool messages responding "
        "to each 'tool_call_id'. The following tool_call_ids did not have response messages: "
        "call_Rf4m"
    ).run()
    assert not at.exception, at.exception
    said = " ".join(shown(w.value) for w in at.warning)
    assert (
        "OpenAI" in said and "MEM-3" in said and "unanswered_call at messages[4] · step 5" in said
    )
    at.button(key="r_perr_go_0").click().run()
    assert at.slider(key="rstep").value == 6


def test_a_filter_link_by_kind_id_filters_and_a_bad_one_says_so() -> None:
    index = DecisionIndex(replay_conversation(load_conversation(LONG)).steps)
    dups = index.steps_with("duplicate_result")
    at = replay_page(r_sample="long_conversation.jsonl", r_kind="duplicate_result")
    assert at.pills(key="r_kind").value == "duplicate_result"
    frame = next(df.value for df in at.dataframe if "incoming" in df.value.columns)
    assert set(frame["step"]) <= set(dups) and len(frame) > 0
    # an older link stored the label with its count; it still reads, and becomes the id
    at = replay_page(r_sample="long_conversation.jsonl", r_kind="duplicate result · 1")
    assert at.pills(key="r_kind").value == "duplicate_result"
    assert at.query_params["r_kind"] in ("duplicate_result", ["duplicate_result"])
    at = replay_page(r_sample="long_conversation.jsonl", r_kind="banana")
    assert at.pills(key="r_kind").value is None
    assert any("r_kind=banana is not a decision kind" in shown(w.value) for w in at.warning)
    assert "r_kind" not in at.query_params


def test_the_playground_shows_the_panel_for_its_steps() -> None:
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.run()
    at.button(key="pg_load_conversation").click().run()
    assert not at.exception, at.exception
    picker = at.selectbox(key="pg_finding")
    assert picker.options, "the sample conversation has a re-sent result and an unanswered call"
    picker.set_value(0).run()
    assert at.slider(key="step").value == int(picker.options[0].split()[1])


def test_compare_says_which_calls_lose_their_result_and_which_results_are_orphaned() -> None:
    at = replay_page(r_sample="imports/openai_chat.json")
    at.toggle(key="r_compare").set_value(True).run()
    at.number_input(key="r_cmp_window").set_value(2).run()
    assert not at.exception, at.exception
    text = "\n".join(t.value for t in at.text)
    assert "window 2, no re-fire: 3 call(s) lose their result, the first at step 7" in text
    assert "4 result(s) left orphaned (call evicted, result kept" in text
    assert "as made: no call loses its result; no result left orphaned." in text
