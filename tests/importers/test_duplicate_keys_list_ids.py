"""Duplicate JSON keys are a located error (never "the last one wins" silently), and a
LangChain tool-call id that is a list is a located error, not a TypeError."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from flowdrop_core.cli import main
from flowdrop_core.importers import ConversationFormatError, parse_conversation
from flowdrop_core.scenario import JSONProblem, parse_json


def test_a_duplicate_key_is_named_with_its_path() -> None:
    text = '{"steps": [{"append": {"role": "user", "content": "a", "role": "tool"}}]}'
    with pytest.raises(JSONProblem) as err:
        parse_json(text)
    assert "duplicate key 'role' at steps[0].append.role" in str(err.value)


def test_distinct_keys_parse_as_before() -> None:
    assert parse_json('{"a": {"b": 1}, "c": [{"b": 2}]}') == {"a": {"b": 1}, "c": [{"b": 2}]}


def test_the_cli_refuses_a_recording_with_a_duplicate_key(tmp_path: Path, capsys) -> None:
    path = tmp_path / "chat.json"
    path.write_text('[{"role": "user", "content": "hi", "content": "bye"}]', encoding="utf-8")
    assert main(["replay", str(path)]) == 2
    assert "duplicate key 'content' at [0].content" in capsys.readouterr().err


def test_a_jsonl_line_with_a_duplicate_key_names_the_line() -> None:
    text = (
        '{"role": "user", "content": "hi"}\n{"role": "user", "role": "assistant", "content": "x"}\n'
    )
    with pytest.raises(ConversationFormatError, match="duplicate key 'role'"):
        parse_conversation(text, format="jsonl", source_name="x.jsonl")


@pytest.mark.parametrize(
    ("doc", "where"),
    [
        (
            [
                {
                    "type": "ai",
                    "data": {"content": "", "tool_calls": [{"id": ["a"], "name": "f", "args": {}}]},
                }
            ],
            "[0].data.tool_calls[0].id: a tool call id is text, got list",
        ),
        (
            [{"type": "tool", "data": {"content": "ok", "tool_call_id": ["a", "b"]}}],
            "[0].data.tool_call_id: a tool call id is text, got list",
        ),
    ],
)
def test_a_langchain_list_id_is_located(doc: list[object], where: str) -> None:
    with pytest.raises(ConversationFormatError) as err:
        parse_conversation(json.dumps(doc), format="langchain", source_name="x.json")
    assert where in str(err.value)
