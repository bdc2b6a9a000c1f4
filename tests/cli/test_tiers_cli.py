"""MEM-9 and MEM-15 on the command line: reading is view, --append drive, --clear and a
framework file's --repair the administrative tier, asked for with --admin and recorded."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from framework_files import agents_file, digest
from store_fixture import make_store_file

from flowdrop_core.cli import main
from flowdrop_core.store_browser import open_browser

NOTES = ["--slot", "workflow", "wf-1", "notes"]
DEMO = ["--slot", "session", "demo", "chat_history"]

#: What an operator might set hoping to stand in for --admin: none of it may.
NO_BYPASS = {
    "FLOWDROP_ADMIN": "1",
    "FLOWDROP_TIER": "admin",
    "FLOWDROP_STORES": "team=admin:{path}; rw=writable:{path}",
}


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(["store", *argv])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def store_file(tmp_path: Path) -> Path:
    return make_store_file(tmp_path / "buffers.sqlite3")


def test_a_clear_without_admin_is_refused_whatever_the_environment_says(
    store_file: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    for name, value in NO_BYPASS.items():
        monkeypatch.setenv(name, value.format(path=store_file))
    before = digest(store_file)
    for extra in ([], ["--write"]):
        code, out, err = _run(capsys, str(store_file), *DEMO, "--clear", *extra)
        assert code == 2 and out == ""
        assert "MEM-15: --clear changes stored messages other than by an append" in err
        assert "add --admin" in err and "nothing was changed" in err
    assert digest(store_file) == before


def test_a_clear_with_admin_says_what_it_removes_and_is_recorded_in_the_journal(
    store_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = _run(capsys, str(store_file), *DEMO, "--clear", "--admin")
    assert code == 0, err
    lines = out.splitlines()
    assert lines[0] == (
        f"admin: clearing slot ('session', 'demo', 'chat_history') in {store_file}: "
        "removes 4 entries"
    )
    assert lines[1] == "cleared 4 entries; recorded as journal record 10"
    record = open_browser(str(store_file)).records(("session", "demo", "chat_history"))[-1]
    assert (record.seq, record.action, record.removed) == (10, "clear", 4)
    assert record.by == "flowdrop-buffer store --clear --admin"
    # the journal still replays: the notes name the clear, nothing is left to replay after it
    code, _, err = _run(capsys, str(store_file), *DEMO, "--journal")
    assert code == 2 and "last record (10) is a clear at the admin tier" in err
    code, out, _ = _run(capsys, str(store_file), *DEMO, "--json")
    assert json.loads(out) == []


def test_reading_is_the_view_tier_even_when_admin_is_asked_for(
    store_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    before = digest(store_file)
    code, out, _ = _run(capsys, str(store_file), "--admin")
    assert code == 0 and "3 slots in" in out
    code, out, _ = _run(capsys, str(store_file), *NOTES, "--admin", "--write")
    assert code == 0 and "2 entries in slot" in out
    assert digest(store_file) == before  # opened read-only: the tier the act needs, no more


def test_an_append_is_the_drive_tier(store_file: Path, capsys: pytest.CaptureFixture[str]) -> None:
    message = json.dumps({"role": "user", "content": "note 3"})
    code, _, err = _run(capsys, str(store_file), *NOTES, "--append", message)
    assert code == 2 and "MEM-9: --append writes to the store" in err and "add --write" in err
    code, out, _ = _run(capsys, str(store_file), *NOTES, "--append", message, "--admin")
    assert code == 0 and json.loads(out)["appended"] == 1  # admin includes drive


def test_a_framework_repair_needs_admin_prints_its_plan_and_is_recorded(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    path = agents_file(tmp_path / "agents.sqlite")
    for name, value in NO_BYPASS.items():
        monkeypatch.setenv(name, value.format(path=path))
    before = digest(path)
    code, out, err = _run(capsys, str(path), "--thread", "retried", "--repair", "--write")
    assert code == 2 and out.startswith("retried: 1 change to write:")  # named, not made
    assert "MEM-15: --repair changes stored messages" in err and "add --admin" in err
    assert digest(path) == before
    assert not list(tmp_path.glob("*.bak-*")) and not list(tmp_path.glob("*.jsonl"))
    code, out, err = _run(capsys, str(path), "--thread", "retried", "--repair", "--admin")
    assert code == 0, err
    log = tmp_path / "agents.sqlite.flowdrop-repairs.jsonl"
    assert f"recorded in {log}" in out
    (line,) = log.read_text(encoding="utf-8").splitlines()
    record = json.loads(line)
    assert record["thread"] == "retried" and record["tier"] == "admin"
    assert record["kind"] == "openai-agents" and record["before"] == 4 and record["after"] == 3
    assert record["changes"][0].startswith("remove   agent_messages.id=4")
    assert record["backup"] and Path(record["backup"]).is_file()
