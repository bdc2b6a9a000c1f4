"""AppTest: import notes shown next to the upload (Replay) and the paste box (Playground)."""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from pathlib import Path

from streamlit.testing.v1 import AppTest

from flowdrop_core.importers import load_conversation
from inspector_ui.notes import NOTE_COLUMNS

ROOT = Path(__file__).resolve().parents[2]
APP = str(ROOT / "app.py")
TIMEOUT = 60
SAMPLE = "imports/openai_responses.json"  # a reasoning item: one note


def note_tables(at: AppTest) -> list:
    return [d.value for d in at.dataframe if list(d.value.columns) == list(NOTE_COLUMNS)]


def captions(at: AppTest) -> str:
    return plain(c.value for c in at.caption)


def plain(values: Iterable[str]) -> str:
    """Elements' text as read: the Markdown escapes of the plain-text helper removed."""
    text = " ".join(values)
    return re.sub(r"\\(.)", r"\1", text)


def test_replay_shows_the_samples_import_notes_next_to_the_upload():
    expected = load_conversation(ROOT / "sample_data" / SAMPLE).notes_as_dicts()
    assert expected, "the sample must have notes for this test to mean anything"
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.query_params["r_sample"] = SAMPLE
    at.run()
    at.switch_page("pages/replay.py").run()
    assert not at.exception, at.exception
    assert f"{len(expected)} import note: parts of the recording that are not messages" in (
        captions(at)
    )
    (table,) = note_tables(at)
    assert table.shape[0] == len(expected)
    row = table.iloc[0]
    assert (row["where"], row["what"], row["why"]) == (
        expected[0]["where"],
        expected[0]["what"],
        expected[0]["why"],
    )
    assert row["content"] == expected[0]["content"]


def test_replay_shows_no_notes_for_a_recording_without_any():
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.query_params["r_sample"] = "imports/openai_chat.json"
    at.run()
    at.switch_page("pages/replay.py").run()
    assert not at.exception, at.exception
    assert "import note" not in captions(at)
    assert note_tables(at) == []


def test_playground_paste_shows_the_importers_notes_and_keeps_the_text():
    batch = [
        {"role": "user", "content": "run it"},
        {"role": "assistant", "content": [{"type": "code", "text": "print(1)"}]},
    ]
    text = json.dumps(batch)
    at = AppTest.from_file(APP, default_timeout=TIMEOUT).run()
    at.text_area(key="pg_paste").input(text)
    at.button(key="pg_append").click().run()
    assert not at.exception, at.exception
    assert not at.error, [e.value for e in at.error]
    assert "1 import note: parts of the recording that are not messages" in captions(at)
    (table,) = note_tables(at)
    assert table.iloc[0]["where"] == "[1].content[0]"
    assert "code" in table.iloc[0]["what"]
    assert at.text_area(key="pg_paste").value == text


def test_playground_paste_of_plain_messages_shows_no_notes_and_bad_input_keeps_the_text():
    at = AppTest.from_file(APP, default_timeout=TIMEOUT).run()
    at.text_area(key="pg_paste").input('[{"role": "user", "content": "hi"}, {"content": "x"}]')
    at.button(key="pg_append").click().run()
    assert "incoming[1]: missing 'role'" in plain(e.value for e in at.error)
    assert note_tables(at) == []
    assert "x" in at.text_area(key="pg_paste").value
