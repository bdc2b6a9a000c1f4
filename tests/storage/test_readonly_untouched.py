"""Read-only means untouched: opening a store changes no byte and creates no file or folder;
a writable open of a file that is not our store is refused before any change."""

from __future__ import annotations

import hashlib
import os
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from store_fixture import make_store_file

from flowdrop_core.conversation import ConversationBuffer
from flowdrop_core.journal import journal_for
from flowdrop_core.storage import SQLiteStore, StorageError
from flowdrop_core.store_browser import open_browser


def folder_state(folder: Path) -> dict[str, str]:
    """Every file in the folder with its content's digest (folders marked as such)."""
    return {
        p.name: ("<dir>" if p.is_dir() else hashlib.sha256(p.read_bytes()).hexdigest())
        for p in sorted(folder.iterdir())
    }


@pytest.fixture
def at_rest(tmp_path: Path) -> Path:
    """A store file as a runtime leaves it after closing: no -wal, -shm or lock folder."""
    path = make_store_file(tmp_path / "store" / "buffers.sqlite3")
    for extra in path.parent.iterdir():
        if extra != path:
            if extra.is_dir():
                shutil.rmtree(extra)
            else:
                extra.unlink()
    return path


def test_browsing_a_store_at_rest_changes_nothing(at_rest: Path) -> None:
    before = folder_state(at_rest.parent)
    browser = open_browser(str(at_rest))
    infos = browser.slots()
    assert len(infos) == 3
    for info in infos:
        browser.buffer(info.slot)
        browser.records(info.slot)
    browser.replay(infos[0].slot)
    browser.store.close()  # type: ignore[attr-defined]
    assert folder_state(at_rest.parent) == before


def test_a_read_only_open_sees_a_writer_that_starts_later(at_rest: Path) -> None:
    reader = SQLiteStore(at_rest, readonly=True)
    assert reader.get("workflow", "wf-1", "notes")[0][-1]["content"] == "note 2"
    writer = SQLiteStore(at_rest)
    ConversationBuffer(scope="workflow", key="notes", store=writer).append(
        {"role": "user", "content": "note 3"}, {"workflow_id": "wf-1"}
    )
    value, _ = reader.get("workflow", "wf-1", "notes")  # reconnects now that a WAL exists
    assert [m["content"] for m in value] == ["note 1", "note 2", "note 3"]
    writer.close()
    reader.close()


def test_a_live_store_is_read_through_its_wal(at_rest: Path) -> None:
    writer = SQLiteStore(at_rest)
    ConversationBuffer(scope="workflow", key="notes", store=writer).append(
        {"role": "user", "content": "note 3"}, {"workflow_id": "wf-1"}
    )
    before = folder_state(at_rest.parent)
    assert "buffers.sqlite3-wal" in before
    reader = SQLiteStore(at_rest, readonly=True)
    value, _ = reader.get("workflow", "wf-1", "notes")
    assert [m["content"] for m in value][-1] == "note 3"
    assert set(folder_state(at_rest.parent)) == set(before)  # no new file
    reader.close()
    writer.close()


def test_a_read_only_open_never_migrates_a_version_1_file(tmp_path: Path) -> None:
    path = tmp_path / "v1.sqlite3"
    conn = sqlite3.connect(path)
    conn.execute(
        "CREATE TABLE slots (scope TEXT, scope_id TEXT, key TEXT, value TEXT, updated_at REAL)"
    )
    conn.execute("INSERT INTO slots VALUES ('session', 's', 'k', '[]', 1.0)")
    conn.commit()
    conn.close()
    before = folder_state(tmp_path)
    with pytest.raises(StorageError, match="open it once writable to migrate it"):
        SQLiteStore(path, readonly=True)
    assert folder_state(tmp_path) == before


@pytest.mark.parametrize(
    "make",
    [
        pytest.param(lambda p: p.write_text("my notes\n"), id="a text file"),
        pytest.param(
            lambda p: sqlite3.connect(p).executescript(
                "PRAGMA journal_mode=DELETE; CREATE TABLE users (name TEXT);"
                "INSERT INTO users VALUES ('ann');"
            ),
            id="another program's database",
        ),
    ],
)
def test_a_writable_open_of_a_foreign_file_is_refused_before_any_change(
    tmp_path: Path, make: object
) -> None:
    path = tmp_path / "notes.txt"
    make(path)  # type: ignore[operator]
    before = folder_state(tmp_path)
    with pytest.raises(StorageError, match="not a FlowDrop store") as err:
        SQLiteStore(path)
    assert "nothing was changed" in str(err.value)
    with pytest.raises(StorageError, match="not a FlowDrop store"):
        open_browser(str(path), writable=True)
    assert folder_state(tmp_path) == before  # no tables, no WAL, no .locks/ folder


def test_a_writable_open_of_our_store_or_an_empty_file_works(tmp_path: Path, at_rest: Path) -> None:
    empty = tmp_path / "empty.sqlite3"
    empty.touch()
    SQLiteStore(empty).close()
    assert sqlite3.connect(empty).execute("PRAGMA user_version").fetchone()[0] >= 2
    store = SQLiteStore(at_rest)
    assert journal_for(store).counts()
    store.close()


def test_a_store_whose_folder_cannot_be_written_opens_for_reading(at_rest: Path) -> None:
    if os.geteuid() == 0:
        # root writes anywhere; the immutable open is what makes a read-only folder work,
        # and the first test shows it creates nothing. Here: the URI asks for it.
        store = SQLiteStore(at_rest, readonly=True)
        assert store._local.immutable
        store.close()
        return
    at_rest.parent.chmod(0o555)  # pragma: no cover - non-root runs
    try:
        store = SQLiteStore(at_rest, readonly=True)
        assert store.get("workflow", "wf-1", "notes")[1]
        store.close()
    finally:
        at_rest.parent.chmod(0o755)


def _left_by_a_dead_writer(path: Path) -> None:
    """A runtime appends and dies before closing: its -wal and -shm stay beside the file."""
    code = (
        "import os, sys\n"
        "from flowdrop_core.conversation import ConversationBuffer\n"
        "from flowdrop_core.storage import SQLiteStore\n"
        "store = SQLiteStore(sys.argv[1])\n"
        "store._conn().execute('PRAGMA wal_autocheckpoint=0')\n"
        "ConversationBuffer(scope='workflow', key='notes', store=store).append(\n"
        "    {'role': 'user', 'content': 'note 3'}, {'workflow_id': 'wf-1'})\n"
        "os._exit(0)\n"
    )
    subprocess.run([sys.executable, "-c", code, str(path)], check=True)


@pytest.mark.parametrize("shm", [True, False], ids=["wal and shm left", "wal left alone"])
def test_a_read_only_open_of_a_store_a_writer_left_changes_no_byte(
    at_rest: Path, shm: bool
) -> None:
    _left_by_a_dead_writer(at_rest)
    wal, shm_file = Path(f"{at_rest}-wal"), Path(f"{at_rest}-shm")
    assert wal.stat().st_size > 0 and shm_file.exists()
    if not shm:
        shm_file.unlink()
    before = folder_state(at_rest.parent)
    store = SQLiteStore(at_rest, readonly=True)
    value, _ = store.get("workflow", "wf-1", "notes")
    assert [m["content"] for m in value] == ["note 1", "note 2", "note 3"]  # the -wal is read
    browser = open_browser(str(at_rest))
    assert len(browser.slots()) == 3
    browser.store.close()  # type: ignore[attr-defined]
    store.close()
    assert folder_state(at_rest.parent) == before
