"""The conformance report against sample_data/, the spec's verdict words, and the glossary."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from flowdrop_core.conformance import RULES, conformance_report
from flowdrop_core.events import EventKind
from flowdrop_core.inspect.glossary import GLOSSARY, KIND_TERMS, help_for
from flowdrop_core.scenario import load_scenario, parse_scenario
from flowdrop_core.verdicts import VERDICTS, step_verdict

SAMPLES = Path(__file__).resolve().parents[2] / "sample_data"


def _samples() -> list:
    return [load_scenario(p) for p in sorted(SAMPLES.glob("*.json"))]


def test_every_rule_has_a_status_and_every_example_sits_under_each_rule_it_cites() -> None:
    scenarios = _samples()
    report = conformance_report(scenarios)
    data = json.loads(report.to_json())
    assert [r["rule"] for r in data["rules"]] == list(RULES)
    by_rule = {r["rule"]: r for r in data["rules"]}
    for scenario in scenarios:
        for rule in scenario.rules:
            assert scenario.name in [e["name"] for e in by_rule[rule]["examples"]]
    assert {r: v["status"] for r, v in by_rule.items()} == dict.fromkeys(RULES, "pass")
    assert all(by_rule[r]["examples"] for r in RULES)  # each rule passes with an example
    assert data["passed"] is True
    assert data["totals"] == {"pass": 16, "fail": 0, "no example": 0, "not covered": 0}
    for rule in ("MEM-4", "MEM-9", "MEM-15"):
        assert by_rule[rule]["decisions"]
    assert by_rule["MEM-14"]["decisions"]


def test_a_failing_example_fails_every_rule_it_cites() -> None:
    path = SAMPLES / "mem-14-full-window.json"
    data = json.loads(path.read_text())
    data["expect"][0]["appended"] = 0
    broken = parse_scenario(json.dumps(data))
    report = conformance_report([broken])
    by_rule = {r.rule: r for r in report.rules}
    assert by_rule["MEM-14"].status == "fail"
    assert report.passed is False
    (example,) = by_rule["MEM-14"].examples
    assert example.mismatches == ("exchange 2 (append): appended: expected 0, got 1",)


def test_the_markdown_puts_file_text_in_code_spans() -> None:
    data = json.loads((SAMPLES / "mem-1-refired-dropped.json").read_text())
    data["title"] = "**bold** [link](http://x) `tick`"
    md = conformance_report([parse_scenario(json.dumps(data))]).to_markdown()
    assert "`**bold** [link](http://x) 'tick'`" in md
    assert "| MEM-1 | pass | 1/1 |" in md


@pytest.mark.parametrize(
    ("refused", "appended", "kinds", "word"),
    [
        (True, 0, ["refused"], "refused"),
        (False, 1, ["placeholder_inserted", "appended"], "healed"),
        (False, 1, ["appended", "evicted"], "appended"),
        (False, 0, ["placeholder_replaced"], "replaced"),
        (False, 0, ["duplicate_result"], "dropped"),
        (False, 0, ["duplicate_turn"], "dropped"),
        (False, 0, ["pure_read"], "pure read"),
        (False, 0, [], "unchanged"),
    ],
)
def test_verdict_words(refused: bool, appended: int, kinds: list[str], word: str) -> None:
    assert step_verdict(refused, appended, kinds) == word
    assert word in VERDICTS


def test_the_spec_examples_carry_the_spec_verdicts() -> None:
    by_name = {s.name: s for s in _samples()}
    assert by_name["mem-14-full-window"].expect[0].verdict == "appended"
    assert by_name["mem-14-refired-result"].expect[0].verdict == "dropped"
    assert by_name["mem-3-heal-on-user-turn"].expect[0].verdict == "healed"
    assert by_name["mem-1-mem-10-placeholder-replaced"].expect[0].verdict == "replaced"
    read = by_name["mem-7-mem-13-refused-read"].expect
    assert [(e.verdict, e.found) for e in read] == [
        ("refused", False),
        ("refused", False),
        ("pure read", True),
    ]


def test_a_wrong_verdict_or_found_is_a_mismatch() -> None:
    from flowdrop_core.replay import check

    data = json.loads((SAMPLES / "mem-7-mem-13-refused-read.json").read_text())
    data["expect"][0]["found"] = True
    data["expect"][2]["verdict"] = "appended"
    result = check(parse_scenario(json.dumps(data)))
    assert [(m.step, m.field, m.got) for m in result.mismatches] == [
        (1, "found", False),
        (3, "verdict", "pure read"),
    ]


def test_the_glossary_defines_every_term_the_issue_lists_and_every_kind() -> None:
    assert set(GLOSSARY) == {
        "count", "appended", "appended_any", "window", "eviction", "re-fire",
        "placeholder", "heal", "refusal", "scope", "slot",
    }  # fmt: skip
    from flowdrop_core.inspect.decisions import Decision

    for kind in [*EventKind, *Decision]:
        assert help_for(str(kind)), kind
    assert set(KIND_TERMS.values()) <= set(GLOSSARY)
    assert help_for("appended_any").endswith("(MEM-14)")
    assert help_for("no such thing") == ""
