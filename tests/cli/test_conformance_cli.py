"""``flowdrop-buffer conformance``: every rule with a status, checked against sample_data/."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest

from flowdrop_core.cli import main
from flowdrop_core.conformance.kit import EXTRA_CASES

SAMPLES = Path(__file__).resolve().parents[2] / "sample_data"


def test_json_lists_every_rule_with_a_status(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["conformance", "--json", "--samples", str(SAMPLES)]) == 0
    data = json.loads(capsys.readouterr().out)
    assert [r["rule"] for r in data["rules"]] == [f"MEM-{n}" for n in range(1, 17)]
    assert {r["status"] for r in data["rules"]} <= {"pass", "fail", "no example", "not covered"}
    names = {e["name"] for r in data["rules"] for e in r["examples"]}
    extra = {c["name"] for c in EXTRA_CASES}
    assert names == {p.stem for p in SAMPLES.glob("*.json")} | extra
    assert data["totals"] == {"pass": 16, "fail": 0, "no example": 0, "not covered": 0}


def test_markdown_by_default(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["conformance", "--samples", str(SAMPLES)]) == 0
    out = capsys.readouterr().out
    assert out.startswith("# flowdrop-buffer-inspector: standing against GR-MEM\n")
    assert "| MEM-14 | pass |" in out
    assert "## MEM-12: pass" in out
    assert "mem-12-unserialized-when-the-wait-runs-out" in out


def test_a_failing_example_exits_1(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    shutil.copy(SAMPLES / "mem-2-duplicate-turn.json", tmp_path / "a.json")
    data = json.loads((tmp_path / "a.json").read_text())
    data["expect"][0]["verdict"] = "appended"
    (tmp_path / "a.json").write_text(json.dumps(data))
    assert main(["conformance", "--json", "--samples", str(tmp_path)]) == 1
    by_rule = {r["rule"]: r for r in json.loads(capsys.readouterr().out)["rules"]}
    assert by_rule["MEM-2"]["status"] == "fail"
    assert by_rule["MEM-2"]["examples"][0]["mismatches"] == [
        'exchange 2 (append): verdict: expected "appended", got "dropped"'
    ]
    assert by_rule["MEM-1"]["status"] == "no example"  # only the built-in cases run besides


def test_a_folder_without_scenarios_is_an_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["conformance", "--samples", str(tmp_path)]) == 2
    assert "no scenario files" in capsys.readouterr().err
    (tmp_path / "bad.json").write_text("{")
    assert main(["conformance", "--samples", str(tmp_path)]) == 2
    assert "bad.json" in capsys.readouterr().err


def test_export_writes_one_file_per_rule(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "kit"
    assert main(["conformance", "--samples", str(SAMPLES), "--export", str(out)]) == 0
    assert "wrote 16 kit files" in capsys.readouterr().out
    assert sorted(p.name for p in out.iterdir()) == sorted(f"MEM-{n}.json" for n in range(1, 17))


def test_against_runs_the_kit_on_another_implementation(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    adapter = f"{sys.executable} -m flowdrop_core.conformance.adapter"
    assert main(["conformance", "--json", "--against", adapter]) == 0
    assert json.loads(capsys.readouterr().out)["totals"]["pass"] == 16
    broken = Path(__file__).resolve().parents[1] / "core" / "broken_adapter.py"
    command = f"{sys.executable} {broken} keep-duplicates"
    assert main(["conformance", "--against", command]) == 1
    out = capsys.readouterr().out
    assert "| MEM-1 | fail |" in out
    assert "FAIL: `A re-fired tool result for an answered call is dropped`" in out


def test_against_a_command_that_cannot_start_is_a_usage_error(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["conformance", "--against", "/nonexistent/adapter"]) == 2
    assert "cannot start '/nonexistent/adapter'" in capsys.readouterr().err
    assert main(["conformance", "--kit", "somewhere"]) == 2
    assert "--kit goes with --against" in capsys.readouterr().err
