"""``flowdrop-buffer store FILE`` on an Agents SQLiteSession file and a LangGraph checkpoint file."""

from __future__ import annotations

import json
import sqlite3
from contextlib import closing
from pathlib import Path

import pytest
from framework_files import agents_file, digest, langgraph_file, parallel_calls_file

from flowdrop_core.cli import main


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(["store", *argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_lists_sessions_with_health_and_exits_1(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = agents_file(tmp_path / "agents.sqlite")
    before = digest(path)
    code, out, _ = _run(capsys, str(path))
    assert code == 1
    assert "duplicate_result x1" in out and "unanswered_call x1" in out and "healthy" in out
    assert "3 sessions in" in out and "OpenAI Agents SQLiteSession file" in out
    code, out, _ = _run(capsys, str(path), "--json")
    listed = {json.loads(line)["id"]: json.loads(line) for line in out.splitlines()}
    assert listed["retried"]["findings"][0]["kind"] == "duplicate_result"
    assert listed["clean"]["healthy"] is True
    assert digest(path) == before


def test_shows_a_thread_replays_it_and_repairs_only_with_admin(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = langgraph_file(tmp_path / "checkpoints.sqlite")
    code, out, _ = _run(capsys, str(path), "--thread", "t1")
    assert code == 1
    assert "! t1.messages[3] · step 4: duplicate_result [c1] (MEM-1): GR-MEM dropped it" in out
    assert "4 entries in 't1'; 1 finding" in out
    code, out, _ = _run(capsys, str(path), "--thread", "t1", "--timeline")
    assert "duplicate" in out.lower()
    code, out, err = _run(capsys, str(path), "--thread", "t1", "--repair")
    assert code == 2 and "add --admin" in err
    assert "t1: 2 changes to write:" in out  # without --admin: what it would change
    code, out, _ = _run(capsys, str(path), "--thread", "t1", "--repair", "--admin")
    assert code == 0 and "4 -> 3 entries (duplicate_result x1)" in out and ".bak-" in out
    code, out, _ = _run(capsys, str(path), "--thread", "t1")
    assert code == 0 and "0 findings" in out


def test_unknown_thread_and_misused_options(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = agents_file(tmp_path / "agents.sqlite")
    code, _, err = _run(capsys, str(path), "--thread", "nobody")
    assert code == 2 and "no session or thread 'nobody'" in err
    code, _, err = _run(capsys, str(path), "--repair", "--write")
    assert code == 2 and "need --thread" in err


def test_parallel_calls_are_one_turn_and_a_clean_session_exits_0(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = parallel_calls_file(tmp_path / "agents.sqlite")
    code, out, _ = _run(capsys, str(path), "--thread", "parallel")
    assert code == 0 and "5 entries in 'parallel'; 0 findings" in out
    assert '"arguments": "{\\"city\\":\\"Paris\\"}"' in out  # the listing shows the arguments
    code, out, _ = _run(capsys, str(path))
    assert code == 0 and "healthy" in out


def test_a_repair_prints_the_change_first_and_nothing_to_do_writes_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = agents_file(tmp_path / "agents.sqlite")
    before = digest(path)
    code, out, _ = _run(capsys, str(path), "--thread", "clean", "--repair", "--admin")
    assert code == 0 and "nothing to do; nothing will be written" in out
    assert digest(path) == before and not list(tmp_path.glob("*.bak-*"))
    code, out, _ = _run(capsys, str(path), "--thread", "retried", "--repair", "--admin")
    lines = out.splitlines()
    assert code == 0 and lines[0] == "retried: 1 change to write:"
    assert lines[1].startswith("  remove   agent_messages.id=4: {") and "Found 3 cats" in lines[1]
    assert lines[2].startswith("admin: writing these changes to ")
    assert "1 change written" in lines[3] and "read back with SQLiteSession.get_items" in lines[3]


def test_a_refused_repair_exits_2_and_changes_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = agents_file(tmp_path / "agents.sqlite")
    with closing(sqlite3.connect(path)) as conn:
        conn.execute("CREATE TRIGGER t AFTER DELETE ON agent_messages BEGIN SELECT 1; END")
        conn.commit()
    before = digest(path)
    code, out, err = _run(capsys, str(path), "--thread", "retried", "--repair", "--admin")
    assert code == 2 and "triggers" in err and "refused, nothing written" in out
    assert digest(path) == before and not list(tmp_path.glob("*.bak-*"))
