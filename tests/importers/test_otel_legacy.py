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
    parse_conversation,
)
from flowdrop_core.importers import (
    _otel_legacy as otel_legacy,
)
from flowdrop_core.importers._claims import Claim, Miss

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


def _forced(attributes: object) -> ImportedConversation:
    """Read as otel-legacy whatever detection would say."""
    return parse_conversation(json.dumps(attributes), format="otel-legacy", source_name="s.json")


def test_skipped_indexes_idless_calls_orphans_and_content_that_is_not_calls() -> None:
    """A skipped index is no message; a call without an id gets its origin as id and answers
    the first id-less result; a second result with no open call is noted; an assistant
    message with nothing is empty text; content that looks like a call list but is not
    JSON, or holds no OpenAI-shape call, stays text; an unread field is an unknown note."""
    got = _forced(
        {
            "gen_ai.prompt.1.role": "user",
            "gen_ai.prompt.1.content": "hi",
            "gen_ai.prompt.2.role": "assistant",
            "gen_ai.prompt.2.tool_calls.0.name": "f",
            "gen_ai.prompt.2.tool_calls.0.arguments": '{"a": 1}',
            "gen_ai.prompt.3.role": "tool",
            "gen_ai.prompt.3.content": "r",
            "gen_ai.prompt.4.role": "function",
            "gen_ai.prompt.5.role": "ai",
            "gen_ai.prompt.6.role": "human",
            "gen_ai.prompt.6.content": "[{not json",
            "gen_ai.prompt.7.role": "user",
            "gen_ai.prompt.7.content": '[{"x": 1}]',
            "gen_ai.completion.0.role": "model",
            "gen_ai.completion.0.content": "done",
            "gen_ai.completion.0.usage": {"tokens": 3},
        }
    )
    synthetic = "gen_ai.prompt.2.tool_calls.0"
    assert got.messages[:4] == [
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": synthetic, "type": "function", "function": {"name": "f", "arguments": '{"a": 1}'}}]},
        {"role": "tool", "content": "r", "tool_call_id": synthetic},
        {"role": "tool", "content": "", "tool_call_id": None},
    ]  # fmt: skip
    assert got.messages[4:] == [
        {"role": "assistant", "content": ""},
        {"role": "user", "content": "[{not json"},
        {"role": "user", "content": '[{"x": 1}]'},
        {"role": "assistant", "content": "done"},
    ]
    assert got.origins == [f"gen_ai.prompt.{i}" for i in range(1, 8)] + ["gen_ai.completion.0"]
    assert [(n.where, n.what, n.why, n.content, n.unknown) for n in got.notes] == [
        ("gen_ai.prompt.4", "tool result without a call", "no open call to answer", "", False),
        ("gen_ai.completion.0.usage", "field 'usage'", "otel-legacy does not read it",
         '{"tokens": 3}', True),
    ]  # fmt: skip


def test_a_koog_call_list_without_ids_gets_its_origin_as_id() -> None:
    content = json.dumps([{"function": {"name": "g", "arguments": {"q": 1}}}])
    got = _forced(
        {
            "gen_ai.prompt.0.role": "user",
            "gen_ai.prompt.0.content": "go",
            "gen_ai.completion.0.role": "assistant",
            "gen_ai.completion.0.content": content,
        }
    )
    assert got.messages == [
        {"role": "user", "content": "go"},
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "gen_ai.completion.0.content[0]", "type": "function",
             "function": {"name": "g", "arguments": '{"q": 1}'}}]},
    ]  # fmt: skip


@pytest.mark.parametrize(
    ("document", "problem"),
    [
        ({"gen_ai.prompt.0.1.role": "user"},
         "gen_ai.prompt.0: expected a message's attributes, got list"),
        ({"gen_ai.prompt.0.role": "user", "gen_ai.prompt.0.content": 5},
         "gen_ai.prompt.0.content: expected a string, got number"),
        ({"gen_ai.prompt.0.role": "assistant", "gen_ai.prompt.0.tool_calls.0": "x"},
         "gen_ai.prompt.0.tool_calls.0: expected a tool call's attributes"),
        ({"gen_ai.prompt": "[]", "llm.model": "m"},
         "no span carries gen_ai.prompt.N or gen_ai.completion.N attributes"),
        ([{"attributes": {"gen_ai.prompt.0.role": "robot"}}],
         "[0].attributes['gen_ai.prompt.0'].role: unknown role 'robot'"),
        ("text", "expected span attributes, a span or spans, got string"),
    ],
)  # fmt: skip
def test_bad_attributes_are_one_located_error(document: object, problem: str) -> None:
    with pytest.raises(ConversationFormatError) as info:
        _forced(document)
    assert str(info.value) == f"s.json is not valid otel-legacy: {problem}"


def test_the_signature_of_a_document_that_is_no_span() -> None:
    verdict = otel_legacy.claims(["text"])
    assert isinstance(verdict, Miss)
    assert str(verdict) == "expected span attributes, a span or spans, got list"


def test_the_miss_scores_how_many_spans_it_looked_at() -> None:
    """Detection ranks near formats by how far each got: past every span but the last."""
    spans = [{"attributes": {"llm.model": "m"}}, {"attributes": {"llm.model": "n"}}]
    assert otel_legacy.claims(spans) == Miss(
        "", "no gen_ai.prompt.N.* or gen_ai.completion.N.* attribute", 1
    )


def test_an_id_less_call_repeated_by_a_later_span_is_one_message() -> None:
    """Each span gives an id-less call its own origin as id; the later span repeating the
    same call is the same message, so the earlier span leaves no note."""
    first = {
        "gen_ai.prompt.0.role": "user",
        "gen_ai.prompt.0.content": "go",
        "gen_ai.completion.0.role": "assistant",
        "gen_ai.completion.0.tool_calls.0.name": "f",
    }
    second = {
        "gen_ai.prompt.0.role": "user",
        "gen_ai.prompt.0.content": "go",
        "gen_ai.prompt.1.role": "assistant",
        "gen_ai.prompt.1.tool_calls.0.name": "f",
        "gen_ai.prompt.2.role": "tool",
        "gen_ai.prompt.2.content": "done",
        "gen_ai.completion.0.role": "assistant",
        "gen_ai.completion.0.content": "ok",
    }
    got = _forced([{"attributes": first}, {"attributes": second}])
    call_id = "[1].attributes['gen_ai.prompt.1'].tool_calls.0"
    assert got.messages == [
        {"role": "user", "content": "go"},
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": call_id, "type": "function", "function": {"name": "f", "arguments": "{}"}}]},
        {"role": "tool", "content": "done", "tool_call_id": call_id},
        {"role": "assistant", "content": "ok"},
    ]  # fmt: skip
    assert got.notes == []
