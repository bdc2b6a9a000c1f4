"""Every command escapes terminal control characters the same way (``flowdrop_core.cli._output``).

A stored or recorded message can hold a bidi override (U+202E), a one-byte
CSI (U+009B) or ESC: ``store`` printed them raw while ``replay`` escaped
them. Text output shows each as its escape; JSON output uses ``\\uXXXX``,
so each line still parses to exactly what was stored.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from flowdrop_core.cli import main
from flowdrop_core.cli._output import visible, visible_json
from flowdrop_core.storage import SQLiteStore

HOSTILE = "safe\u202eevil\x9b31m\x1b[2Jend"
RAW = ("\u202e", "\x9b", "\x1b")


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def assert_no_raw(text: str) -> None:
    for char in RAW:
        assert char not in text, f"{char!r} reached the terminal"


@pytest.fixture
def target(tmp_path: Path) -> str:
    path = tmp_path / "buffers.sqlite3"
    SQLiteStore(path).set(
        "session", "s\u202e1", "chat_history", [{"role": "user", "content": HOSTILE}]
    )
    return str(path)


def test_visible_escapes_controls_bidi_and_keeps_newlines() -> None:
    assert visible(HOSTILE + "\nnext") == "safe\\u202eevil\\x9b31m\\x1b[2Jend\nnext"


def test_visible_json_keeps_the_value() -> None:
    line = json.dumps({"content": HOSTILE}, ensure_ascii=False)
    shown = visible_json(line)
    assert_no_raw(shown)
    assert "\\u202e" in shown and "\\u009b" in shown and "\\u001b" in shown
    assert json.loads(shown) == {"content": HOSTILE}


def test_store_slot_escapes_what_is_stored(target: str, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "store", target, "--slot", "session", "s\u202e1", "chat_history")
    assert code == 0, err
    assert_no_raw(out)
    assert out.splitlines()[0] == (
        '   0  {"role": "user", "content": "safe\\u202eevil\\u009b31m\\u001b[2Jend"}'
    )
    assert out.splitlines()[1] == "1 entry in slot ('session', 's\\u202e1', 'chat_history')"


def test_store_slot_json_escapes_and_parses_back(
    target: str, capsys: pytest.CaptureFixture[str]
) -> None:
    args = ("store", target, "--slot", "session", "s\u202e1", "chat_history", "--json")
    code, out, _ = run(capsys, *args)
    assert code == 0
    assert_no_raw(out)
    assert json.loads(out) == [{"role": "user", "content": HOSTILE}]


def test_store_listing_escapes_a_scope_id(target: str, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "store", target)
    assert code == 0
    assert_no_raw(out)
    assert '"s\\u202e1"' in out
    code, out, _ = run(capsys, "store", target, "--json")
    assert_no_raw(out)
    assert json.loads(out.splitlines()[0])["scope_id"] == "s\u202e1"


def test_replay_escapes_the_same_characters(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "rec.json"
    path.write_text(json.dumps([{"role": "user", "content": HOSTILE}]), encoding="utf-8")
    code, out, _ = run(capsys, "replay", str(path))
    assert code == 0
    assert_no_raw(out)
    assert "safe\\u202eevil\\x9b31m" in out
    code, out, _ = run(capsys, "replay", str(path), "--json")
    assert code == 0
    assert_no_raw(out)
    assert json.loads(out.splitlines()[0])["incoming"][0]["content"] == HOSTILE


@pytest.mark.parametrize("command", ["normalize", "lint"])
def test_normalize_and_lint_escape_the_file_name_and_the_content(
    command: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "rec\u202e\x9b.json"
    entries = [
        {"role": "user", "content": HOSTILE},
        {"role": "tool", "tool_call_id": "c1", "content": HOSTILE},
    ]
    path.write_text(json.dumps(entries), encoding="utf-8")
    _, out, _ = run(capsys, command, str(path))
    assert_no_raw(out)
    assert "rec\\u202e\\x9b.json" in out
    _, out, _ = run(capsys, command, str(path), "--json")
    assert_no_raw(out)
    data = json.loads(out)
    assert data["source"] == str(path) and data["findings"]
    if command == "normalize":
        assert data["messages"][0]["content"] == HOSTILE
