"""Import notes in the command line: in replay, normalize and lint.

And item 5: bad input is one located error on stderr, exit 2, no traceback; a
JSON file of an unknown shape lists what each format expects.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from flowdrop_core.cli import main
from flowdrop_core.importers import FORMATS

ROOT = Path(__file__).resolve().parents[2]
SESSION = ROOT / "sample_data" / "imports" / "claude_code_session.jsonl"
SUMMARY = json.loads(SESSION.read_text(encoding="utf-8").splitlines()[-1])["summary"]
NOTE = {
    "where": "line 7",
    "what": "summary event",
    "why": "not a conversation message",
    "content": SUMMARY,
    "unknown": False,
}


def run(capsys: pytest.CaptureFixture[str], *argv: Any) -> tuple[int, str, str]:
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    assert "Traceback" not in err
    return code, out, err


def test_replay_table_ends_with_the_import_notes(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "replay", SESSION)
    assert code == 0
    assert out.endswith(
        "\nimport notes (1): left out of the imported messages\n"
        "  line 7: summary event: not a conversation message\n"
    )


def test_replay_json_leads_with_one_notes_line(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "replay", SESSION, "--json")
    lines = [json.loads(line) for line in out.splitlines()]
    assert code == 0
    assert lines[0] == {"import_notes": [NOTE]}
    assert [line["step"] for line in lines[1:]] == [1, 2, 3, 4, 5, 6]


def test_replay_json_of_a_recording_without_notes_is_steps_only(
    capsys: pytest.CaptureFixture[str],
) -> None:
    _, out, _ = run(
        capsys, "replay", ROOT / "sample_data" / "imports" / "bedrock_converse.json", "--json"
    )
    assert all("step" in json.loads(line) for line in out.splitlines())


def test_normalize_text_and_json_show_the_notes(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "normalize", SESSION)
    assert code == 0
    assert out.splitlines()[-2:] == [
        "import notes (1): left out of the imported messages",
        "  line 7: summary event: not a conversation message",
    ]
    _, out, _ = run(capsys, "normalize", SESSION, "--json")
    assert json.loads(out)["import_notes"] == [NOTE]


def test_lint_text_and_json_show_the_notes(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "lint", SESSION)
    assert code == 0  # notes are not provider findings: they do not change the status
    assert out.splitlines() == [
        f"{SESSION}: line 7: import note: summary event: not a conversation message",
        "no findings, 1 import note",
    ]
    code, out, _ = run(capsys, "lint", SESSION, "--json")
    assert code == 0
    assert json.loads(out) == {"source": str(SESSION), "findings": [], "import_notes": [NOTE]}


def test_a_json_file_of_unknown_shape_lists_what_each_format_reads(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = tmp_path / "odd.json"
    path.write_text(json.dumps({"turns": [{"speaker": "me", "said": "hi"}]}), encoding="utf-8")
    for command in ("replay", "normalize", "lint"):
        code, out, err = run(capsys, command, path)
        assert (code, out) == (2, "")
        lines = err.splitlines()
        assert lines[0] == (
            f"flowdrop-buffer: error: no known format matched {path}: a JSON object with keys "
            "'turns'"
        )
        # The two nearest formats, each with what it lacks, then what each of them reads.
        split = lines.index("what each format reads:")
        assert lines[1] == "the nearest formats, and what each lacked:" and split == 4
        named = {fmt for line in lines[2:split] for fmt in line[2:].split(": ")[0].split(", ")}
        shapes = [line.split(":")[0] for line in lines[split + 1 :]]
        assert shapes == [f"- {fmt}" for fmt in FORMATS if fmt in named] and len(shapes) >= 2


@pytest.mark.parametrize(
    ("document", "located"),
    [
        ({"input": [{"type": {"x": 1}}]}, "input[0]: no string 'type'"),
        ([{"role": "user", "content": [{"type": ["text"], "text": "hi"}]}],
         "[0].content[0]: content part without a string 'type'"),
    ],
)  # fmt: skip
def test_issue_9_reductions_are_located_errors_in_a_subprocess(
    tmp_path: Path, document: Any, located: str
) -> None:
    """Exit 2, the file and JSON path on stderr, no traceback."""
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(document), encoding="utf-8")
    done = subprocess.run(
        [sys.executable, "-m", "flowdrop_core", "replay", str(path)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        check=False,
    )
    assert done.returncode == 2
    assert done.stdout == ""
    assert "Traceback" not in done.stderr
    assert done.stderr.startswith(f"flowdrop-buffer: error: no known format matched {path}:")
    assert located in done.stderr


# --------------------------------------------------------------------------- many conversations

FINETUNE = ROOT / "sample_data" / "imports" / "openai_finetune_drone.jsonl"


def test_lint_reports_each_conversation_of_a_fine_tuning_file(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Merged into one buffer, the lines' shared 'call_id' gave 2 duplicate_call and 2
    empty_turn findings; each conversation on its own has only its own unanswered call."""
    code, out, _ = run(capsys, "lint", FINETUNE)
    assert code == 1
    lines = out.splitlines()
    assert [line for line in lines if not line.startswith(str(FINETUNE))] == [
        "line 1: 1 finding",
        "line 2: 1 finding",
        "line 3: 1 finding",
    ]
    assert all(": unanswered_call: call 'call_id'" in line for line in lines[::2])
    assert "duplicate_call" not in out and "empty_turn" not in out
    code, out, _ = run(capsys, "lint", FINETUNE, "--json")
    data = json.loads(out)
    assert [c["conversation"] for c in data["conversations"]] == ["line 1", "line 2", "line 3"]
    assert [[f["kind"] for f in c["findings"]] for c in data["conversations"]] == [
        ["unanswered_call"]
    ] * 3


def test_replay_and_normalize_take_one_conversation(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, out, err = run(capsys, "replay", FINETUNE)
    assert (code, out) == (2, "")
    assert err == (
        f"flowdrop-buffer: error: {FINETUNE} holds 3 conversations, one per line "
        "(line 1 to line 3); pick one with --conversation N (1 to 3)\n"
    )
    code, out, _ = run(capsys, "replay", FINETUNE, "--conversation", "2", "--json")
    assert code == 0
    assert [json.loads(row)["label"] for row in out.splitlines()] == [
        "line 2: messages[0]",
        "line 2: messages[1]",
        "line 2: messages[2]",
    ]
    code, out, err = run(capsys, "normalize", FINETUNE, "--conversation", "4")
    assert (code, out) == (2, "")
    assert err == (
        f"flowdrop-buffer: error: {FINETUNE} holds 3 conversations; "
        "--conversation takes 1 to 3, not 4\n"
    )
