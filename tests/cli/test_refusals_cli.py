"""Refusals that say what a file is and what opens it: one message, no list of "not JSON"."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from framework_files import agents_file, langgraph_file

from flowdrop_core.cli import main


def _replay(capsys: pytest.CaptureFixture[str], path: Path) -> tuple[int, str]:
    code = main(["replay", str(path)])
    out, err = capsys.readouterr()
    assert out == ""
    return code, err


def test_replay_of_a_langgraph_checkpoint_file_points_to_store(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Written by the real SqliteSaver: not "not UTF-8 text", but what it is and what opens it."""
    path = langgraph_file(tmp_path / "checkpoints.sqlite")
    code, err = _replay(capsys, path)
    assert code == 2
    assert err.startswith(
        f"flowdrop-buffer: error: {path}: a LangGraph SqliteSaver checkpoint file (tables "
    )
    assert err.rstrip().endswith(f"not a recording; open it with: flowdrop-buffer store {path}")
    assert "checkpoints" in err and "UTF-8" not in err


def test_replay_of_an_agents_session_file_points_to_store(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = agents_file(tmp_path / "agents.sqlite")
    code, err = _replay(capsys, path)
    assert code == 2
    assert "an OpenAI Agents SQLiteSession file (tables agent_messages, agent_sessions" in err
    assert f"open it with: flowdrop-buffer store {path}" in err


def test_replay_of_another_sqlite_file_names_its_tables_and_no_command(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "app.db"
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE users (id INTEGER)")
    conn.execute("CREATE TABLE orders (id INTEGER)")
    conn.commit()
    conn.close()
    code, err = _replay(capsys, path)
    assert (code, err) == (
        2,
        f"flowdrop-buffer: error: {path}: a SQLite file with tables orders, users, not a "
        "recorded conversation (JSON or JSON Lines); no command of flowdrop-buffer reads it\n",
    )


def test_text_that_is_not_json_says_so_first_with_line_and_column(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "cut.json"
    path.write_text('{"messages": [\n  {"role": "user", "content": "hi"},\n  {"role": "as', "utf-8")
    code, err = _replay(capsys, path)
    assert (code, err) == (
        2,
        f"flowdrop-buffer: error: {path}: not JSON (Unterminated "
        "string starting at line 3, column 12)\n",
    )


def test_json_lines_of_an_unknown_shape_say_their_keys_and_the_two_nearest_formats(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "events.jsonl"
    rows = [{"event": "start", "at": 1}, {"event": "say", "at": 2, "text": "hi"}]
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n", "utf-8")
    code, err = _replay(capsys, path)
    lines = err.splitlines()
    assert code == 2
    assert lines[0] == (
        f"flowdrop-buffer: error: no known format matched {path}: JSON Lines of 2 objects with "
        "keys 'event', 'at', 'text'"
    )
    assert lines[1] == "the nearest formats, and what each lacked:"
    reasons = lines[2 : lines.index("what each format reads:")]
    assert len(reasons) == 2
    assert "not JSON" not in err  # no line per JSON format saying the file is not one document


def test_json_of_an_unknown_shape_says_its_keys(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "odd.json"
    path.write_text(json.dumps({"turns": [{"speaker": "me", "said": "hi"}], "v": 1}), "utf-8")
    code, err = _replay(capsys, path)
    lines = err.splitlines()
    assert code == 2
    assert lines[0].endswith(f"matched {path}: a JSON object with keys 'turns', 'v'")
    assert len(lines[2 : lines.index("what each format reads:")]) == 2
    assert "not JSON" not in err
