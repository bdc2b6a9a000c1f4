"""AppTest: the Store page over a SQLite file with three slots and a journal."""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

import pytest
from apptest_helpers import path_entry  # noqa: F401 - autouse: a typed store per test
from store_fixture import SLOTS, make_store_file
from streamlit.testing.v1 import AppTest

from flowdrop_core.journal.truth import journal_gap
from flowdrop_core.storage import SQLiteStore
from flowdrop_core.store_browser import open_browser

ROOT = Path(__file__).resolve().parents[2]
APP = str(ROOT / "app.py")
TIMEOUT = 60


def shown(markdown: str) -> str:
    return re.sub(r"\\(.)", r"\1", markdown)


def digest(path: Path) -> str:
    """The file and its WAL, byte for byte."""
    wal = path.with_name(path.name + "-wal")
    data = path.read_bytes() + (wal.read_bytes() if wal.exists() else b"")
    return hashlib.sha256(data).hexdigest()


@pytest.fixture
def store_file(tmp_path: Path) -> Path:
    return make_store_file(tmp_path / "buffers.sqlite3")


def open_store_page(target: str) -> AppTest:
    from inspector_ui.store import TYPE_OWN

    at = AppTest.from_file(APP, default_timeout=TIMEOUT).run()
    at.switch_page("pages/store.py").run()
    assert not at.exception, at.exception
    at.selectbox(key="s_store").set_value(TYPE_OWN).run()
    at.text_input(key="s_target").set_value(target).run()
    assert not at.exception, at.exception
    return at


def open_tab(at: AppTest, label: str) -> AppTest:
    """Open one of the slot's tabs (only the open tab runs) and rerun."""
    at.session_state["s_tab"] = label
    at.run()
    assert not at.exception, at.exception
    return at


def test_lists_the_three_slots_with_counts_and_journal(store_file: Path) -> None:
    at = open_store_page(str(store_file))
    frame = at.dataframe[0].value
    assert [
        tuple(r) for r in frame[["scope", "scope id", "key"]].itertuples(index=False)
    ] == sorted(SLOTS)
    by_scope = frame.set_index("scope")
    assert by_scope.loc["session", "count"] == 4  # the window of 4 over the recorded run
    assert by_scope.loc["user", "count"] == 1 and by_scope.loc["workflow", "count"] == 2
    assert by_scope.loc["session", "journal"] == 9 and by_scope.loc["user", "journal"] == 0
    assert frame["last write"].notna().all()
    assert "3 slot(s), sqlite store, read-only." in at.caption[1].value


def test_filter_keeps_matching_slots(store_file: Path) -> None:
    at = open_store_page(str(store_file))
    at.text_input(key="s_filter").set_value("ALICE").run()
    frame = at.dataframe[0].value
    assert list(frame["scope id"]) == ["alice"]
    at.text_input(key="s_filter").set_value("nothing like it").run()
    assert len(at.dataframe[0].value) == 0
    assert any("No slot matches" in i.value for i in at.info)


def test_opens_a_buffer_with_the_step_entry_view(store_file: Path) -> None:
    at = open_store_page(str(store_file))
    at.selectbox(key="s_slot").set_value(("user", "alice", "chat_history")).run()
    assert not at.exception, at.exception
    # the content is data: shown as text, never as markup
    assert "<b>alice</b> writes" in [t.value for t in at.text]
    assert at.chat_message and "**Buffer** (1 entries)" in [m.value for m in at.markdown]


def test_replays_the_journal_in_the_timeline(store_file: Path) -> None:
    at = open_store_page(str(store_file))
    at.selectbox(key="s_slot").set_value(("session", "demo", "chat_history")).run()
    assert not at.exception, at.exception
    assert not any("replayed" in shown(s.value) for s in at.success)  # the Buffer tab only
    open_tab(at, "Journal")
    assert any(
        "Records 1..9 replayed: every step reports what was recorded." in shown(s.value)
        for s in at.success
    )
    timeline = next(d.value for d in at.dataframe if "appended" in d.value.columns)
    assert len(timeline) == 9
    assert timeline["decisions"].str.contains("hidden append").sum() >= 1  # hidden appends
    assert at.slider(key="s_step").value == 9
    at.slider(key="s_step").set_value(4).run()
    assert not at.exception, at.exception


def test_read_only_by_default_and_nothing_changes(store_file: Path) -> None:
    before = digest(store_file)
    at = open_store_page(str(store_file))
    at.selectbox(key="s_slot").set_value(("workflow", "wf-1", "notes")).run()
    open_tab(at, "Write")
    assert any("Read-only" in i.value for i in at.info)
    assert not [b for b in at.button if b.key in ("s_append", "s_clear")]
    assert digest(store_file) == before


def test_writes_need_the_switch(store_file: Path) -> None:
    at = open_store_page(str(store_file))
    at.toggle(key="s_write").set_value(True).run()
    at.selectbox(key="s_slot").set_value(("workflow", "wf-1", "notes")).run()
    open_tab(at, "Write")
    at.text_area(key="s_append_text").set_value('{"role": "user", "content": "note 3"}').run()
    at.button(key="s_append").click().run()
    assert not at.exception, at.exception
    assert any("count 3, appended 1" in shown(s.value) for s in at.success)
    value, _ = SQLiteStore(store_file).get("workflow", "wf-1", "notes")
    assert [m["content"] for m in value] == ["note 1", "note 2", "note 3"]


def test_bad_target_is_a_clear_error(tmp_path: Path) -> None:
    at = open_store_page(str(tmp_path / "missing.sqlite3"))
    assert at.error and "no SQLite store at" in shown(at.error[0].value)


def test_browses_a_redis_server_too(redis_url: str) -> None:
    from store_fixture import fill

    from flowdrop_core.storage.redis_store import RedisStore

    fill(RedisStore(redis_url))
    at = open_store_page(redis_url)
    frame = at.dataframe[0].value
    assert list(frame["count"]) == [4, 1, 2] and list(frame["journal"]) == [9, 0, 0]
    assert "3 slot(s), redis store, read-only." in at.caption[1].value
    open_tab(at, "Journal")
    assert any("Records 1..9 replayed" in shown(s.value) for s in at.success)


def test_a_write_outside_the_journal_shows_as_soon_as_the_slot_is_read(store_file: Path) -> None:
    slot = ("session", "demo", "chat_history")
    at = open_store_page(str(store_file))
    at.selectbox(key="s_slot").set_value(slot).run()
    assert not any("outside the journal" in shown(w.value) for w in at.warning)  # in step
    store = SQLiteStore(store_file)
    value, _ = store.get(*slot)
    store.set(*slot, [*value, {"role": "user", "content": "written by hand", "metadata": {}}])
    store.close()
    at.run()  # the Buffer tab: the slot is read, and its revision is not the journal's last
    said = [shown(w.value) for w in at.warning if "outside the journal" in w.value]
    assert said and "after record 9" in said[0] and "holds 5 entries" in said[0]
    assert "with count 4" in said[0]
    open_tab(at, "Journal")
    assert not any("replayed" in shown(s.value) for s in at.success)
    assert any("the slot changed after the last record" in shown(i.value) for i in at.info)


def test_the_write_tab_journals_by_default(store_file: Path) -> None:
    slot = ("workflow", "wf-1", "notes")
    at = open_store_page(str(store_file))
    at.toggle(key="s_write").set_value(True).run()
    at.selectbox(key="s_slot").set_value(slot).run()
    open_tab(at, "Write")
    journal_size = at.number_input(key="s_journal").value
    assert journal_size is not None and journal_size > 0
    at.button(key="s_append").click().run()
    assert not at.exception, at.exception
    browser = open_browser(str(store_file))
    records = browser.records(slot)
    assert [r.seq for r in records] == [1] and records[0].count == 3
    assert journal_gap(browser.store.revision(*slot), records) is None  # the slot is in step
