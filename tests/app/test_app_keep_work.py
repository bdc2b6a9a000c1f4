"""AppTest: the user's work survives a page switch and a reload, and a settings change that
runs nothing is a compare like any other (the timeline as made stays)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

import inspector_ui.visitor as visitor

ROOT = Path(__file__).resolve().parents[2]
APP = str(ROOT / "app.py")
DATA = (ROOT / "sample_data" / "imports" / "openai_chat.json").read_bytes()


def shown(markdown: str) -> str:
    return re.sub(r"\\(.)", r"\1", markdown.replace("\u00a0", " "))


def replay_page() -> AppTest:
    at = AppTest.from_file(APP, default_timeout=60).run()
    at.switch_page("pages/replay.py").run()
    assert not at.exception, at.exception
    return at


def upload(at: AppTest, name: str = "my_recording.json") -> AppTest:
    at.file_uploader(key="r_upload").upload(name, DATA, "application/json").run()
    assert not at.exception, at.exception
    assert shown(at.success[0].value).startswith(f"Showing your upload {name}: 13 step(s)")
    return at


def test_an_upload_survives_a_page_switch() -> None:
    at = upload(replay_page())
    at.switch_page("pages/spec_examples.py").run()
    at.switch_page("pages/replay.py").run()
    assert not at.exception, at.exception
    assert shown(at.success[0].value).startswith(
        "Showing your upload my_recording.json: 13 step(s)"
    )
    assert any("Showing your upload my_recording.json" in shown(c.value) for c in at.caption)
    assert at.selectbox(key="r_sample").disabled
    at.button(key="r_forget").click().run()  # back to the samples
    assert shown(at.success[0].value).startswith("Showing the sample ")
    assert not at.selectbox(key="r_sample").disabled


def test_an_upload_survives_a_reload_of_the_same_browser(monkeypatch: pytest.MonkeyPatch) -> None:
    # A reload is a new Streamlit session from the same browser (the same XSRF cookie).
    keep = visitor.BrowserKeep()
    monkeypatch.setattr(visitor, "_keep", lambda: keep)
    monkeypatch.setattr(visitor, "browser_id", lambda: "browser-A")
    upload(replay_page())
    again = replay_page()  # a fresh session
    assert shown(again.success[0].value).startswith(
        "Showing your upload my_recording.json: 13 step(s)"
    )
    monkeypatch.setattr(visitor, "browser_id", lambda: "browser-B")
    other = replay_page()  # another browser sees only the samples
    assert shown(other.success[0].value).startswith("Showing the sample ")


def test_removing_the_upload_forgets_it() -> None:
    at = upload(replay_page())
    at.file_uploader(key="r_upload").clear().run() if hasattr(
        at.file_uploader(key="r_upload"), "clear"
    ) else pytest.skip("this Streamlit's AppTest cannot clear an uploader")
    assert not at.exception, at.exception
    assert shown(at.success[0].value).startswith("Showing the sample ")


def test_a_scope_that_runs_nothing_keeps_the_timeline() -> None:
    at = AppTest.from_file(APP, default_timeout=60).run()
    at.selectbox(key="pg_example").select("mem-14-full-window")
    at.button(key="pg_load_example").click().run()
    assert not at.exception, at.exception
    steps = len(next(df.value for df in at.dataframe if "incoming" in df.value.columns))
    assert steps > 0
    at.selectbox(key="scope").select("user").run()  # no user id: the buffer has no slot
    assert not at.exception, at.exception
    assert not [e for e in at.error if "Cannot run this session" in e.value]
    assert any("Under the new settings nothing runs" in shown(w.value) for w in at.warning)
    caption = next(c.value for c in at.caption if "Made with:" in c.value)
    assert "Changed: scope" in shown(caption)
    # The timeline as made is still there, step for step.
    assert len(next(df.value for df in at.dataframe if "incoming" in df.value.columns)) == steps
    assert at.button(key="pg_adopt").disabled
    at.button(key="pg_restore").click().run()
    assert not [w for w in at.warning if "nothing runs" in w.value]
