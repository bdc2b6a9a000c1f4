"""The command line's file errors: one line naming the file and what is wrong, exit 2."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from flowdrop_core.cli import main


@pytest.mark.parametrize("command", ["lint", "replay"])
def test_a_file_that_is_not_utf8_names_the_byte(
    command: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "bad.json"
    path.write_bytes(b"\xff[]")
    assert main([command, str(path)]) == 2
    err = capsys.readouterr().err
    assert err == f"flowdrop-buffer: error: {path}: not UTF-8 text (invalid start byte at byte 0)\n"


def test_saving_into_a_missing_folder_is_an_error_after_the_timeline(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = tmp_path / "chat.json"
    source.write_text(json.dumps([{"role": "user", "content": "hi"}]), encoding="utf-8")
    target = tmp_path / "nowhere" / "saved.json"
    assert main(["replay", str(source), "--save", str(target)]) == 2
    out, err = capsys.readouterr()
    assert "1 step: 1 appended" in out  # the replay itself ran and was shown
    assert err == f"flowdrop-buffer: error: cannot write {target}: No such file or directory\n"
    assert not target.exists()
