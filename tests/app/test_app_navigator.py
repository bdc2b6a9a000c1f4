"""AppTest: the navigator, following the newest step, URL state, compare, labels, spec.

Each test drives the real pages in-process: the Playground (app.py) and the
Replay and Spec examples pages. Numbers are cross-checked with the library
(flowdrop_core.inspect), never hard-coded where the library can say them.
"""

from __future__ import annotations

import hashlib
import json
import random
import re
import string
from pathlib import Path

import pytest
from apptest_helpers import paste, shown, start_app
from streamlit.testing.v1 import AppTest

from flowdrop_core.importers import load_conversation
from flowdrop_core.inspect.decisions import DecisionIndex
from flowdrop_core.inspect.session_url import PARAM, encode_session
from flowdrop_core.replay import replay_conversation

ROOT = Path(__file__).resolve().parents[2]
APP = str(ROOT / "app.py")
LONG = ROOT / "sample_data" / "long_conversation.jsonl"
TIMEOUT = 120


def start(**query: str) -> AppTest:
    return start_app(TIMEOUT, **query)


def replay_page(**query: str) -> AppTest:
    at = start(**query)
    at.switch_page("pages/replay.py").run()
    assert not at.exception, at.exception
    return at


def table(at: AppTest):
    return next(df.value for df in at.dataframe if "incoming" in df.value.columns)


def metrics(at: AppTest) -> dict[str, str]:
    return {m.label: shown(m.value) for m in at.metric[:4]}


def long_index() -> DecisionIndex:
    return DecisionIndex(replay_conversation(load_conversation(LONG)).steps)


# --------------------------------------------------------------------------- 1. follow


def test_the_selected_step_follows_appends_unless_picked():
    at = start()
    for i in range(1, 7):
        paste(at, json.dumps({"role": "user", "content": f"m{i}"}))
        assert at.slider(key="step").value == i
        assert at.query_params["step"] in (str(i), [str(i)])
        assert metrics(at)["count"] == str(i)
    at.slider(key="step").set_value(2).run()  # picked on purpose: it stays
    paste(at, '{"role": "user", "content": "m7"}')
    assert at.slider(key="step").value == 2 and metrics(at)["count"] == "2"
    at.slider(key="step").set_value(7).run()  # the newest again: it follows again
    paste(at, '{"role": "user", "content": "m8"}')
    assert at.slider(key="step").value == 8


def test_loading_the_sample_conversation_shows_its_last_step():
    at = start()
    at.button(key="pg_load_conversation").click().run()
    assert at.slider(key="step").value == 13
    assert metrics(at)["count"] == "13"


# --------------------------------------------------------------------------- 2. navigator


def test_replay_navigator_counts_filters_and_jumps_to_duplicates():
    index = long_index()
    dups = index.steps_with("duplicate_result")
    at = replay_page()
    at.selectbox(key="r_sample").select("long_conversation.jsonl").run()
    pills = at.pills(key="r_kind")
    labels = {opt.split(" · ")[0]: int(opt.split(" · ")[1]) for opt in pills.options}
    expected = {c.label: c.decisions for c in index.counts()}
    assert labels == {k: n for k, n in expected.items() if n}  # kinds with none are hidden
    at.toggle(key="r_all_kinds").set_value(True).run()  # unless asked
    pills = at.pills(key="r_kind")
    labels = {opt.split(" · ")[0]: int(opt.split(" · ")[1]) for opt in pills.options}
    assert labels == expected  # every kind, zeros included
    assert "- duplicate result: " in pills.help  # each shown kind's glossary meaning
    assert labels["duplicate result"] + labels["duplicate turn"] == 73
    assert labels["placeholder inserted"] == 7

    pills.set_value("duplicate_result").run()
    frame = table(at)
    assert (frame["decisions"].str.contains("duplicate result")).all()
    assert at.slider(key="rstep").value == dups[0]  # picking a filter jumps to its first step
    assert frame["step"].tolist() == dups[: len(frame)]  # and shows its page
    assert at.query_params["r_kind"] in ("duplicate_result", ["duplicate_result"])  # by kind id

    at.number_input(key="r_goto").set_value(1).run()  # a typed step number
    assert at.slider(key="rstep").value == 1
    at.button(key="r_next").click().run()
    assert at.slider(key="rstep").value == dups[0]
    at.button(key="r_next").click().run()
    assert at.slider(key="rstep").value == dups[1]
    at.button(key="r_prev").click().run()
    assert at.slider(key="rstep").value == dups[0]
    assert at.button(key="r_prev").disabled  # nothing before the first
    assert table(at)["step"].tolist()[0] == dups[0]  # its page is shown
    assert any(f"step 1 of {len(dups)}" in c.value for c in at.caption)
    assert at.query_params["rstep"] in (str(dups[0]), [str(dups[0])])


def test_rule_and_full_reason_per_row_in_eleven_columns():
    at = start(scenario="mem-14-full-window")
    frame = table(at)
    assert list(frame.columns) == [
        "step",
        "incoming",
        "count",
        "change",
        "parts",
        "appended",
        "appended_any",
        "decisions",
        "rules",
        "reason",
        "origin",
    ]
    row = frame.iloc[-1]
    assert row["parts"] == "1 + 0 - 1" and row["change"] == 0  # a full window explains itself
    assert row["rules"] == "MEM-14"
    assert "window of 3 evicted the oldest entry" in row["reason"]
    assert "counts 1 toward appended" in row["reason"]  # every reason, not the first only


# --------------------------------------------------------------------------- 3. URL and reset


def test_a_playground_session_round_trips_through_its_url():
    at = start()
    at.number_input(key="window").set_value(2).run()
    for i in range(1, 4):
        paste(at, json.dumps({"role": "user", "content": f"m{i}"}))
    link = dict(at.query_params)
    assert PARAM in link
    value = link[PARAM] if isinstance(link[PARAM], str) else link[PARAM][0]
    again = start(**{PARAM: value, "window": "2"})
    assert [s["append"]["content"] for s in again.session_state["pg_recipe"]["steps"]] == [
        "m1",
        "m2",
        "m3",
    ]
    assert metrics(again)["count"] == "2" and again.slider(key="step").value == 3


def test_a_bad_session_link_is_a_named_error_and_the_link_is_kept():
    at = start(**{PARAM: "1.not-a-session"})
    errors = [shown(e.value) for e in at.error]
    assert any("could not be loaded" in e and f"URL parameter '{PARAM}'" in e for e in errors)
    assert at.query_params[PARAM] in ("1.not-a-session", ["1.not-a-session"])  # not lost
    assert at.session_state["pg_recipe"]["steps"] == []


def test_a_session_too_large_for_a_link_offers_the_scenario_file():
    noise = random.Random(7)
    big = [
        {"role": "user", "content": "".join(noise.choices(string.ascii_letters, k=30))}
        for _ in range(300)
    ]
    assert not encode_session({"steps": [{"append": big}]}).fits
    at = start()
    paste(at, json.dumps(big))
    assert PARAM not in at.query_params
    assert any("too large for a link" in shown(w.value) for w in at.warning)
    assert at.get_by_key("pg_dl_too_large") is not None


def test_reset_can_be_undone():
    at = start()
    paste(at, '{"role": "user", "content": "keep me"}')
    at.button(key="pg_reset").click().run()
    assert at.session_state["pg_recipe"]["steps"] == []
    at.button(key="pg_undo_reset").click().run()
    assert at.session_state["pg_recipe"]["steps"][0]["append"]["content"] == "keep me"
    assert metrics(at)["count"] == "1"


def test_replay_sample_choice_is_read_from_the_url():
    at = replay_page(r_sample="imports/anthropic_messages.json")
    assert at.selectbox(key="r_sample").value == "imports/anthropic_messages.json"
    assert shown(at.success[0].value).startswith("Showing the sample anthropic_messages.json")


def test_an_upload_is_named_in_the_url_only_when_the_server_keeps_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    data = (ROOT / "sample_data" / "imports" / "openai_chat.json").read_bytes()
    at = replay_page()
    at.file_uploader(key="r_upload").upload("mine.json", data, "application/json").run()
    assert at.query_params["upload"] == hashlib.sha256(data).hexdigest()
    assert not any("not kept on this server" in c.value for c in at.caption)
    from inspector_ui.visitor import _upload_keeper  # read once per server: start afresh

    monkeypatch.setenv("FLOWDROP_UPLOAD_KEEP_DIR", "off")
    _upload_keeper.clear()
    try:
        at = replay_page()
        at.file_uploader(key="r_upload").upload("other.json", data + b" ", "application/json")
        at.run()
        assert "upload" not in at.query_params
        assert any("not kept on this server" in c.value for c in at.caption)
    finally:
        _upload_keeper.clear()  # the next test's server reads its own setting


# --------------------------------------------------------------------------- 4. compare


def test_settings_are_compared_not_rewritten_and_the_user_picks():
    at = start()
    at.button(key="pg_load_conversation").click().run()
    at.selectbox(key="scope").select("user").run()
    at.text_input(key="owner").input("0").run()
    # History is not rewritten: the inspector still shows the steps as made ...
    assert metrics(at)["resolved_scope_id"] == "'s-42'"
    assert not table(at)["decisions"].str.contains("refused").any()
    # ... and the compare view marks every step that would be refused.
    warnings = [shown(w.value) for w in at.warning]
    assert any("13 of 13 step(s) report differently" in w for w in warnings), warnings
    diff = next(df.value for df in at.dataframe if "differs in" in df.value.columns)
    assert len(diff) == 13 and diff["refused (other)"].eq("True").all()
    at.button(key="pg_restore").click().run()  # back to the settings the steps were made with
    assert at.session_state["scope"] == "session" and at.session_state["owner"] == "7"
    assert not any("report differently" in shown(w.value) for w in at.warning)


def test_would_a_window_of_50_have_kept_this_call():
    at = replay_page()
    at.selectbox(key="r_sample").select("long_conversation.jsonl").run()
    at.toggle(key="r_compare").set_value(True).run()
    assert not at.exception, at.exception
    assert at.number_input(key="r_cmp_window").value == 50
    warnings = [shown(w.value) for w in at.warning]
    assert any("report differently" in w for w in warnings), warnings
    fates = next(df.value for df in at.dataframe if "verdict" in df.value.columns)
    lost = {
        "evicted with its result under the other settings",
        "result left orphaned under the other settings (its call evicted)",
    }
    assert fates["verdict"].isin(lost).all()  # those first
    note = next(c.value for c in at.caption if "fare differently" in c.value)
    total, differ = (int(n) for n in re.findall(r"(\d+) call\(s\), (\d+) fare", note)[0])
    assert 0 < differ < total  # the recent calls stay under a window of 50
    at.button(key="r_adopt").click().run()
    assert at.number_input(key="r_window").value == 50
    assert metrics(at)["count"] == "50"


# --------------------------------------------------------------------------- 5. labels, chat


def test_chat_view_shows_call_names_and_arguments_and_labels_are_readable():
    at = start()
    at.button(key="pg_load_conversation").click().run()
    frame = table(at)
    calls = frame[frame["incoming"].str.startswith("assistant calls")]
    assert len(calls) > 0 and not frame["incoming"].str.contains("null").any()
    step = int(calls.iloc[0]["step"])
    at.slider(key="step").set_value(step).run()
    at.session_state["pg_tab"] = "Step before / after"  # only the open tab runs
    at.run()
    assert not at.exception, at.exception
    texts = [t.value for t in at.text]
    assert any(t.startswith("calls ") and "(" in t and ")" in t for t in texts), texts
    name = next(t for t in texts if t.startswith("calls ")).removeprefix("calls ").split("(")[0]
    cell = calls.iloc[0]["incoming"]  # the table's cell: the same label, cut with "…" if long
    whole = f"assistant calls {name}("
    assert cell.startswith(whole) or (cell.endswith("…") and whole.startswith(cell[:-1]))


# --------------------------------------------------------------------------- 6. spec, paste


def test_a_pasted_message_with_no_role_gets_its_cause_first():
    at = start()
    paste(at, '{"content": "hello"}')
    errors = [shown(e.value) for e in at.error]
    assert any("pasted text: incoming[0]: missing 'role'." in e for e in errors), errors
    first = next(e for e in errors if "missing 'role'" in e)
    assert first.index("missing 'role'") < first.index("no known format")


def test_the_replay_store_keeps_a_step_budget_not_only_a_count():
    """RSS target: a fourth 20,000-step replay evicts the oldest instead of growing the store."""
    from types import SimpleNamespace

    from inspector_ui.cache import _TimelineLRU

    store = _TimelineLRU(size=8, max_steps=40_000)
    for window in (0, 50, 200, 1_000):
        store.put(("big", window), SimpleNamespace(steps=[None] * 20_000))  # type: ignore[arg-type]
    assert list(store.items) == [("big", 200), ("big", 1_000)]
    store.put(("huge",), SimpleNamespace(steps=[None] * 90_000))  # type: ignore[arg-type]
    assert list(store.items) == [("huge",)]  # the newest always stays


def test_table_cells_are_clipped_under_the_string_dtype():
    """clip_frame clipped only object columns; pandas 3 gives text columns the str dtype."""
    import pandas as pd

    from inspector_ui.display import CLIP, clip_frame

    frame = pd.DataFrame({"incoming": ["x" * (CLIP + 500)], "step": [1]})
    clipped = clip_frame(frame)["incoming"][0]
    assert len(clipped) < CLIP + 100 and "500 characters clipped" in clipped


def test_search_finds_a_call_id_and_jumps_between_its_steps():
    from flowdrop_core.inspect.search import search_timeline

    timeline = replay_conversation(load_conversation(LONG))
    want = sorted({h.step for h in search_timeline(timeline, "get_weather")})
    at = replay_page()
    at.selectbox(key="r_sample").select("long_conversation.jsonl").run()
    at.text_input(key="r_search").input("get_weather").run()
    assert not at.exception, at.exception
    assert any(
        c.value.endswith(f"in {len(want)} step(s).") and c.value.startswith("500 match")
        for c in at.caption
    )
    hits = next(df.value for df in at.dataframe if "incoming message" in df.value.columns)
    assert list(hits.columns) == ["step", "incoming message", "field", "text"]
    at.number_input(key="r_goto").set_value(want[0]).run()
    at.button(key="r_search_next").click().run()
    assert at.slider(key="rstep").value == want[1]
    at.button(key="r_search_prev").click().run()
    assert at.slider(key="rstep").value == want[0]
