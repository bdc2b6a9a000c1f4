"""Scenario format: parsing, round trip, error text, context override, schema."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from flowdrop_core.scenario import (
    Scenario,
    ScenarioConfig,
    ScenarioError,
    dump_scenario,
    load_scenario,
    parse_scenario,
    scenario_schema_json,
    step_context,
)

ROOT = Path(__file__).resolve().parents[2]

#: The example scenario of the format's design, completed with a title.
DESIGN_EXAMPLE = {
    "name": "mem-14-full-window",
    "title": "A new message arriving at a full three-message window",
    "rules": ["MEM-14"],
    "config": {"scope": "session", "key": "chat_history", "max_messages": 3},
    "context": {"session_id": "demo"},
    "buffer": [],
    "steps": [
        {
            "label": "hi",
            "append": [{"role": "user", "content": "hi"}],
            "context": {"user_id": "7"},
        }
    ],
    "expect": [{"count": 3, "appended": 1, "appended_any": True}],
}


def _error(text: str, source: str = "sample_data/x.json") -> str:
    with pytest.raises(ScenarioError) as info:
        parse_scenario(text, source=source)
    return str(info.value)


def test_parses_the_issue_example() -> None:
    scenario = parse_scenario(json.dumps(DESIGN_EXAMPLE))
    assert scenario.name == "mem-14-full-window"
    assert scenario.config == ScenarioConfig(max_messages=3)
    assert scenario.config.storage == "memory"
    assert scenario.steps[0].append == [{"role": "user", "content": "hi"}]
    assert scenario.expect[0].count == 3
    assert scenario.expect[0].refused is None


def test_defaults_for_a_minimal_scenario() -> None:
    scenario = parse_scenario('{"name": "m", "steps": []}')
    assert scenario.config == ScenarioConfig(
        scope="session", key="chat_history", max_messages=0, storage="memory"
    )
    assert (scenario.title, scenario.rules, scenario.description) == ("", [], "")
    assert scenario.context is None
    assert (scenario.buffer, scenario.expect) == ([], [])


def test_buffer_and_append_are_kept_verbatim() -> None:
    odd_buffer = [
        1,
        "text",
        {"role": "tool", "content": "x", "metadata": {"tool_call_id": "0", "healed": True}},
        {"no_role": True, "timestamp": "2025-01-01T00:00:00Z"},
    ]
    text = json.dumps(
        {
            "name": "v",
            "buffer": odd_buffer,
            "steps": [{"append": {"role": "user", "content": None, "extra": [1, 2]}}],
        }
    )
    scenario = parse_scenario(text)
    assert scenario.buffer == odd_buffer
    assert scenario.steps[0].append == {"role": "user", "content": None, "extra": [1, 2]}


def test_dump_round_trips_and_is_stable() -> None:
    scenario = parse_scenario(json.dumps(DESIGN_EXAMPLE))
    text = dump_scenario(scenario)
    again = parse_scenario(text)
    assert again == scenario
    assert dump_scenario(again) == text
    assert text.endswith("}\n")
    data = json.loads(text)
    assert list(data) == [
        "name",
        "title",
        "rules",
        "description",
        "config",
        "context",
        "buffer",
        "steps",
        "expect",
    ]
    assert data["expect"] == [{"count": 3, "appended": 1, "appended_any": True}]


def test_dump_leaves_out_null_contexts_but_keeps_null_content() -> None:
    scenario = parse_scenario(
        '{"name": "n", "steps": [{"append": {"role": "assistant", "content": null}}]}'
    )
    data = json.loads(dump_scenario(scenario))
    assert "context" not in data
    assert data["steps"] == [{"label": "", "append": {"role": "assistant", "content": None}}]


def test_unknown_field_error_names_file_and_path() -> None:
    text = '{"name": "x", "steps": [{"append": [], "apend": {}}]}'
    assert _error(text) == "sample_data/x.json: steps[0].apend: unknown field"


def test_unknown_fields_at_every_level() -> None:
    text = json.dumps(
        {
            "name": "x",
            "nmae": "y",
            "config": {"max_mesages": 3},
            "steps": [{"append": []}],
            "expect": [{"apended": 1}],
        }
    )
    # Known fields' problems come first, in field order, then the unknown top-level keys.
    assert _error(text, "s.json") == (
        "s.json: config.max_mesages: unknown field\n"
        "s.json: expect[0].apended: unknown field\n"
        "s.json: nmae: unknown field"
    )


def test_type_errors_are_readable() -> None:
    text = json.dumps(
        {
            "name": "x",
            "config": {"scope": "sesion", "max_messages": -1},
            "steps": [{"append": "hi"}, {"append": [{"role": "user"}, 3]}],
            "expect": [{"count": True, "appended_any": 1}],
        }
    )
    assert _error(text, "s.json").splitlines() == [
        "s.json: config.scope: should be 'global', 'workflow', 'pipeline', 'execution', "
        "'session' or 'user', got \"sesion\"",
        "s.json: config.max_messages: should be greater than or equal to 0, got -1",
        "s.json: steps[0].append: should be a message object or a list of message objects, "
        "got string",
        "s.json: steps[1].append: item [1] should be a message object, got number",
        "s.json: expect[0].count: should be a valid integer, got true",
        "s.json: expect[0].appended_any: should be a valid boolean, got 1",
    ]


def test_missing_fields_and_extra_expectations() -> None:
    assert _error('{"steps": [{}]}', "s.json").splitlines() == [
        "s.json: name: missing required field",
        "s.json: steps[0].append: missing required field",
    ]
    assert _error('{"name": "x", "steps": [], "expect": [{}]}', "s.json") == (
        "s.json: expect has 1 entries but the scenario has 0 step(s); "
        "expect[i] is checked against steps[i]"
    )


def test_not_json_and_not_an_object() -> None:
    assert _error('{"name": "x",\n "steps": [', "s.json") == (
        "s.json: not JSON (Expecting value at line 2, column 12)"
    )
    assert _error("[]", "s.json") == "s.json: a scenario is a JSON object, got list"


def test_error_keeps_problems_without_the_source() -> None:
    with pytest.raises(ScenarioError) as info:
        parse_scenario('{"name": "x", "steps": [], "bogus": 1}', source="s.json")
    assert info.value.source == "s.json"
    assert info.value.problems == ["bogus: unknown field"]
    assert isinstance(info.value, ValueError)


def test_step_context_overrides_key_by_key() -> None:
    scenario = Scenario.model_validate(
        {
            "name": "c",
            "context": {"session_id": "demo", "user_id": "1"},
            "steps": [
                {"append": [], "context": {"user_id": "7", "pipeline_id": "p"}},
                {"append": []},
                {"append": [], "context": {"session_id": None}},
            ],
        }
    )
    first, second, third = scenario.steps
    assert step_context(scenario, first) == {
        "session_id": "demo",
        "user_id": "7",
        "pipeline_id": "p",
    }
    assert step_context(scenario, second) == {"session_id": "demo", "user_id": "1"}
    assert step_context(scenario, third) == {"session_id": None, "user_id": "1"}
    assert scenario.context == {"session_id": "demo", "user_id": "1"}  # not mutated


def test_step_context_without_any_context_is_none() -> None:
    scenario = Scenario.model_validate({"name": "c", "steps": [{"append": []}]})
    assert step_context(scenario, scenario.steps[0]) is None
    only_step = Scenario.model_validate({"name": "c", "steps": [{"append": [], "context": {}}]})
    assert step_context(only_step, only_step.steps[0]) == {}


def test_load_scenario_names_the_path(tmp_path: Path) -> None:
    good = tmp_path / "good.json"
    good.write_text(json.dumps(DESIGN_EXAMPLE), encoding="utf-8")
    assert load_scenario(good).name == "mem-14-full-window"
    bad = tmp_path / "bad.json"
    bad.write_text('{"name": "x", "steps": [], "expect": [{"cuont": 1}]}', encoding="utf-8")
    with pytest.raises(ScenarioError, match=r"bad\.json: expect\[0\]\.cuont: unknown field$"):
        load_scenario(str(bad))


def test_committed_schema_is_up_to_date() -> None:
    committed = (ROOT / "docs" / "scenario.schema.json").read_text(encoding="utf-8")
    assert committed == scenario_schema_json(), (
        "docs/scenario.schema.json is stale: run scripts/gen_scenario_schema.py"
    )


def test_schema_forbids_unknown_fields() -> None:
    schema = json.loads(scenario_schema_json())
    assert schema["additionalProperties"] is False
    for name in ("ScenarioConfig", "ScenarioStep", "Expectation"):
        assert schema["$defs"][name]["additionalProperties"] is False
    assert schema["required"] == ["name", "steps"]


def test_text_steps_append_what_mem16_makes_of_the_text() -> None:
    scenario = parse_scenario(
        json.dumps(
            {
                "name": "t",
                "steps": [
                    {"text": {"text": "hello", "role": "operator"}},
                    {"text": {"text": "  ", "role": "user"}},
                    {"text": {"text": "r", "role": "tool", "tool_call_id": " c1 "}},
                ],
            }
        )
    )
    assert [s.append for s in scenario.steps] == [
        [{"role": "user", "content": "hello"}],
        [],
        [{"role": "tool", "content": "r", "tool_call_id": "c1"}],
    ]
    again = parse_scenario(dump_scenario(scenario))
    assert again == scenario and '"append"' not in dump_scenario(scenario)


def test_a_step_with_text_and_a_different_append_is_an_error() -> None:
    with pytest.raises(ScenarioError, match=r"steps\[0\]: append .* is not what text makes"):
        parse_scenario(
            json.dumps(
                {
                    "name": "t",
                    "steps": [
                        {"text": {"text": "hi"}, "append": {"role": "user", "content": "other"}}
                    ],
                }
            )
        )


def test_context_field_typos_are_named() -> None:
    with pytest.raises(ScenarioError) as info:
        parse_scenario(
            json.dumps(
                {
                    "name": "t",
                    "context": {"sesion_id": "x"},
                    "steps": [{"append": {"role": "user"}}],
                }
            )
        )
    assert "context: unknown context field 'sesion_id'" in str(info.value)
    with pytest.raises(ScenarioError, match=r"steps\[0\]\.context: unknown context field 'userid'"):
        parse_scenario(
            json.dumps(
                {"name": "t", "steps": [{"append": {"role": "user"}, "context": {"userid": 1}}]}
            )
        )


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        (
            '{"name": "t", "x": ' + "1" * 5000 + "}",
            "not JSON (integer too long: more than 4300 digits)",
        ),
        ("[" * 100_000, "not JSON (nested too deeply)"),
        (
            '{"name": "t", "config": {"key": "   "}, "steps": []}',
            'config.key: must not be blank, got "   "',
        ),
    ],
    ids=["huge integer", "deep nesting", "blank key"],
)
def test_unreadable_json_and_blank_key_are_scenario_errors(text: str, problem: str) -> None:
    with pytest.raises(ScenarioError) as info:
        parse_scenario(text, source="x.json")
    assert str(info.value).startswith(f"x.json: {problem}")
