"""``flowdrop-buffer doctor``: exact findings, both numberings, actions, verdict and exit code."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from flowdrop_core.cli import main

IMPORTS = Path(__file__).resolve().parents[2] / "sample_data" / "imports"
BROKEN = IMPORTS / "broken_history.json"


def run(capsys: pytest.CaptureFixture[str], *argv: Any) -> tuple[int, str, str]:
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_json_holds_every_finding_with_both_numberings_and_actions(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, out, _ = run(capsys, "doctor", BROKEN, "--json")
    assert code == 1
    data = json.loads(out)
    assert set(data) == {"findings", "provider_rejects"}
    assert data["provider_rejects"] is True
    assert all(
        set(f) == {"kind", "rule", "index", "step", "call_id", "action", "message"}
        for f in data["findings"]
    )
    assert [
        (f["kind"], f["rule"], f["index"], f["step"], f["call_id"], f["action"])
        for f in data["findings"]
    ] == [
        ("duplicate_result", "MEM-1", 3, 4, "call_a1", "dropped"),  # the re-sent result
        ("unanswered_call", "MEM-3", 4, 5, "call_Rf4m", "healed"),
        ("orphan_result", "MEM-5", 6, 7, "call_zz9", "nothing"),
        ("duplicate_call", "MEM-2", 7, 8, "call_a1", "dropped"),  # the duplicate turn
        (
            "empty_turn",
            "MEM-5",
            7,
            8,
            "call_a1",
            "dropped",
        ),  # ... which is empty once its call goes
        ("idless_result", "MEM-11", 8, 9, None, "nothing"),
        ("late_result", "MEM-10", 12, 13, "call_late", "replaced"),
    ]
    assert (
        "healed it at step 6 with a placeholder at buffer position 4 (0-based)"
        in (data["findings"][1]["message"])
    )


def test_text_labels_each_number_with_its_base(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "doctor", BROKEN)
    assert code == 1
    lines = out.splitlines()
    assert lines[1] == (
        f"{BROKEN}: messages[4] · step 5: unanswered_call [call_Rf4m] (MEM-3): GR-MEM healed it "
        "at step 6 with a placeholder"
    )
    assert lines[2] == (
        f"{BROKEN}: messages[6] · step 7: orphan_result [call_zz9] (MEM-5): GR-MEM kept it; "
        "MEM-5's provider view has to repair it"
    )
    assert lines[-1] == (
        "7 findings in 14 messages, 14 steps: a provider would reject the recording as it is"
    )


@pytest.mark.parametrize(
    ("name", "code", "kinds"),
    [
        ("openai_chat.json", 1, ["duplicate_result", "unanswered_call"]),
        ("anthropic_messages.json", 1, ["duplicate_result", "unanswered_call"]),
        ("conversation.jsonl", 1, ["unanswered_call", "duplicate_result"]),
        ("openai_chat_completion.json", 1, ["unanswered_call"]),
        ("bedrock_converse.json", 0, []),
        ("gemini_function_calling.json", 0, []),
        ("claude_code_session.jsonl", 0, []),
        ("sharegpt_glaive.json", 0, []),
        ("langgraph_stream_values.json", 0, []),
    ],
)
def test_real_imports(
    capsys: pytest.CaptureFixture[str], name: str, code: int, kinds: list[str]
) -> None:
    got, out, _ = run(capsys, "doctor", IMPORTS / name, "--json")
    data = json.loads(out)
    assert got == code
    assert data["provider_rejects"] is bool(code)
    assert [f["kind"] for f in data["findings"]] == kinds


def test_a_window_adds_the_buffers_orphans_without_changing_the_verdict(
    capsys: pytest.CaptureFixture[str],
) -> None:
    _, plain, _ = run(capsys, "doctor", IMPORTS / "openai_chat.json", "--json")
    code, windowed, _ = run(
        capsys, "doctor", IMPORTS / "openai_chat.json", "--json", "--max-messages", "2"
    )
    before, after = json.loads(plain), json.loads(windowed)
    orphans = [f for f in after["findings"] if f["kind"] == "orphaned_by_window"]
    assert [(f["call_id"], f["index"], f["step"], f["action"]) for f in orphans] == [
        ("call_Hk2sN8wQ5t", 11, 12, "evicted")  # the result the last step leaves orphaned
    ]

    def where(findings: list[dict[str, Any]]) -> list[tuple[Any, ...]]:
        return [(f["kind"], f["index"], f["step"], f["call_id"], f["action"]) for f in findings]

    rest = [f for f in after["findings"] if f["kind"] != "orphaned_by_window"]
    assert where(rest) == where(before["findings"])  # the positions in messages differ
    assert code == 1 and after["provider_rejects"] is True


def test_a_clean_recording_exits_0_and_bad_input_exits_2(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    code, out, _ = run(capsys, "doctor", IMPORTS / "bedrock_converse.json")
    assert code == 0 and out.startswith("no findings in 3 messages")
    missing = tmp_path / "nope.json"
    code, _, err = run(capsys, "doctor", missing)
    assert code == 2 and "nope.json" in err


def test_the_installed_command_runs_doctor() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "flowdrop_core", "doctor", str(BROKEN), "--json"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 1
    assert json.loads(done.stdout)["provider_rejects"] is True


def test_a_scenario_file_names_its_steps(capsys: pytest.CaptureFixture[str]) -> None:
    scenario = IMPORTS.parent / "mem-5-zero-ids.json"
    code, out, _ = run(capsys, "doctor", scenario, "--json")
    assert code == 1
    assert [(f["kind"], f["index"], f["step"]) for f in json.loads(out)["findings"]] == [
        ("empty_turn", 0, 1),
        ("idless_call", 0, 1),
        ("idless_result", 1, 2),
    ]
    code, out, _ = run(capsys, "doctor", scenario)
    assert out.splitlines()[0].startswith(f"{scenario}: steps[0].append · step 1: ")


def test_each_line_reads_at_a_glance(capsys: pytest.CaptureFixture[str]) -> None:
    """One place in the file plus the step, what GR-MEM did once, at most about 200 characters.

    The long sample's lines (a result re-sent, healed calls, a late result) were 298-335
    characters, with the step and buffer position said twice; the whole story stays in --json.
    """
    sample = IMPORTS.parent / "long_conversation.jsonl"
    code, out, _ = run(capsys, "doctor", sample)
    lines = [line.removeprefix(f"{sample}: ") for line in out.splitlines()[:-1]]
    assert code == 1 and len(lines) > 50
    assert max(len(line) for line in lines) <= 200
    for line in lines:
        assert "message index" not in line and "0-based, " not in line
        assert line.count("GR-MEM") <= 1, line
    code, out, _ = run(capsys, "doctor", sample, "--json")
    findings = json.loads(out)["findings"]
    assert len(findings) == len(lines)
    assert all(
        set(f) == {"kind", "rule", "index", "step", "call_id", "action", "message"}
        for f in findings
    )
