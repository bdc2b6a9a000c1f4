"""``flowdrop-buffer store`` on a SQLite file: the outputs and refusals not covered elsewhere."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from store_fixture import make_store_file

from flowdrop_core.cli import main
from flowdrop_core.storage import SQLiteStore

DEMO = ["--slot", "session", "demo", "chat_history"]
NOTES = ["--slot", "workflow", "wf-1", "notes"]


@pytest.fixture
def target(tmp_path: Path) -> str:
    return str(make_store_file(tmp_path / "buffers.sqlite3"))


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(["store", *argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_append_that_is_not_json_writes_nothing(
    target: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = run(capsys, target, *NOTES, "--append", "{bad", "--write")
    assert code == 2
    assert err == (
        "flowdrop-buffer store: error: --append: not JSON (Expecting property name enclosed in "
        "double quotes: line 1 column 2 (char 1)); nothing was written\n"
    )
    assert [m["content"] for m in SQLiteStore(target).get("workflow", "wf-1", "notes")[0]] == [
        "note 1",
        "note 2",
    ]


def test_buffer_as_numbered_lines(target: str, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, target, *NOTES)
    assert code == 0
    assert out.splitlines() == [
        '   0  {"role": "user", "content": "note 1", "metadata": {}}',
        '   1  {"role": "assistant", "content": "note 2", "metadata": {}}',
        "2 entries in slot ('workflow', 'wf-1', 'notes')",
    ]


def test_a_plain_value_is_printed_as_json_and_listed_without_a_count(
    target: str, capsys: pytest.CaptureFixture[str]
) -> None:
    SQLiteStore(target).set("global", "", "note", {"x": 1})
    code, out, _ = run(capsys, target, "--slot", "global", "", "note")
    assert (code, out) == (0, '{"x": 1}\n')
    code, out, _ = run(capsys, target, "--filter", "note")
    row = next(line for line in out.splitlines() if line.startswith("global"))
    assert row.split()[:4] == ["global", '""', '"note"', "-"]


def test_export_to_a_folder_that_does_not_exist_is_an_error(
    target: str, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    missing = tmp_path / "nowhere" / "journal.json"
    code, _, err = run(capsys, target, *DEMO, "--export", str(missing))
    assert code == 2
    assert err == (
        f"flowdrop-buffer store: error: cannot write {missing}: No such file or directory\n"
    )
    assert not missing.exists()


def test_journal_as_json_lines_one_step_per_record(
    target: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run(capsys, target, *DEMO, "--journal", "--json")
    assert code == 0, err
    steps = [json.loads(line) for line in out.splitlines()]
    assert [s["step"] for s in steps] == list(range(1, 10))
    assert [s["label"] for s in steps][:2] == ["record 1", "record 2"]
    assert [s["appended"] for s in steps] == [1, 1, 1, 1, 0, 1, 1, 1, 1]
