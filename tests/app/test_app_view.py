"""Plain pytest for ``inspector_ui.display`` and ``inspector_ui.samples``: Streamlit-free helpers."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from flowdrop_core.replay import replay
from flowdrop_core.scenario import load_scenario
from inspector_ui.display import (
    TIMELINE_COLUMNS,
    chart_frame,
    clip_text,
    clip_value,
    compose_message,
    context_from_fields,
    entry_call_ids,
    entry_text,
    event_frame,
    focus,
    md_escape,
    page_count,
    page_of,
    tagged_frame,
    timeline_frame,
)
from inspector_ui.samples import SAMPLE_DIR, conversation_samples, group_by_rule, sample_scenarios

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("module", ["display.py", "samples.py"])
def test_display_helpers_import_no_ui_framework(module):
    """Plain helpers stay plain: they are tested here without Streamlit."""
    tree = ast.parse((ROOT / "inspector_ui" / module).read_text())
    imported = {
        alias.name.split(".")[0]
        for node in ast.walk(tree)
        if isinstance(node, ast.Import | ast.ImportFrom)
        for alias in (
            node.names if isinstance(node, ast.Import) else [ast.alias(node.module or "")]
        )
    }
    assert "streamlit" not in imported


def test_compose_message_follows_mem16():
    assert compose_message("operator", "hello") == {"role": "user", "content": "hello"}
    assert compose_message("user", "hi", tool_call_id="c1") == {"role": "user", "content": "hi"}
    assert compose_message("tool", "r", tool_call_id=" c1 ") == {
        "role": "tool",
        "content": "r",
        "tool_call_id": "c1",
    }
    assert compose_message("user", "   ") is None
    turn = compose_message("assistant", "", declare="c1, c2")
    assert turn is not None
    assert [c["id"] for c in turn["tool_calls"]] == ["c1", "c2"]


def test_context_from_fields_blank_is_absent():
    assert context_from_fields("", "", "") is None
    assert context_from_fields("s", "", "") == {"session_id": "s"}
    assert context_from_fields("", "0", "") == {"user_id": "0"}
    assert "session_owner_id" not in (context_from_fields("s", "7", "") or {})


def test_samples_grouped_by_first_rule_in_rule_order():
    samples = sample_scenarios()
    assert all(s.scenario is not None for s in samples), [s.error for s in samples]
    groups = group_by_rule(samples)
    rules = list(groups)
    assert "MEM-14" in rules
    numbers = [int(r.split("-")[1]) for r in rules]
    assert numbers == sorted(numbers)
    assert {s.name for s in groups["MEM-14"]} >= {"mem-14-full-window"}
    paths = conversation_samples()
    assert SAMPLE_DIR / "long_conversation.jsonl" in paths
    assert any(p.parent.name == "imports" for p in paths)


def test_timeline_frame_chart_and_paging():
    timeline = replay(load_scenario(SAMPLE_DIR / "mem-14-full-window.json"))
    frame = timeline_frame(timeline.rows())
    assert list(frame.columns) == TIMELINE_COLUMNS
    assert frame.iloc[0]["mem14_flag"] == "hidden append"
    chart = chart_frame(timeline.rows(), start_count=3)
    assert chart.to_dict("records") == [
        {"step": 0, "series": "count", "value": 3},
        {"step": 1, "series": "count", "value": 3},
        {"step": 0, "series": "cumulative appended", "value": 0},
        {"step": 1, "series": "cumulative appended", "value": 1},
    ]
    assert timeline_frame([]).empty
    assert page_count(0, 25) == 1 and page_count(26, 25) == 2
    assert page_of(0, 25) == 1 and page_of(25, 25) == 1 and page_of(26, 25) == 2


def test_entries_and_events_as_tables():
    timeline = replay(load_scenario(SAMPLE_DIR / "mem-3-heal-on-user-turn.json"))
    before, after, dropped = timeline.tagged(1)
    assert len(before) == 3 and not dropped
    table = tagged_frame(after)
    assert list(table["tag"]).count("placeholder inserted") == 1
    assert "healed placeholder" in table.loc[1, "calls"]
    events = event_frame(timeline.steps[0].events)
    assert {"MEM-3", "MEM-14"} <= set(events["rule"])
    assert entry_text({"role": "user", "content": ["a"]}) == '["a"]'
    assert entry_text({"role": "user", "content": None}) == ""
    assert entry_call_ids({"role": "assistant", "tool_calls": [{"id": "x"}]}) == "declares x"
    assert entry_call_ids("not an entry") == ""


def test_entry_call_ids_reads_ids_like_the_engine():
    """MEM-11: one reader of a call's id; "0" and blanks are no id, so the next spelling wins."""
    calls = [{"tool_call_id": "0", "id": "c1"}, {"tool_call_id": " c2 "}, {"id": "0"}]
    assert entry_call_ids({"role": "assistant", "tool_calls": calls}) == (
        'declares c1, c2, "0" (not an id, MEM-11)'
    )
    assert entry_call_ids({"role": "tool", "tool_call_id": " c1 "}) == "answers c1"
    assert entry_call_ids({"role": "tool", "metadata": {"tool_call_id": "c1"}}) == "answers c1"
    assert entry_call_ids({"role": "tool", "tool_call_id": "0"}) == (
        'answers "0" (not an id, MEM-11)'
    )


def test_focus_keeps_changes_neighbours_and_the_end():
    kept = [({"role": "user", "content": str(k)}, "kept") for k in range(100)]
    assert len(focus(kept[:10])) == 10  # short buffers are shown whole
    tagged = list(kept)
    tagged[40] = (tagged[40][0], "evicted")
    items = focus(tagged, radius=2, tail=3)
    shown = [item[0] for item in items if isinstance(item, tuple)]
    assert shown == [38, 39, 40, 41, 42, 97, 98, 99]
    gaps = [item for item in items if isinstance(item, int)]
    assert gaps == [38, 54]
    assert sum(gaps) + len(shown) == 100


def test_md_escape_makes_markup_literal():
    assert md_escape("a*b_c [d](e) `f` $g$ :red[h] <i>") == (
        "a\\*b\\_c \\[d\\]\\(e\\) \\`f\\` \\$g\\$ \\:red\\[h\\] \\<i\\>"
    )
    assert md_escape("plain words 42") == "plain words 42"


def test_md_escape_breaks_autolinks_blocks_and_span_escapes():
    """Bare URLs, e-mail addresses, blank lines and indents lose their meaning."""
    out = md_escape("see http://x.org/a www.x.org a@b.org")
    assert out == "see `http://x.org/a` `www.x.org` `a@b.org`"  # code spans: nothing is read
    out = md_escape("`id\n\n![x](http://h/p.png)\n    code\n# head")
    assert "\n\n" not in out  # no blank line: nothing ends a span or starts a block
    lines = out.split("\n")
    assert all(line.endswith("\\") for line in lines[:-1])  # hard line breaks
    assert not any(line.startswith((" ", "#", "!")) for line in lines)
    assert md_escape("a\\") == "a\\\\"  # a data backslash stays a backslash


def test_clip_text_and_value_keep_the_start_and_say_what_is_missing():
    assert clip_text("abc", 5) == ("abc", 0)
    assert clip_text("abcdef", 4) == ("abcd", 2)
    clipped = clip_value({"content": "x" * 10, "n": [1, "y" * 3]}, 8)
    assert clipped == {"content": "xxxxxxxx… [2 characters clipped]", "n": [1, "yyy"]}


def test_md_escape_adds_nothing_invisible_and_reads_back_as_the_text():
    """What a reader copies is the text: no word joiner, no zero-width character added."""
    from apptest_helpers import shown as read_back

    data = "Keep 3 message(s): see http://h.example/a?b=c, a@b.org or `www.x.org` *now* :red[x]"
    out = md_escape(data)
    assert "\u2060" not in out and "\u200b" not in out
    assert read_back(out) == data
    assert md_escape("message(s): 2") == "message\\(s\\)\\: 2"
    assert md_escape("``a`@b``") == "``` ``a`@b`` ```"  # a longer fence than the word holds


def test_controls_are_shown_not_obeyed():
    """A bidi override reads as its escape, in Markdown and in plain text; tabs stay."""
    from inspector_ui.display import shown

    text = "Done \u202eevil\u202c ok\u200b\tend"
    assert shown(text) == "Done \\u202eevil\\u202c ok\\u200b\tend"
    assert md_escape(text) == "Done \\\\u202eevil\\\\u202c ok\\\\u200b\tend"


def test_a_cell_too_narrow_says_it_is_cut_and_id_columns_hold_their_ids():
    """The grid cuts with no mark ("call_gh00031" for call_gh00031B); a cut made here ends "…"."""
    import pandas as pd

    from flowdrop_core.importers import load_conversation
    from flowdrop_core.inspect.health import health
    from flowdrop_core.replay import replay_conversation
    from inspector_ui.display import CELL_PADDING_PX, fit_cells, fit_width, text_px
    from inspector_ui.health import finding_config

    whole = "tool result for call_gh00031B"
    cut = fit_cells(pd.DataFrame({"incoming": [whole, "ok"]}), {"incoming": 120})["incoming"]
    assert cut[0].endswith("…") and whole.startswith(cut[0][:-1]) and cut[1] == "ok"
    assert text_px(cut[0]) <= 120 - CELL_PADDING_PX
    assert fit_width(["call_gh00031B", "c"]) >= text_px("call_gh00031B") + CELL_PADDING_PX

    sample = Path(__file__).resolve().parents[2] / "sample_data" / "long_conversation.jsonl"
    findings = health(replay_conversation(load_conversation(sample))).findings
    config = finding_config(findings)
    for column, texts in (
        ("call id", [f.call_id for f in findings]),
        ("kind", [f.kind for f in findings]),
    ):
        assert config[column]["width"] >= max(text_px(t or "") for t in texts) + CELL_PADDING_PX
