"""The store browser: an in-memory store lists what it holds; odd targets are clear errors."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from flowdrop_core.storage import MemoryStore, StorageError
from flowdrop_core.store_browser import StoreBrowser, open_browser


def test_memory_store_lists_counts_and_plain_values() -> None:
    store = MemoryStore()
    store.set("session", "s1", "chat_history", [{"role": "user", "content": "a"}])
    store.set("global", "", "note", {"x": 1})
    browser = StoreBrowser(store)
    assert browser.kind == "memory"
    assert [(i.slot, i.count, i.last_write) for i in browser.slots()] == [
        (("global", "", "note"), None, None),  # not a buffer: no entry count
        (("session", "s1", "chat_history"), 1, None),
    ]


def test_a_blank_target_names_what_is_expected() -> None:
    with pytest.raises(ValueError) as err:
        open_browser("   ")
    assert (
        str(err.value) == "no store given: a SQLite file path, a Redis URL (redis://host:port/db) "
        "or a Postgres URL (postgresql://user@host/db)"
    )


def test_a_sqlite_file_of_another_application_is_refused_by_its_layout(tmp_path: Path) -> None:
    path = tmp_path / "other.sqlite3"
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE unrelated (x)")
    conn.commit()
    conn.close()
    with pytest.raises(StorageError) as err:
        open_browser(str(path)).slots()
    # Not "open it once writable to migrate it": a writable open refuses it as well.
    assert str(err.value) == (
        "not a FlowDrop store (layout version 0, tables: unrelated), nor an OpenAI Agents "
        "SQLiteSession or LangGraph SqliteSaver file; no command of flowdrop-buffer reads it "
        f"[file '{path}']"
    )
    with pytest.raises(StorageError, match=r"^not a FlowDrop store \(layout version 0"):
        open_browser(str(path), writable=True)


def test_an_empty_sqlite_database_cannot_be_listed(tmp_path: Path) -> None:
    path = tmp_path / "empty.sqlite3"
    conn = sqlite3.connect(path)
    conn.execute("PRAGMA user_version = 0")  # writes the header: a database with no tables
    conn.commit()
    conn.close()
    with pytest.raises(StorageError) as err:
        open_browser(str(path)).slots()
    assert str(err.value) == f"not a FlowDrop store: it has no 'slot' table [file '{path}']"
