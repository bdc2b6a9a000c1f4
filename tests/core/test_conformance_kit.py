"""The conformance kit: shipped as the scenarios make it, passed by the reference adapter,
and failing each of five wrong implementations on the rule it breaks."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from broken_adapter import Broken

from flowdrop_core.conformance import (
    RULES,
    ConformanceReport,
    StandingError,
    compare_standings,
    read_standing,
)
from flowdrop_core.conformance.kit import EXTRA_CASES, build_kit, export_kit, load_kit
from flowdrop_core.conformance.protocol import OPS, REQUEST_SCHEMA, mismatches
from flowdrop_core.conformance.runner import AdapterError, InProcess, Subprocess, run_kit
from flowdrop_core.scenario import load_scenario

ROOT = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent
SHIPPED = ROOT / "flowdrop_core" / "conformance" / "kit"


def _scenarios() -> list[Any]:
    return [load_scenario(p) for p in sorted((ROOT / "sample_data").glob("*.json"))]


def _against(command: str, cases: list[Any] | None = None) -> ConformanceReport:
    transport = Subprocess(command, timeout=20)
    try:
        return run_kit(load_kit() if cases is None else cases, transport)
    finally:
        transport.close()


def _failing(report: ConformanceReport) -> dict[str, list[str]]:
    return {
        r.rule: [m for e in r.examples for m in e.mismatches]
        for r in report.rules
        if r.status == "fail"
    }


def test_the_shipped_kit_is_what_the_scenarios_and_extra_cases_make(tmp_path: Path) -> None:
    export_kit(tmp_path, build_kit(_scenarios()))
    made = {p.name: p.read_text(encoding="utf-8") for p in tmp_path.iterdir()}
    shipped = {p.name: p.read_text(encoding="utf-8") for p in SHIPPED.glob("*.json")}
    assert made == shipped, (
        "run: flowdrop-buffer conformance --export flowdrop_core/conformance/kit"
    )


def test_the_kit_has_a_file_and_a_case_for_every_rule() -> None:
    assert sorted(p.stem for p in SHIPPED.glob("*.json")) == sorted(RULES)
    cases = load_kit()
    assert {rule for case in cases for rule in case["rules"]} >= set(RULES)
    assert len({c["name"] for c in cases}) == len(cases)
    for case in cases:  # every request is an op of the protocol
        assert {x["send"]["op"] for x in case["exchanges"]} <= set(OPS) - {"hello"}


def test_every_kit_request_fits_the_request_schema() -> None:
    """The schema's shape, checked without a validator: each op has its branch and fields."""
    branches = {
        op: branch["properties"]
        for branch in REQUEST_SCHEMA["oneOf"]
        for op in (
            [branch["properties"]["op"]["const"]]
            if "const" in branch["properties"]["op"]
            else branch["properties"]["op"]["enum"]
        )
    }
    assert set(branches) == set(OPS)
    for case in load_kit():
        for exchange in case["exchanges"]:
            send = exchange["send"]
            assert set(send) <= set(branches[send["op"]]), (case["name"], sorted(send))


def test_our_own_standing_passes_every_rule_with_an_example() -> None:
    report = run_kit(load_kit(), InProcess())
    assert _failing(report) == {}
    assert {r.rule: r.status for r in report.rules} == dict.fromkeys(RULES, "pass")
    assert all(r.examples for r in report.rules)


def test_the_reference_adapter_passes_over_the_wire() -> None:
    report = _against(f"{sys.executable} -m flowdrop_core.conformance.adapter")
    assert report.implementation == "flowdrop-buffer-inspector"
    assert _failing(report) == {}
    assert report.totals["pass"] == 16


@pytest.mark.parametrize(
    ("mode", "rule", "field"),
    [
        ("appended-from-size", "MEM-14", "appended"),
        ("keep-duplicates", "MEM-1", "count"),
        ("placeholder-at-end", "MEM-3", "messages["),
        ("refused-reads-storage", "MEM-7", "found"),
        ("drop-count-off-by-one", "MEM-5", "dropped"),
    ],
)
def test_a_wrong_implementation_fails_the_rule_it_breaks(mode: str, rule: str, field: str) -> None:
    """In this process: the wire is what the reference adapter's test and the CLI's cover."""
    report = run_kit(load_kit(), InProcess(Broken(mode)))
    failing = _failing(report)
    assert rule in failing, failing
    assert any(f"): {field}" in m for m in failing[rule]), failing[rule]
    assert not report.passed


def test_the_example_javascript_adapter_passes_what_it_implements() -> None:
    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not installed: the JavaScript adapter example cannot run")
    report = _against(f"{node} {ROOT / 'examples' / 'conformance_adapter.js'}")
    assert report.implementation == "example-js-adapter"
    status = {r.rule: r.status for r in report.rules}
    assert status["MEM-4"] == "pass"
    assert status["MEM-1"] == "fail"
    assert any("not implemented: begin" in m for m in _failing(report)["MEM-1"])
    mem9 = next(r for r in report.rules if r.rule == "MEM-9")
    assert [e.passed for e in mem9.examples if e.name == "mem-9-absent-identities-never-match"] == [
        True
    ]


# -- judging replies ------------------------------------------------------------------------


def test_a_reply_is_judged_by_json_equality_and_names_the_first_difference() -> None:
    assert mismatches({"appended_any": False}, {"appended_any": 0}) == [("appended_any", False, 0)]
    assert mismatches({"count": 2}, {"count": 2.0}) == []
    assert mismatches({"count": 2}, {}) == [("count", 2, "(missing)")]
    got = mismatches(
        {"messages": [{"role": "user"}, {"role": "tool"}]},
        {"messages": [{"role": "user"}, {"role": "user"}]},
    )
    assert got == [("messages[1].role", "tool", "user")]
    assert mismatches({"messages": [1]}, {"messages": [1, 2]}) == [("messages length", 1, 2)]


def test_errors_are_expected_or_refused_explicitly() -> None:
    assert mismatches({"error": True}, {"error": "bad input"}) == []
    assert mismatches({"error": True}, {"messages": []}) == [("error", "an error", None)]
    assert mismatches({"messages": []}, {"error": "boom", "messages": []}) == [
        ("error", "no error", "boom")
    ]
    assert mismatches({}, ["not", "an", "object"]) == [
        ("reply", "a JSON object", ["not", "an", "object"])
    ]


def test_concurrent_entries_compare_in_any_order() -> None:
    want = {"entries_any_order": [{"c": 1}, {"c": 2}]}
    assert mismatches(want, {"messages": [{"c": 2}, {"c": 1}]}) == []
    assert mismatches(want, {"messages": [{"c": 2}, {"c": 2}]}) != []


# -- adapters that break the protocol -------------------------------------------------------

_ONE_CASE = [
    {"name": "one", "rules": ["MEM-16"], "exchanges": [{"send": {"op": "text"}, "expect": {}}]}
]


@pytest.mark.parametrize(
    ("script", "said"),
    [
        ("import sys; sys.stdin.readline()", "the adapter exited"),
        ("import sys\nfor _ in sys.stdin: print('not json', flush=True)", "is not JSON"),
        ("import sys\nfor _ in sys.stdin: print('[1]', flush=True)", "not a JSON object"),
        ("import sys\nfor _ in sys.stdin: pass", "no reply to op"),  # never answers
    ],
)
def test_an_adapter_that_breaks_the_protocol_fails_the_case_with_the_reason(
    tmp_path: Path, script: str, said: str
) -> None:
    path = tmp_path / "adapter.py"
    path.write_text(script)
    transport = Subprocess(f"{sys.executable} {path}", timeout=1.0)
    try:
        report = run_kit(_ONE_CASE, transport, implementation="bad")
    finally:
        transport.close()
    failing = _failing(report)
    assert list(failing) == ["MEM-16"]
    assert said in failing["MEM-16"][0]


def test_a_command_that_cannot_start_is_an_adapter_error() -> None:
    with pytest.raises(AdapterError, match="cannot start"):
        Subprocess("/nonexistent/adapter --flag")


def test_the_extra_cases_cite_the_rules_no_scenario_file_shows() -> None:
    scenario_rules = {r for s in _scenarios() for r in s.rules}
    extra_rules = {r for c in EXTRA_CASES for r in c["rules"]}
    assert {"MEM-4", "MEM-9", "MEM-12", "MEM-15"} <= extra_rules - scenario_rules


def test_exported_files_are_plain_json_an_outside_runner_can_read(tmp_path: Path) -> None:
    export_kit(tmp_path, build_kit(_scenarios()))
    data = json.loads((tmp_path / "MEM-4.json").read_text(encoding="utf-8"))
    assert data["rule"] == "MEM-4"
    assert data["summary"]
    assert [c["name"] for c in data["cases"]][:1] == ["mem-4-declared-order"]


def test_the_adapter_answers_a_line_that_is_not_json_with_an_error() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "flowdrop_core.conformance.adapter"],
        input='oops\n{"op": "nope"}\n[]\n{"op": "text", "text": "hi"}\n',
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    replies = [json.loads(line) for line in done.stdout.splitlines()]
    assert "not JSON" in replies[0]["error"]
    assert "unknown op 'nope'" in replies[1]["error"]
    assert replies[2] == {"error": "a request is one JSON object"}
    assert replies[3] == {"message": {"role": "user", "content": "hi"}}


def test_a_standing_reads_back_from_its_json_and_compares_rule_by_rule() -> None:
    ours = run_kit(load_kit(), InProcess())
    back = read_standing(ours.to_json(), "ours.json")
    assert back.to_dict() == ours.to_dict()
    data = json.loads(ours.to_json())  # the same implementation name on both sides
    data["rules"][4]["status"] = "fail"
    rows = compare_standings(ours, read_standing(json.dumps(data)))
    assert [r["rule"] for r in rows if not r["same"]] == ["MEM-5"]
    assert rows[4]["theirs"] == "fail"
    assert rows[4]["ours examples"] == "2/2"
    assert rows[4]["ours"] == "pass"


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ("{", "s.json: not JSON (line 1, column 2"),
        ("[]", "s.json: not a standing"),
        ('{"rules": 3}', "s.json.rules: missing or of the wrong type"),
        ('{"rules": [{"status": "pass", "examples": []}]}', "rules[0].rule: missing"),
        (
            '{"rules": [{"rule": "MEM-1", "status": "pass", "examples": [{"name": "x"}]}]}',
            "rules[0].examples[0].passed: missing",
        ),
    ],
)
def test_a_file_that_is_no_standing_is_named_where(text: str, said: str) -> None:
    with pytest.raises(StandingError, match=re.escape(said)):
        read_standing(text, "s.json")
