"""SQLite store paths a user meets only when something is wrong.

A field that cannot be stored is named by its JSON path; a file that cannot
be opened, or only read, says so with the file; a corrupt first-layout row
survives migration and is reported, never read as empty; a slot whose lock
file cannot be opened still takes the turn (MEM-12), and says it ran
unserialized.
"""

from __future__ import annotations

import logging
import shutil
import sqlite3
import time
from pathlib import Path

import pytest

from flowdrop_core.conversation import ConversationBuffer
from flowdrop_core.events import EventKind
from flowdrop_core.storage import (
    Delta,
    MemoryStore,
    Op,
    SQLiteStore,
    StorageError,
    Store,
    apply_ops,
)

CTX = {"session_id": "s1"}
SLOT_TEXT = "slot (scope='session', scope_id='s1', key='chat_history')"


def user(content: str, **extra: object) -> dict[str, object]:
    return {"role": "user", "content": content, **extra}


@pytest.mark.parametrize(
    ("metadata", "field", "char"),
    [
        ({"k\ud800": 1}, "entry at position 1.metadata key 'k\\ud800'", "'\\ud800'"),
        ({"tags": ["ok", "b\udfff"]}, "entry at position 1.metadata.tags[1]", "'\\udfff'"),
    ],
    ids=["in-a-key", "in-a-list"],
)
def test_lone_surrogate_deep_in_metadata_is_named_by_its_path(
    tmp_path: Path, metadata: dict[str, object], field: str, char: str
) -> None:
    path = tmp_path / "db.sqlite3"
    buf = ConversationBuffer(store=SQLiteStore(path))
    buf.append(user("fine"), CTX)
    with pytest.raises(StorageError) as err:
        buf.append(user("x", metadata=metadata), CTX)
    assert str(err.value) == (
        f"{field} holds a lone surrogate ({char}), which cannot be stored as UTF-8; "
        f"nothing was written [{SLOT_TEXT}, file '{path}']"
    )
    assert [m["content"] for m in buf.messages(CTX)] == ["fine"]


def test_a_folder_is_not_a_store_file(tmp_path: Path) -> None:
    with pytest.raises(StorageError) as err:
        SQLiteStore(tmp_path)
    assert str(err.value) == f"not a SQLite store (not a regular file) [file '{tmp_path}']"
    assert not tmp_path.with_name(tmp_path.name + ".locks").exists()  # refused before any change


def test_repr_names_the_file(tmp_path: Path) -> None:
    path = tmp_path / "db.sqlite3"
    assert repr(SQLiteStore(path)) == f"SQLiteStore({str(path)!r})"


def test_read_only_file_of_an_old_layout_asks_to_be_opened_writable(tmp_path: Path) -> None:
    path = tmp_path / "old.sqlite3"
    raw = sqlite3.connect(path)
    raw.execute("CREATE TABLE slots (x)")
    raw.execute("PRAGMA user_version = 1")
    raw.commit()
    raw.close()
    with pytest.raises(StorageError) as err:
        SQLiteStore(path, readonly=True)
    assert str(err.value) == (
        "the file has layout version 1, this version reads 2 and 3; open it once writable to migrate "
        f"it [file '{path}']"
    )


def test_corrupt_first_layout_row_is_kept_and_reported_after_migration(tmp_path: Path) -> None:
    path = tmp_path / "v1.sqlite3"
    broken = '[{"role":"user","content":"half'
    raw = sqlite3.connect(path)
    raw.execute(
        "CREATE TABLE slots (scope TEXT NOT NULL, scope_id TEXT NOT NULL, key TEXT NOT NULL, "
        "value TEXT NOT NULL, updated_at REAL NOT NULL, PRIMARY KEY (scope, scope_id, key)) "
        "WITHOUT ROWID"
    )
    raw.execute("INSERT INTO slots VALUES ('session', 's1', 'chat_history', ?, 0)", (broken,))
    raw.commit()
    raw.close()
    store = SQLiteStore(path)
    with pytest.raises(StorageError) as err:
        store.get("session", "s1", "chat_history")
    assert str(err.value).startswith("stored value is corrupt and cannot be decoded (")
    assert f"[{SLOT_TEXT}, file '{path}']" in str(err.value)
    with pytest.raises(StorageError):  # an append never replaces it with an empty buffer
        ConversationBuffer(store=store).append(user("new"), CTX)
    store.close()
    raw = sqlite3.connect(path)
    assert raw.execute("SELECT value FROM slot").fetchall() == [(broken,)]
    raw.close()


def test_lock_file_that_cannot_be_opened_runs_the_turn_unserialized(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """MEM-12: no lock is no reason to drop the turn; the result says it ran unserialized."""
    store = SQLiteStore(tmp_path / "db.sqlite3")
    shutil.rmtree(store.lock_dir, ignore_errors=True)
    store.lock_dir.write_text("a file where the lock folder should be")
    buf = ConversationBuffer(store=store)
    started = time.monotonic()
    with caplog.at_level(logging.WARNING, logger="flowdrop_core"):
        result = buf.append(user("a"), CTX)
    assert time.monotonic() - started < 2  # it did not wait out the lock timeout
    assert [e.kind for e in result.events] == [EventKind.UNSERIALIZED, EventKind.APPENDED]
    assert [m["content"] for m in buf.messages(CTX)] == ["a"]
    assert any("MEM-12: cannot open lock file" in r.getMessage() for r in caplog.records)


# -- deltas out of range: refused whole, nothing changed -------------------------------------


@pytest.fixture(params=["memory", "sqlite"])
def any_store(request: pytest.FixtureRequest, tmp_path: Path) -> Store:
    return MemoryStore() if request.param == "memory" else SQLiteStore(tmp_path / "db.sqlite3")


BAD_DELTAS = [
    (
        Delta((Op("insert", 5, {"role": "user", "content": "x"}),), 2),
        "insert at 5 in a buffer of 1",
    ),
    (Delta((Op("delete", 1),), 0), "delete at 1 in a buffer of 1"),
    (
        Delta((Op("replace", -1, {"role": "user", "content": "x"}),), 1),
        "replace at -1 in a buffer of 1",
    ),
    (Delta((Op("move", 0),), 1), "unknown op 'move'"),  # type: ignore[arg-type]
    # A valid first op does not get written when a later one is refused.
    (
        Delta((Op("insert", 1, {"role": "user", "content": "x"}), Op("delete", 7)), 1),
        "delete at 7 in a buffer of 2",
    ),
]


@pytest.mark.parametrize(("delta", "problem"), BAD_DELTAS, ids=lambda v: str(v)[:30])
def test_a_delta_out_of_range_is_refused_whole(
    any_store: Store, delta: Delta, problem: str
) -> None:
    any_store.set("session", "s1", "chat_history", [user("kept")])
    before = any_store.revision("session", "s1", "chat_history")
    with pytest.raises(StorageError) as err:
        any_store.apply("session", "s1", "chat_history", delta, expected=before)
    assert f"cannot apply the change ({problem})" in str(err.value)
    assert any_store.get("session", "s1", "chat_history")[0] == [user("kept")]
    assert any_store.revision("session", "s1", "chat_history") == before


@pytest.mark.parametrize(
    ("ops", "error", "problem"),
    [
        ([Op("insert", 2, {})], IndexError, "insert at 2 in a buffer of 1"),
        ([Op("delete", 1)], IndexError, "delete at 1 in a buffer of 1"),
        ([Op("move", 0)], ValueError, "unknown op 'move'"),  # type: ignore[arg-type]
    ],
)
def test_apply_ops_refuses_an_op_out_of_range(
    ops: list[Op], error: type[Exception], problem: str
) -> None:
    entries = [user("a")]
    with pytest.raises(error) as err:
        apply_ops(entries, ops)
    assert str(err.value) == problem
    assert entries == [user("a")]


def test_apply_ops_inserts_in_the_middle_and_at_the_end() -> None:
    entries = [user("a"), user("c")]
    apply_ops(entries, [Op("insert", 1, user("b")), Op("insert", 3, user("d"))])
    assert [e["content"] for e in entries] == ["a", "b", "c", "d"]
