"""Hostile files and stores get a clear, located error within a bounded time, never a hang
or a crash: a FIFO, /dev/zero, an oversized file; SQLite files with a view in place of any
table, malformed slot rows, rows past a read's bounds, entries nested too deep or holding
numbers out of range."""

from __future__ import annotations

import os
import sqlite3
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from store_fixture import make_store_file

import flowdrop_core.cli._loading as loading
from flowdrop_core.cli import main
from flowdrop_core.storage import SQLiteStore, StorageError
from flowdrop_core.store_browser import open_browser

SLOT = ("session", "demo", "chat_history")
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
    import flowdrop_core.storage._sqlite as sqlite_mod

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


# -- every read path of a store is bounded ----------------------------------------------------

SLOT_ARGS = ["--slot", "session", "demo", "chat_history"]


def _replace(tmp_path: Path, table: str, columns: str, select: str) -> Path:
    """Our store file with ``table`` replaced by a view of the same columns."""
    return _store_with(
        tmp_path,
        f"ALTER TABLE {table} RENAME TO {table}_old",
        f"CREATE VIEW {table} ({columns}) AS {select}",
    )


#: Each table the store reads, as a view that never ends or yields gigabytes.
VIEWS = {
    # Never matches the slot asked for, so a read scans it forever.
    "slot": (
        "id, scope, scope_id, key, rev, count, value, updated_at",
        f"SELECT x, 's' || x, 'demo', 'chat_history', 'r', 1, NULL, 0 FROM ({RECURSIVE})",
    ),
    # 200 rows of 5 MB each from a file of a few KB.
    "entry": (
        "slot, ord, body",
        "SELECT s.id, x, '\"' || printf('%.*c', 5000000, 'x') || '\"' "
        f"FROM slot_for_view s, ({RECURSIVE} LIMIT 200)",
    ),
    "journal": (
        "scope, scope_id, key, seq, at, record",
        f"SELECT 'session', 'demo', 'chat_history', x, 0, '{{}}' FROM ({RECURSIVE})",
    ),
}


@pytest.mark.parametrize("table", sorted(VIEWS))
@pytest.mark.parametrize(
    "args",
    [SLOT_ARGS, [*SLOT_ARGS, "--journal"], [], ["--json"]],
    ids=["slot", "journal", "listing", "listing-json"],
)
def test_a_view_in_place_of_any_table_is_refused_on_every_path(
    tmp_path: Path, capsys, table: str, args: list[str]
) -> None:
    columns, select = VIEWS[table]
    path = _replace(tmp_path, table, columns, select)
    if table == "entry":  # the view reads the slot table's ids
        conn = sqlite3.connect(path)
        conn.execute("CREATE VIEW slot_for_view AS SELECT id FROM slot WHERE scope_id = 'demo'")
        conn.commit()
        conn.close()
    assert finishes(lambda: main(["store", str(path), *args]), seconds=10) == 2
    err = capsys.readouterr().err
    assert f"not a FlowDrop store: '{table}' is a view, not a table" in err
    assert str(path) in err


def test_a_view_is_refused_by_the_library_before_any_read(tmp_path: Path) -> None:
    columns, select = VIEWS["slot"]
    path = _replace(tmp_path, "slot", columns, select)
    with pytest.raises(StorageError, match="'slot' is a view"):
        finishes(lambda: SQLiteStore(path, readonly=True).read(*SLOT), seconds=10)
    with pytest.raises(StorageError, match="not a FlowDrop store"):
        finishes(lambda: SQLiteStore(path).read(*SLOT), seconds=10)
    columns, select = VIEWS["journal"]
    (tmp_path / "j").mkdir()
    path = _replace(tmp_path / "j", "journal", columns, select)
    for readonly in (True, False):
        with pytest.raises(StorageError, match="'journal' is a view"):
            finishes(lambda: SQLiteStore(path, readonly=readonly).journal_records(*SLOT))  # noqa: B023


def test_a_virtual_table_is_refused(tmp_path: Path, capsys) -> None:
    path = _store_with(
        tmp_path,
        "DROP TABLE entry",
        "CREATE VIRTUAL TABLE entry USING fts5(slot, ord, body)",
    )
    assert finishes(lambda: main(["store", str(path), *SLOT_ARGS]), seconds=10) == 2
    assert "'entry' is a virtual table, not a table" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("limit", "value", "args", "message"),
    [
        ("MAX_READ_ROWS", 3, SLOT_ARGS, "the slot holds more than 3 rows, the most a read takes"),
        (
            "MAX_READ_CHARS",
            100,
            SLOT_ARGS,
            "the slot holds more than 100 characters of JSON, the most a read takes",
        ),
        (
            "MAX_READ_ROWS",
            3,
            [*SLOT_ARGS, "--journal"],
            "the journal holds more than 3 rows, the most a read takes",
        ),
        (
            "MAX_READ_CHARS",
            100,
            [*SLOT_ARGS, "--journal"],
            "the journal holds more than 100 characters of JSON",
        ),
    ],
    ids=["entry-rows", "entry-chars", "journal-rows", "journal-chars"],
)
def test_rows_and_characters_of_a_read_are_bounded(
    tmp_path: Path, monkeypatch, capsys, limit: str, value: int, args: list[str], message: str
) -> None:
    import flowdrop_core.storage._sqlite as sqlite_mod

    path = make_store_file(tmp_path / "store.sqlite3")  # the demo slot: 4 entries, 8 records
    monkeypatch.setattr(sqlite_mod, limit, value)
    assert main(["store", str(path), *args]) == 2
    err = capsys.readouterr().err
    assert message in err and "nothing was read" in err and str(path) in err


def test_a_read_stops_at_the_character_bound(tmp_path: Path, monkeypatch) -> None:
    import flowdrop_core.storage._sqlite as sqlite_mod

    path = _store_with(
        tmp_path,
        "UPDATE entry SET body = '\"' || printf('%.*c', 5000, 'x') || '\"' "
        "WHERE slot = (SELECT id FROM slot WHERE scope = 'user')",
    )
    monkeypatch.setattr(sqlite_mod, "MAX_READ_CHARS", 4_000)
    store = SQLiteStore(path, readonly=True)
    with pytest.raises(StorageError, match="more than 4,000 characters") as err:
        store.read("user", "alice", "chat_history")
    assert "'alice'" in str(err.value)
    assert store.read(*SLOT).found  # the other slots stay readable


def test_a_slow_read_is_stopped(tmp_path: Path, monkeypatch, capsys) -> None:
    import flowdrop_core.storage._sqlite as sqlite_mod

    path = _store_with(
        tmp_path,
        "INSERT INTO entry (slot, ord, body) SELECT s.id, 1000000000 + x, "
        '\'{"role":"user","content":"x"}\' FROM slot s, '
        f"({RECURSIVE} LIMIT 20000) WHERE s.scope_id = 'demo'",
    )
    monkeypatch.setattr(sqlite_mod, "READ_SECONDS", 0.0)
    assert main(["store", str(path), *SLOT_ARGS]) == 2
    assert "reading the slot took over 0 s and was stopped" in capsys.readouterr().err


DEEP_BODY = '{"role":"user","content":' + "[" * 100_000 + "]" * 100_000 + "}"


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (DEEP_BODY, "stored entry 0 is nested more than 101 levels (at character 125)"),
        (
            '{"role":"user","content":' + "[" * 150 + "]" * 150 + "}",
            "stored entry 0 is nested more than 101 levels (at content",
        ),
        ('{"role":"user","content":"x","n":NaN}', "stored entry 0 holds NaN, which is not a JSON"),
        (
            '{"role":"user","content":"x","n":-Infinity}',
            "stored entry 0 holds -Infinity, which is not",
        ),
        (
            '{"role":"user","content":"x","n":1e400}',
            "stored entry 0 holds a number out of range (1e400)",
        ),
    ],
    ids=["100000-deep", "150-deep", "nan", "infinity", "1e400"],
)
def test_a_bad_stored_entry_is_located_not_an_internal_error(
    tmp_path: Path, capsys, body: str, message: str
) -> None:
    path = _store_with(
        tmp_path,
        f"UPDATE entry SET body = '{body}' WHERE slot = (SELECT id FROM slot WHERE scope='user')",
    )
    assert (
        finishes(lambda: main(["store", str(path), "--slot", "user", "alice", "chat_history"])) == 2
    )
    err = capsys.readouterr().err
    assert "internal error" not in err
    assert f"bad stored entry: {message}" in err
    assert "'alice'" in err and str(path) in err


@pytest.mark.parametrize("at", ["1e300", "-1", "9e999"])
def test_a_last_write_out_of_range_is_a_located_bad_stored_entry(
    tmp_path: Path, capsys, at: str
) -> None:
    path = _store_with(tmp_path, f"UPDATE slot SET updated_at = {at} WHERE scope = 'user'")
    assert main(["store", str(path)]) == 2
    err = capsys.readouterr().err
    assert "internal error" not in err
    assert "bad stored entry: last write" in err and "is out of range" in err
    assert "'alice'" in err and str(path) in err


def test_a_journal_record_nested_too_deep_is_a_located_error(tmp_path: Path, capsys) -> None:
    record = '{"seq":2,"x":' + "[" * 100_000 + "]" * 100_000 + "}"
    path = _store_with(tmp_path, f"UPDATE journal SET record = '{record}' WHERE seq = 2")
    assert finishes(lambda: main(["store", str(path), *SLOT_ARGS, "--journal"])) == 2
    err = capsys.readouterr().err
    assert "internal error" not in err
    assert f"journal record 2 of {SLOT!r} in {path} is corrupt (nested too deeply" in err


# -- the CLI's message limit ------------------------------------------------------------------


def _lines(tmp_path: Path, n: int) -> Path:
    path = tmp_path / "tiny.jsonl"
    roles = ("user", "assistant")
    path.write_text("".join(f'{{"role": "{roles[k % 2]}", "content": "m{k}"}}\n' for k in range(n)))
    return path


def test_a_json_lines_file_past_the_limit_is_refused_before_any_line_is_decoded(
    tmp_path: Path, monkeypatch, capsys
) -> None:
    path = _lines(tmp_path, 51)
    monkeypatch.setenv("FLOWDROP_MAX_MESSAGES", "50")

    def no_decoding(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("the lines were decoded")

    monkeypatch.setattr(loading, "parse_conversations", no_decoding)
    for command in ("replay", "normalize", "lint", "doctor"):
        assert main([command, str(path)]) == 2
        err = capsys.readouterr().err
        assert f"{path}: 51 lines, over the limit of 50 messages per file" in err
        assert "FLOWDROP_MAX_MESSAGES=51" in err


def test_the_limit_is_raised_through_the_environment(tmp_path: Path, monkeypatch, capsys) -> None:
    path = _lines(tmp_path, 51)
    monkeypatch.setattr(loading, "MAX_MESSAGES", 50)
    assert main(["replay", str(path)]) == 2
    assert "51 lines, over the limit of 50 messages" in capsys.readouterr().err
    monkeypatch.setenv("FLOWDROP_MAX_MESSAGES", "51")
    assert main(["replay", str(path)]) == 0


def test_a_json_document_past_the_limit_is_refused_with_its_message_count(
    tmp_path: Path, monkeypatch, capsys
) -> None:
    path = tmp_path / "many.json"
    messages = [{"role": "user", "content": f"m{k}"} for k in range(51)]
    path.write_text(__import__("json").dumps(messages, indent=1))  # 200 lines, one document
    monkeypatch.setenv("FLOWDROP_MAX_MESSAGES", "50")
    assert main(["replay", str(path)]) == 2
    assert f"{path}: 51 messages, over the limit of 50 messages" in capsys.readouterr().err
    scenario = tmp_path / "scenario.json"
    steps = [{"append": m} for m in messages]
    expect = [{"count": k + 1} for k in range(51)]
    scenario.write_text(
        __import__("json").dumps({"name": "long", "steps": steps, "expect": expect})
    )
    assert main(["check", str(scenario)]) == 2
    assert f"{scenario}: 51 messages, over the limit of 50" in capsys.readouterr().err


@pytest.mark.parametrize("value", ["many", "0", "-3"])
def test_a_bad_limit_in_the_environment_is_named(
    tmp_path: Path, monkeypatch, capsys, value: str
) -> None:
    monkeypatch.setenv("FLOWDROP_MAX_MESSAGES", value)
    assert main(["replay", str(_lines(tmp_path, 3))]) == 2
    assert f"FLOWDROP_MAX_MESSAGES={value!r}: expected a whole number" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("levels", "message"),
    [
        (150, "incoming[0]: nested more than 100 levels (at content"),
        (100_000, "--append: not JSON this tool reads (nested too deeply)"),
    ],
)
def test_appending_a_deep_message_through_the_cli_writes_nothing(
    tmp_path: Path, capsys, levels: int, message: str
) -> None:
    path = make_store_file(tmp_path / "store.sqlite3")
    before = SQLiteStore(path, readonly=True).read(*SLOT)
    deep = '{"role": "user", "content": ' + "[" * levels + "]" * levels + "}"
    assert main(["store", str(path), *SLOT_ARGS, "--append", deep, "--write"]) == 2
    err = capsys.readouterr().err
    assert message in err and "internal error" not in err
    assert SQLiteStore(path, readonly=True).read(*SLOT) == before
