"""AppTest: the Store page offers only the operator's stores, shows no password, refuses a
typed path or URL unless local path entry is on, and keeps the chosen store."""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from pathlib import Path

import pytest
from store_fixture import make_store_file
from streamlit import config
from streamlit.testing.v1 import AppTest

ROOT = Path(__file__).resolve().parents[2]
APP = str(ROOT / "app.py")
SECRET = "s3cretPW"


def folder_state(folder: Path) -> dict[str, str]:
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(folder.iterdir())}


def all_text(at: AppTest) -> str:
    """Every value and label the page's elements carry, as one string."""
    return str(at._tree)  # the protobufs of every element: labels, options, values


@pytest.fixture
def store_file(tmp_path: Path) -> Path:
    path = make_store_file(tmp_path / "team" / "buffers.sqlite3")
    for extra in path.parent.iterdir():  # as a runtime leaves it
        if extra != path:
            import shutil

            shutil.rmtree(extra) if extra.is_dir() else extra.unlink()
    return path


@pytest.fixture
def configured(monkeypatch: pytest.MonkeyPatch, store_file: Path) -> Iterator[None]:
    for var in ("FLOWDROP_STORES_FILE", "FLOWDROP_DB", "FLOWDROP_STORE_PATHS"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("FLOWDROP_REDIS_URL", f"redis://:{SECRET}@127.0.0.1:1/0")
    monkeypatch.setenv("FLOWDROP_STORES", f"team={store_file}")
    yield


def store_page(query: dict[str, str] | None = None) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=60)
    for k, v in (query or {}).items():
        at.query_params[k] = v
    at.run()
    at.switch_page("pages/store.py").run()
    assert not at.exception, at.exception
    return at


def test_only_configured_stores_and_no_password(configured: None, store_file: Path) -> None:
    at = store_page()
    picker = at.selectbox(key="s_store")
    assert picker.options == [  # names, not paths or URLs, for visitors
        "FLOWDROP_REDIS_URL · Redis · read-only",
        "team · file · read-only",
    ]
    assert not [t for t in at.text_input if t.key == "s_target"]  # nothing to type into
    assert SECRET not in all_text(at)
    picker.set_value("FLOWDROP_REDIS_URL").run()  # nothing listens there: the error is masked
    assert at.error and SECRET not in all_text(at)


def test_a_typed_path_is_refused_with_path_entry_off(configured: None, tmp_path: Path) -> None:
    other = make_store_file(tmp_path / "other.sqlite3")
    at = store_page({"store": str(other)})
    assert "Typing a path or URL is off" in at.error[0].value
    assert not at.dataframe  # nothing was opened
    assert at.selectbox(key="s_store").value is None


def test_a_configured_read_only_store_stays_byte_identical(
    configured: None, store_file: Path
) -> None:
    before = folder_state(store_file.parent)
    at = store_page({"store": "team"})
    assert len(at.dataframe[0].value) == 3
    assert at.toggle(key="s_write").proto.disabled  # configured read-only: no writes offered
    at.selectbox(key="s_slot").set_value(("session", "demo", "chat_history")).run()
    at.session_state["s_tab"] = "Journal"
    at.run()
    assert not at.exception, at.exception
    assert folder_state(store_file.parent) == before


def test_the_chosen_store_survives_a_page_switch(configured: None) -> None:
    at = store_page()
    at.selectbox(key="s_store").set_value("team").run()
    at.switch_page("pages/replay.py").run()
    at.switch_page("pages/store.py").run()
    assert not at.exception, at.exception
    assert at.selectbox(key="s_store").value == "team"
    assert len(at.dataframe[0].value) == 3


def test_path_entry_needs_a_loopback_server(
    configured: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FLOWDROP_STORE_PATHS", "1")
    was = config.get_option("server.address")
    try:
        config.set_option("server.address", "0.0.0.0")
        at = store_page()
        assert len(at.selectbox(key="s_store").options) == 2  # no "type a path" entry
        config.set_option("server.address", "127.0.0.1")
        at = store_page()
        assert len(at.selectbox(key="s_store").options) == 3
    finally:
        config.set_option("server.address", was)
