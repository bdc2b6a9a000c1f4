"""AppTest: the Store page on files the Agents SDK and LangGraph wrote (read-only, then repair)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from apptest_helpers import path_entry, shown  # noqa: F401 - autouse: a typed store per test
from framework_files import agents_file, digest, langgraph_file
from streamlit.testing.v1 import AppTest

ROOT = Path(__file__).resolve().parents[2]
APP = str(ROOT / "app.py")
TIMEOUT = 90


def open_page(target: Path | str) -> AppTest:
    from inspector_ui.store import TYPE_OWN

    at = AppTest.from_file(APP, default_timeout=TIMEOUT).run()
    at.switch_page("pages/store.py").run()
    at.selectbox(key="s_store").set_value(TYPE_OWN).run()
    at.text_input(key="s_target").set_value(str(target)).run()
    assert not at.exception, at.exception
    return at


def test_agents_file_lists_sessions_with_health_and_opens_the_timeline(tmp_path: Path) -> None:
    path = agents_file(tmp_path / "agents.sqlite")
    before = digest(path)
    at = open_page(path)
    frame = at.dataframe[0].value
    health = dict(zip(frame["session"], frame["health"], strict=True))
    assert health == {
        "retried": "duplicate_result x1",
        "interrupted": "unanswered_call x1",
        "clean": "healthy",
    }
    assert any("SQLiteSession file, 3 session(s), read-only" in c.value for c in at.caption)
    at.selectbox(key="sf_thread").set_value("retried").run()
    assert not at.exception, at.exception
    said = [shown(w.value) for w in at.warning]  # one line per finding, as doctor prints it
    assert any("duplicate_result [" in w and "GR-MEM dropped it as a duplicate" in w for w in said)
    assert at.session_state["sf_step"] >= 1  # the timeline of the stored entries is shown
    at.session_state["sf_view"] = "Repair"
    at.run()
    assert any("Read-only" in i.value for i in at.info)
    assert digest(path) == before


def test_langgraph_repair_from_the_page(tmp_path: Path) -> None:
    path = langgraph_file(tmp_path / "checkpoints.sqlite")
    at = open_page(path)
    at.toggle(key="s_admin").set_value(True).run()  # a typed local path: the operator's own
    at.selectbox(key="sf_thread").set_value("t1").run()
    at.session_state["sf_view"] = "Repair"
    at.run()
    shown = "\n".join(c.value for c in at.code)
    assert "t1: 2 changes to write:" in shown and "remove   t1.messages[3]" in shown
    at.button(key="sf_repair").click().run()
    assert not at.exception, at.exception
    assert any("duplicate_result x1" in s.value.replace("\\", "") for s in at.success)
    assert list(tmp_path.glob("checkpoints.sqlite.bak-*"))
    at.run()
    frame = at.dataframe[0].value
    assert dict(zip(frame["thread"], frame["health"], strict=True))["t1"] == "healthy"


def test_a_checkpointer_on_postgres_is_repaired_from_the_page(postgres_server: Any) -> None:
    from framework_files import database, langgraph_postgres

    url = langgraph_postgres(database(postgres_server.url, "lg_page"))
    at = open_page(url)
    assert any("PostgresSaver checkpointer, 3 thread(s), read-only" in c.value for c in at.caption)
    at.toggle(key="s_admin").set_value(True).run()  # a typed URL: the operator's own
    at.selectbox(key="sf_thread").set_value("t1").run()
    at.session_state["sf_view"] = "Repair"
    at.run()
    assert "t1: 2 changes to write:" in "\n".join(c.value for c in at.code)
    at.button(key="sf_repair").click().run()
    assert not at.exception, at.exception
    assert any("one transaction" in s.value for s in at.success)
    at.run()
    frame = at.dataframe[0].value
    assert dict(zip(frame["thread"], frame["health"], strict=True))["t1"] == "healthy"
