"""AppTest: the Store page's Follow switch (one follower per session, seats bounded)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from apptest_helpers import path_entry  # noqa: F401 - autouse: a typed store per test
from store_fixture import make_store_file
from streamlit.testing.v1 import AppTest

from flowdrop_core.conversation import ConversationBuffer
from flowdrop_core.storage import SQLiteStore
from inspector_ui import follow

ROOT = Path(__file__).resolve().parents[2]
APP = str(ROOT / "app.py")


def journal_page(target: str) -> AppTest:
    from inspector_ui.store import TYPE_OWN

    at = AppTest.from_file(APP, default_timeout=60).run()
    at.switch_page("pages/store.py").run()
    at.selectbox(key="s_store").set_value(TYPE_OWN).run()
    at.text_input(key="s_target").set_value(target).run()
    at.session_state["s_tab"] = "Journal"
    at.run()
    assert not at.exception, at.exception
    return at


def health(at: AppTest) -> str:
    """The health panel's summary line (Markdown escapes removed)."""
    texts = [e.value.replace("\\", "") for e in [*at.success, *at.warning, *at.error]]
    return next(t for t in texts if re.search(r"finding\(s\) in \d+ message", t))


def captions(at: AppTest) -> str:
    return "\n".join(c.value for c in at.caption)


def test_follow_reads_new_records_and_stops_when_switched_off(tmp_path: Path) -> None:
    path = make_store_file(tmp_path / "buffers.sqlite3")
    at = journal_page(str(path))
    at.toggle(key="s_follow").set_value(True).run()
    assert not at.exception, at.exception
    assert "Following: 0 new append(s)" in captions(at)
    assert "3 finding(s) in 9 message(s)" in health(at)
    store = SQLiteStore(path)  # another writer, as a running agent would be
    buf = ConversationBuffer(scope="session", max_messages=4, store=store, journal=100)
    call = {"id": "c9", "type": "function", "function": {"name": "search", "arguments": "{}"}}
    buf.append({"role": "assistant", "content": None, "tool_calls": [call]}, {"session_id": "demo"})
    buf.append({"role": "user", "content": "one more"}, {"session_id": "demo"})
    store.close()
    at.run()
    assert "Following: 2 new append(s)" in captions(at)
    assert any("Records 1..11 replayed" in s.value for s in at.success)
    assert "in 11 message(s)" in health(at)  # the health panel follows the new steps
    at.toggle(key="s_follow").set_value(False).run()
    assert "s_follower" not in at.session_state
    assert "Following:" not in captions(at)


def test_a_session_beyond_the_bound_is_told_and_reads_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(follow.SEATS_ENV, "0")
    at = journal_page(str(make_store_file(tmp_path / "buffers.sqlite3")))
    at.toggle(key="s_follow").set_value(True).run()
    assert any(follow.SEATS_ENV in w.value for w in at.warning)
    assert any("Records 1..9 replayed" in s.value for s in at.success)


def test_seats_are_bounded_and_lapse(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(follow.SEATS_ENV, "2")
    monkeypatch.setattr(follow, "_seats", {})
    assert follow.take_seat("a", now=0.0) and follow.take_seat("b", now=0.0)
    assert not follow.take_seat("c", now=1.0)
    assert follow.take_seat("a", now=1.0)  # a renewal, not a new seat
    assert follow.take_seat("c", now=100.0)  # a and b stopped renewing: their seats lapsed
    monkeypatch.setenv(follow.SEATS_ENV, "many")
    with pytest.raises(ValueError, match="FLOWDROP_FOLLOW_SESSIONS='many'"):
        follow.take_seat("d")


def test_a_followed_framework_thread_shows_each_new_turn_and_its_health(tmp_path: Path) -> None:
    """An Agents session file, read-only: the framework adds a turn, the next run shows it."""
    import asyncio

    from agents import SQLiteSession
    from framework_files import agents_file, folder_state

    path = agents_file(tmp_path / "agents.sqlite")
    at = journal_page(str(path))  # a framework file: its sessions, not the Journal tab
    at.selectbox(key="sf_thread").set_value("clean").run()
    at.toggle(key="sf_follow").set_value(True).run()
    assert not at.exception, at.exception
    steps = at.session_state["sf_step_n"]
    assert any("Healthy" in s.value for s in at.success)

    async def write() -> None:  # a call left unanswered, then the next user turn
        session = SQLiteSession("clean", db_path=path)
        call = {"type": "function_call", "call_id": "x1", "name": "grep", "arguments": "{}"}
        items: list[Any] = [call, {"role": "user", "content": "still there?"}]
        await session.add_items(items)
        session.close()

    asyncio.run(write())
    written = folder_state(tmp_path)
    at.run()
    assert not at.exception, at.exception
    assert at.session_state["sf_step_n"] == steps + 2
    assert any("unanswered" in w.value or "no result" in w.value for w in at.warning)
    assert folder_state(tmp_path) == written  # read, nothing created or changed
