"""The new formats in the command line: a real recording replays, bad input is one
located error on stderr, exit 2, no traceback."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from flowdrop_core.cli import main

FRESH = Path(__file__).resolve().parents[2] / "sample_data" / "fresh"


def run(capsys: pytest.CaptureFixture[str], *argv: object) -> tuple[int, str, str]:
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    assert "Traceback" not in err
    return code, out, err


@pytest.mark.parametrize(
    "name",
    [
        "codex_golden_session.jsonl",
        "pydantic_ai_history_tool_return.json",
        "vercel_ui_messages_1602.json",
        "hermes_chatml_stock.txt",
        "cassette_openai_responses_background_mode_with_tool_vcr.json",
    ],
)
def test_a_real_recording_replays(capsys: pytest.CaptureFixture[str], name: str) -> None:
    code, out, err = run(capsys, "replay", FRESH / name, "--json")
    assert (code, err) == (0, "")
    assert any('"step": 1' in line for line in out.splitlines())


@pytest.mark.parametrize(
    ("fmt", "document", "problem"),
    [
        ("xlam", {"query": "q", "answers": {}}, "answers: expected a list of calls, got object"),
        ("pydantic-ai", [{"kind": "response", "parts": [{"part_kind": "tool-call", "tool_name": "f"}]}],
         "[0].parts[0]: tool-call part without 'tool_call_id'"),
        ("vercel-ai", [{"role": "robot", "parts": [{"type": "text", "text": "x"}]}],
         "[0].role: unknown role 'robot' (expected system or user or assistant)"),
    ],
)  # fmt: skip
def test_bad_input_is_one_located_error_exit_2(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, fmt: str, document: object, problem: str
) -> None:
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(document), encoding="utf-8")
    code, out, err = run(capsys, "replay", path, "--format", fmt)
    assert (code, out) == (2, "")
    assert err == f"flowdrop-buffer: error: {path} is not valid {fmt}: {problem}\n"
