"""The legacy OpenTelemetry / OpenLLMetry indexed attributes: real public examples imported to their exact messages.

The files are in ``sample_data/fresh/`` (sources in its ``SOURCES.md``).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from flowdrop_core.importers import (
    ConversationFormatError,
    ImportedConversation,
    load_conversation,
    otel_legacy,
    parse_conversation,
)
from flowdrop_core.importers.claims import Claim, Miss

FRESH = Path(__file__).resolve().parents[2] / "sample_data" / "fresh"


def imported(name: str) -> ImportedConversation:
    """A corpus file, its format detected."""
    return load_conversation(FRESH / name, name=name)


def test_otel_legacy_koog_first_call() -> None:
    got = imported("otel_legacy_koog_first_call.json")
    assert got.format == "otel-legacy"

    assert got.messages == [
        {"role": "system", "content": "You are a nice and polite assistant."},
        {
            "role": "user",
            "content": "Greet and say goodbye to the user in the same message. Use provided tools "
            "to generate a proper greeting. The user name is Bob.",
        },
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "call_n2HaWg9KFP0BZDqXv6G4b3nJ",
                    "type": "function",
                    "function": {"name": "HelloTool", "arguments": '{"name": "Bob"}'},
                }
            ],
        },
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "call_dOeEHJDI0liHrCdFWTpkTsuO",
                    "type": "function",
                    "function": {"name": "ByeTool", "arguments": '{"name": "Bob"}'},
                }
            ],
        },
    ]

    assert got.origins == [
        "gen_ai.prompt.0",
        "gen_ai.prompt.1",
        "gen_ai.completion.0",
        "gen_ai.completion.1",
    ]

    assert [(n.where, n.what) for n in got.notes] == []


def test_otel_legacy_koog_trace() -> None:
    got = imported("otel_legacy_koog_trace.json")
    assert got.format == "otel-legacy"

    assert got.messages == [
        {"role": "system", "content": "You are a nice and polite assistant."},
        {
            "role": "user",
            "content": "Greet and say goodbye to the user in the same message. Use provided tools "
            "to generate a proper greeting. The user name is Bob.",
        },
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "call_n2HaWg9KFP0BZDqXv6G4b3nJ",
                    "type": "function",
                    "function": {"name": "HelloTool", "arguments": '{"name": "Bob"}'},
                }
            ],
        },
        {
            "role": "tool",
            "content": "Hello my darling Bob!",
            "tool_call_id": "call_n2HaWg9KFP0BZDqXv6G4b3nJ",
        },
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "call_dOeEHJDI0liHrCdFWTpkTsuO",
                    "type": "function",
                    "function": {"name": "ByeTool", "arguments": '{"name": "Bob"}'},
                }
            ],
        },
        {
            "role": "tool",
            "content": "Bye my dear Bob!",
            "tool_call_id": "call_dOeEHJDI0liHrCdFWTpkTsuO",
        },
        {"role": "assistant", "content": "Hello my darling Bob! And, bye my dear Bob!"},
    ]

    assert got.origins == [
        "[1].attributes['gen_ai.prompt.0']",
        "[1].attributes['gen_ai.prompt.1']",
        "[1].attributes['gen_ai.prompt.2']",
        "[1].attributes['gen_ai.prompt.3']",
        "[1].attributes['gen_ai.prompt.4']",
        "[1].attributes['gen_ai.prompt.5']",
        "[1].attributes['gen_ai.completion.0']",
    ]

    assert [(n.where, n.what) for n in got.notes] == []


def test_openllmetry_tool_call_attributes_and_results_by_id() -> None:
    attributes = {
        "gen_ai.prompt.0.role": "user",
        "gen_ai.prompt.0.content": "weather?",
        "gen_ai.prompt.1.role": "assistant",
        "gen_ai.prompt.1.tool_calls.0.name": "get_weather",
        "gen_ai.prompt.1.tool_calls.0.arguments": '{"city": "Oslo"}',
        "gen_ai.prompt.1.tool_calls.0.id": "call_1",
        "gen_ai.prompt.2.role": "tool",
        "gen_ai.prompt.2.content": "rain",
        "gen_ai.prompt.2.tool_call_id": "call_1",
        "gen_ai.completion.0.role": "assistant",
        "gen_ai.completion.0.content": "It rains.",
        "gen_ai.completion.0.finish_reason": "stop",
        "gen_ai.completion.0.refusal": "no",
    }
    got = parse_conversation(json.dumps({"attributes": attributes}), source_name="s.json")
    assert got.format == "otel-legacy"
    assert got.messages == [
        {"role": "user", "content": "weather?"},
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "call_1", "type": "function",
             "function": {"name": "get_weather", "arguments": '{"city": "Oslo"}'}}]},
        {"role": "tool", "content": "rain", "tool_call_id": "call_1"},
        {"role": "assistant", "content": "It rains."},
    ]  # fmt: skip
    assert [(n.where, n.unknown) for n in got.notes] == [("gen_ai.completion.0.refusal", True)]


def test_a_bad_role_is_located() -> None:
    with pytest.raises(ConversationFormatError) as info:
        parse_conversation(
            json.dumps({"gen_ai.prompt.0.role": "robot"}),
            format="otel-legacy",
            source_name="s.json",
        )
    assert (
        str(info.value)
        == "s.json is not valid otel-legacy: gen_ai.prompt.0.role: unknown role 'robot'"
    )


def test_the_signature() -> None:
    assert isinstance(otel_legacy.claims({"gen_ai.completion.0.role": "assistant"}), Claim)
    assert isinstance(otel_legacy.claims({"gen_ai.prompt": "[]"}), Miss)  # the whole-value form
    assert isinstance(otel_legacy.claims({"gen_ai.input.messages": "[]"}), Miss)
