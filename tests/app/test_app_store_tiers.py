"""AppTest: the served Store page gives a visitor the view tier (MEM-9); only a store the
operator marked offers appends (writable) or a clear and a repair (admin, MEM-15)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from framework_files import agents_file, digest
from store_fixture import make_store_file
from streamlit import config
from streamlit.testing.v1 import AppTest

from flowdrop_core.store_browser import open_browser

ROOT = Path(__file__).resolve().parents[2]
APP = str(ROOT / "app.py")
NOTES = ("workflow", "wf-1", "notes")


@pytest.fixture
def serve(monkeypatch: pytest.MonkeyPatch) -> Iterator[Callable[[str], None]]:
    """Served to a team: no path entry, the operator's FLOWDROP_STORES only."""
    for var in (
        "FLOWDROP_STORES_FILE",
        "FLOWDROP_DB",
        "FLOWDROP_REDIS_URL",
        "FLOWDROP_STORE_PATHS",
    ):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("FLOWDROP_ADMIN", "1")  # no such grant: only the store's marking counts
    was = config.get_option("server.address")
    config.set_option("server.address", "0.0.0.0")
    yield lambda stores: monkeypatch.setenv("FLOWDROP_STORES", stores)
    config.set_option("server.address", was)


def open_store(name: str, slot: tuple[str, str, str] | None = NOTES) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=60).run()
    at.switch_page("pages/store.py").run()
    at.selectbox(key="s_store").set_value(name).run()
    if slot is not None:
        at.selectbox(key="s_slot").set_value(slot).run()
        at.session_state["s_tab"] = "Write"
        at.run()
    assert not at.exception, at.exception
    return at


def buttons(at: AppTest) -> set[str]:
    return {str(b.key) for b in at.button}


def test_a_visitor_gets_the_view_tier_even_forcing_the_switches(
    serve: Callable[[str], None], tmp_path: Path
) -> None:
    path = make_store_file(tmp_path / "b.sqlite3")
    serve(f"team={path}")
    before = digest(path)
    at = open_store("team")
    assert at.toggle(key="s_write").proto.disabled and at.toggle(key="s_admin").proto.disabled
    at.session_state["s_write"] = True  # a visitor's forged widget state
    at.session_state["s_admin"] = True
    at.run()
    assert not at.exception, at.exception
    assert any("read-only." in c.value for c in at.caption)
    assert any("Read-only" in i.value for i in at.info)
    assert not buttons(at) & {"s_append", "s_clear"}
    assert digest(path) == before


def test_a_writable_store_appends_but_offers_no_clear(
    serve: Callable[[str], None], tmp_path: Path
) -> None:
    path = make_store_file(tmp_path / "b.sqlite3")
    serve(f"team=writable:{path}")
    at = open_store("team")
    assert at.toggle(key="s_admin").proto.disabled
    at.toggle(key="s_write").set_value(True).run()
    assert "s_append" in buttons(at) and "s_clear" not in buttons(at)
    assert any("needs the administrative tier (MEM-15)" in c.value for c in at.caption)
    at.session_state["s_admin"] = True  # forged: the operator did not grant admin
    at.run()
    assert "s_clear" not in buttons(at)
    assert len(open_browser(str(path)).buffer(NOTES)) == 2


def test_an_admin_store_clears_after_saying_what_and_records_it(
    serve: Callable[[str], None], tmp_path: Path
) -> None:
    path = make_store_file(tmp_path / "b.sqlite3")
    serve(f"boss=admin:{path}")
    at = open_store("boss")
    at.toggle(key="s_write").set_value(True).run()
    assert "s_clear" not in buttons(at)  # drive until Admin is switched on
    at.toggle(key="s_admin").set_value(True).run()
    assert any("Clear the slot* removes its 2 entries" in c.value for c in at.caption)
    at.button(key="s_clear").click().run()
    assert not at.exception, at.exception
    assert any(
        "Cleared 2 entries; recorded as journal record 1" in s.value.replace("\\", "")
        for s in at.success
    )
    record = open_browser(str(path)).records(NOTES)[-1]
    assert (record.action, record.removed, record.by) == ("clear", 2, "the Store page (admin)")
    at.session_state["s_tab"] = "Journal"
    at.run()
    assert any("Record 1: the slot was cleared at the admin tier" in i.value for i in at.info)


def test_a_framework_file_is_repaired_only_at_the_admin_tier(
    serve: Callable[[str], None], tmp_path: Path
) -> None:
    path = agents_file(tmp_path / "agents.sqlite")
    serve(f"rw=writable:{path}; boss=admin:{path}")
    before = digest(path)
    at = open_store("rw", slot=None)
    at.toggle(key="s_write").set_value(True).run()
    at.selectbox(key="sf_thread").set_value("retried").run()
    at.session_state["sf_view"] = "Repair"
    at.run()
    assert "sf_repair" not in buttons(at)
    assert any("needs the administrative tier (MEM-15)" in i.value for i in at.info)
    assert digest(path) == before
    at.selectbox(key="s_store").set_value("boss").run()
    at.toggle(key="s_admin").set_value(True).run()
    at.button(key="sf_repair").click().run()
    assert not at.exception, at.exception
    assert (tmp_path / "agents.sqlite.flowdrop-repairs.jsonl").is_file()
