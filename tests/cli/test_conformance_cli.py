"""``flowdrop-buffer conformance``: every rule with a status, checked against sample_data/."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from flowdrop_core.cli import main

SAMPLES = Path(__file__).resolve().parents[2] / "sample_data"


def test_json_lists_every_rule_with_a_status(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["conformance", "--json", "--samples", str(SAMPLES)]) == 0
    data = json.loads(capsys.readouterr().out)
    assert [r["rule"] for r in data["rules"]] == [f"MEM-{n}" for n in range(1, 17)]
    assert {r["status"] for r in data["rules"]} <= {"pass", "fail", "no example", "not covered"}
    names = {e["name"] for r in data["rules"] for e in r["examples"]}
    assert names == {p.stem for p in SAMPLES.glob("*.json")}
    assert data["totals"]["fail"] == 0


def test_markdown_by_default(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["conformance", "--samples", str(SAMPLES)]) == 0
    out = capsys.readouterr().out
    assert out.startswith("# flowdrop-buffer-inspector: standing against GR-MEM\n")
    assert "| MEM-14 | pass |" in out
    assert "## MEM-12: no example" in out


def test_a_failing_example_exits_1(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    shutil.copy(SAMPLES / "mem-2-duplicate-turn.json", tmp_path / "a.json")
    data = json.loads((tmp_path / "a.json").read_text())
    data["expect"][0]["verdict"] = "appended"
    (tmp_path / "a.json").write_text(json.dumps(data))
    assert main(["conformance", "--json", "--samples", str(tmp_path)]) == 1
    by_rule = {r["rule"]: r for r in json.loads(capsys.readouterr().out)["rules"]}
    assert by_rule["MEM-2"]["status"] == "fail"
    assert by_rule["MEM-2"]["examples"][0]["mismatches"] == [
        'mem-2-duplicate-turn: step 1: verdict: expected "appended", got "dropped"'
    ]
    assert by_rule["MEM-1"]["status"] == "no example"


def test_a_folder_without_scenarios_is_an_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["conformance", "--samples", str(tmp_path)]) == 2
    assert "no scenario files" in capsys.readouterr().err
    (tmp_path / "bad.json").write_text("{")
    assert main(["conformance", "--samples", str(tmp_path)]) == 2
    assert "bad.json" in capsys.readouterr().err
