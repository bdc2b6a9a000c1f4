"""Spec examples field by field, with the provider view shown and a rule index."""

from __future__ import annotations

from flowdrop_core.inspect.spec import field_checks, rule_index
from flowdrop_core.replay import check
from flowdrop_core.scenario import Expectation, load_scenario


def test_every_mem14_field_is_shown_both_ways_with_its_rule() -> None:
    result = check(load_scenario("sample_data/mem-14-full-window.json"))
    checks = field_checks(result)
    step1 = {c.field: c for c in checks if c.step == 1}
    assert {"count", "appended", "appended_any"} <= set(step1)
    assert {step1[n].rule for n in ("count", "appended", "appended_any")} == {"MEM-14"}
    assert all(c.verdict == "pass" for c in checks if c.checked)


def test_mem5_cases_show_the_provider_output_they_expect() -> None:
    result = check(load_scenario("sample_data/mem-5-zero-ids.json"))
    checks = field_checks(result)
    last = {c.field: c for c in checks if c.step == 2}
    assert last["provider.messages"].expected == [] and last["provider.messages"].actual == []
    assert last["provider.dropped"].verdict == "pass" and last["provider.dropped"].rule == "MEM-5"
    first = {c.field: c for c in checks if c.step == 1}
    assert first["provider.messages"].verdict == "not checked"  # shown although not expected
    assert first["provider.messages"].row()["expected"] == "(not checked)"


def test_a_wrong_expectation_fails_on_its_own_field_only() -> None:
    scenario = load_scenario("sample_data/mem-14-full-window.json")
    wrong = scenario.expect[0].model_dump(exclude_none=True) | {"appended": 7}
    scenario = scenario.model_copy(
        update={"expect": [Expectation.model_validate(wrong), *scenario.expect[1:]]}
    )
    checks = field_checks(check(scenario))
    failed = [(c.step, c.field) for c in checks if c.verdict == "fail"]
    assert failed == [(1, "appended")]


def test_rule_index_counts_passing_examples() -> None:
    index = rule_index({"MEM-1": ["a", "b"], "MEM-14": ["c"]}, {"a": True, "b": False, "c": True})
    assert [(e.rule, e.passed, e.anchor) for e in index] == [
        ("MEM-1", 1, "mem-1"),
        ("MEM-14", 1, "mem-14"),
    ]
    assert index[0].summary.startswith("A tool result")
