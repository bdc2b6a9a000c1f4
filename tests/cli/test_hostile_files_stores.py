"""Hostile files and stores get a clear, located error within a bounded time, never a hang
or a crash: a FIFO, /dev/zero, an oversized file; SQLite files with a recursive view or
malformed slot rows."""

from __future__ import annotations

import os
import sqlite3
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from store_fixture import make_store_file

import flowdrop_core.cli.loading as loading
from flowdrop_core.cli import main
from flowdrop_core.storage import StorageError
from flowdrop_core.store_browser import open_browser

RECURSIVE = "WITH RECURSIVE r(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM r) SELECT x FROM r"


def finishes(call: Callable[[], Any], seconds: float = 30.0) -> Any:
    """``call()``'s result, failing the test if it does not return within ``seconds``."""
    box: dict[str, Any] = {}

    def run() -> None:
        try:
            box["value"] = call()
        except BaseException as exc:  # handed back to the test
            box["error"] = exc

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(seconds)
    assert not thread.is_alive(), f"did not finish within {seconds} s"
    if "error" in box:
        raise box["error"]
    return box.get("value")


def test_replay_refuses_a_fifo_without_blocking(tmp_path: Path, capsys) -> None:
    fifo = tmp_path / "pipe.json"
    os.mkfifo(fifo)
    assert finishes(lambda: main(["replay", str(fifo)])) == 2
    assert "not a regular file" in capsys.readouterr().err


def test_replay_refuses_dev_zero(capsys) -> None:
    assert finishes(lambda: main(["replay", "/dev/zero"])) == 2
    assert "/dev/zero: not a regular file" in capsys.readouterr().err


def test_replay_refuses_a_file_over_the_limit(tmp_path: Path, monkeypatch, capsys) -> None:
    monkeypatch.setattr(loading, "MAX_FILE_BYTES", 1_000)
    big = tmp_path / "big.json"
    big.write_text("[" + ", ".join(['{"role": "user", "content": "x"}'] * 100) + "]")
    assert main(["replay", str(big)]) == 2
    assert f"{big.stat().st_size:,} bytes, over the 1,000-byte limit" in capsys.readouterr().err


def _store_with(tmp_path: Path, *statements: str) -> Path:
    path = make_store_file(tmp_path / "hostile.sqlite3")
    conn = sqlite3.connect(path)
    conn.executescript(";".join(statements))
    conn.commit()
    conn.close()
    return path


def test_a_recursive_view_named_slot_is_refused_at_once(tmp_path: Path) -> None:
    path = tmp_path / "view.sqlite3"
    conn = sqlite3.connect(path)
    conn.executescript(
        "PRAGMA user_version = 2; CREATE TABLE entry (x); "
        f"CREATE VIEW slot (scope, scope_id, key, count, updated_at) AS "
        f"SELECT 'a', 'b', 'c', x, 0 FROM ({RECURSIVE})"
    )
    conn.close()
    with pytest.raises(StorageError, match="'slot' is a view, not a table"):
        finishes(lambda: open_browser(str(path)).slots())


def test_a_slow_listing_is_stopped(tmp_path: Path, monkeypatch) -> None:
    import flowdrop_core.storage.sqlite as sqlite_mod

    path = make_store_file(tmp_path / "many.sqlite3")
    conn = sqlite3.connect(path)
    conn.execute(
        "INSERT INTO slot (scope, scope_id, key, rev, count, updated_at) "
        f"SELECT 'session', 's' || x, 'k', 'r', 1, 0 FROM ({RECURSIVE} LIMIT 200000)"
    )
    conn.commit()
    conn.close()
    monkeypatch.setattr(sqlite_mod, "LIST_SECONDS", 0.0)
    with pytest.raises(StorageError, match=r"listing the slots took over 0 s and was stopped"):
        finishes(lambda: open_browser(str(path)).slots())


@pytest.mark.parametrize(
    ("row", "message"),
    [
        (("session", None, "k", 1, 0.0), "bad stored entry: slot row 2 has a scope, scope id"),
        (("session", 42, "k", 1, 0.0), "text ('session', 42, 'k')"),
        (("session", "s", "k", 1, "yesterday"), "bad stored entry: last write 'yesterday' is not"),
        (("session", "s", "k", "many", 0.0), "bad stored entry: count 'many' is not a number"),
    ],
)
def test_a_malformed_slot_row_is_a_located_bad_stored_entry(
    tmp_path: Path, row: tuple[Any, ...], message: str
) -> None:
    # A hostile file with our layout's names but untyped columns: any value gets in.
    path = tmp_path / "bad.sqlite3"
    conn = sqlite3.connect(path)
    conn.executescript(
        "PRAGMA user_version = 2; CREATE TABLE entry (slot, ord, body);"
        "CREATE TABLE slot (id INTEGER PRIMARY KEY, scope, scope_id, key, rev, count, value, "
        "updated_at);"
    )
    conn.execute(
        "INSERT INTO slot (scope, scope_id, key, rev, count, updated_at) "
        "VALUES ('user', 'u', 'k', 'r', 0, 0)"
    )
    conn.execute(
        "INSERT INTO slot (scope, scope_id, key, rev, count, updated_at) VALUES (?, ?, ?, 'r', ?, ?)",
        (row[0], row[1], row[2], row[3], row[4]),
    )
    conn.commit()
    conn.close()
    with pytest.raises(StorageError) as err:
        finishes(lambda: open_browser(str(path)).slots())
    text = str(err.value)
    assert text.startswith("bad stored entry") and str(path) in text
    assert message in text
