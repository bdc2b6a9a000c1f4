"""``flowdrop-buffer store`` over a SQLite file and a real Redis: list, show, replay, export, write."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from store_fixture import SLOTS, fill, make_store_file

from flowdrop_core.cli import main
from flowdrop_core.storage import SQLiteStore
from flowdrop_core.storage.redis_store import RedisStore


@pytest.fixture(params=["sqlite", "redis"])
def target(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """The three-slot store with a journal, as a SQLite file or on a real Redis."""
    if request.param == "sqlite":
        return str(make_store_file(tmp_path / "buffers.sqlite3"))
    url = request.getfixturevalue("redis_url")
    fill(RedisStore(url))
    return url


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(["store", *argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_lists_slots(target: str, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, target, "--json")
    assert code == 0
    rows = [json.loads(line) for line in out.splitlines()]
    assert [(r["scope"], r["scope_id"], r["key"]) for r in rows] == sorted(SLOTS)
    assert [r["count"] for r in rows] == [4, 1, 2]
    assert [r["journal"] for r in rows] == [9, 0, 0]
    assert all(isinstance(r["last_write"], float) for r in rows)
    code, out, _ = run(capsys, target)
    assert code == 0 and out.splitlines()[-1].startswith("3 slots in ")


def test_filter(target: str, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, target, "--filter", "WF-", "--json")
    assert code == 0 and [json.loads(x)["key"] for x in out.splitlines()] == ["notes"]


def test_shows_a_buffer(target: str, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, target, "--slot", "workflow", "wf-1", "notes", "--json")
    assert code == 0
    assert [m["content"] for m in json.loads(out)] == ["note 1", "note 2"]


def test_replays_and_exports_the_journal(
    target: str, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    slot = ["--slot", "session", "demo", "chat_history"]
    code, out, err = run(capsys, target, *slot, "--journal")
    assert code == 0, err
    assert "9 steps: 8 appended" in out and "differs" not in out
    scenario = tmp_path / "journal.json"
    code, _, err = run(capsys, target, *slot, "--export", str(scenario))
    assert code == 0 and "saved" in err
    assert main(["check", str(scenario)]) == 0
    assert "1 passed, 0 failed" in capsys.readouterr().out


def test_appends_need_write_and_a_clear_needs_admin(
    target: str, capsys: pytest.CaptureFixture[str]
) -> None:
    slot = ["--slot", "workflow", "wf-1", "notes"]
    message = json.dumps({"role": "user", "content": "note 3"})
    code, _, err = run(capsys, target, *slot, "--append", message)
    assert code == 2 and "add --write" in err and "nothing was written" in err
    code, _, err = run(capsys, target, *slot, "--clear")
    assert code == 2 and "add --admin" in err
    code, _, err = run(capsys, target, *slot, "--clear", "--write")  # drive is not admin
    assert code == 2 and "MEM-15: --clear" in err and "nothing was changed" in err
    code, out, _ = run(capsys, target, *slot, "--json")
    assert len(json.loads(out)) == 2  # unchanged
    code, out, _ = run(capsys, target, *slot, "--append", message, "--write")
    assert code == 0 and json.loads(out) == {"count": 3, "appended": 1, "appended_any": True}
    code, out, _ = run(capsys, target, *slot, "--clear", "--admin")
    assert code == 0 and "removes 3 entries" in out
    assert "cleared 3 entries; recorded as journal record 1" in out


def test_read_only_sqlite_file_refuses_writes_at_the_file_level(tmp_path: Path) -> None:
    from flowdrop_core.storage import StorageError
    from flowdrop_core.store_browser import StoreBrowser, open_browser
    from flowdrop_core.tiers import TierDenied

    path = make_store_file(tmp_path / "b.sqlite3")
    browser = open_browser(str(path))
    assert isinstance(browser.store, SQLiteStore) and browser.store.readonly
    with pytest.raises(TierDenied, match=r"MEM-9: an append to slot .* needs the drive tier"):
        browser.append(("user", "alice", "chat_history"), {"role": "user", "content": "x"})
    with pytest.raises(StorageError, match="opened read-only"):  # and the file itself refuses
        StoreBrowser(browser.store, tier="drive").append(
            ("user", "alice", "chat_history"), {"role": "user", "content": "x"}
        )


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["/no/such/file.sqlite3"], "no SQLite store at"),
        (["redis://127.0.0.1:1/0"], "on Redis 127.0.0.1:1/0 (ConnectionError"),
        (["x.sqlite3", "--journal"], "need --slot"),
    ],
)
def test_bad_input_is_one_clear_error(
    argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = run(capsys, *argv)
    assert code == 2 and message in err and "Traceback" not in err
