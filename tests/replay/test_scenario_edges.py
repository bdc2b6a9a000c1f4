"""Scenario files as a user writes them: the odd-but-valid ones read, the broken ones say why."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from flowdrop_core.scenario import (
    JSONProblem,
    ScenarioError,
    dump_scenario,
    load_scenario,
    parse_json,
    parse_scenario,
)


def test_a_step_with_text_and_the_same_append_reads_and_saves_the_text_only() -> None:
    document = {
        "name": "t",
        "steps": [{"text": {"text": "hi"}, "append": {"role": "user", "content": "hi"}}],
        "expect": [{"provider": {"dropped": 0}}],
    }
    scenario = parse_scenario(json.dumps(document))
    assert scenario.steps[0].append == {"role": "user", "content": "hi"}
    saved = json.loads(dump_scenario(scenario))
    assert saved["steps"] == [{"label": "", "text": {"text": "hi", "role": "user"}}]
    assert saved["expect"] == [{"provider": {"dropped": 0}}]  # unset provider fields left out


def test_byte_order_mark_and_a_bare_value_read_as_json() -> None:
    assert parse_json("\ufeff[1]") == [1]
    assert parse_json("5") == 5


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        (
            "1e999999",
            "not JSON (1e999999 at the top level: the number is too large (it would be infinite))",
        ),
        ("[NaN]", "not JSON (NaN at [0]: JSON numbers are finite)"),
        ('{"a": -Infinity}', "not JSON (-Infinity at a: JSON numbers are finite)"),
    ],
)
def test_numbers_json_cannot_hold_are_named_with_their_place(text: str, problem: str) -> None:
    with pytest.raises(JSONProblem) as err:
        parse_json(text)
    assert str(err.value) == problem


def test_a_file_that_is_not_utf8_names_the_byte(tmp_path: Path) -> None:
    path = tmp_path / "bad.json"
    path.write_bytes(b'\xff{"name": "t", "steps": []}')
    with pytest.raises(ScenarioError) as err:
        load_scenario(path)
    assert str(err.value) == f"{path}: not UTF-8 text (invalid start byte at byte 0)"
