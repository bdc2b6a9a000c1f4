"""The Vercel AI SDK UIMessages and model messages: real public examples imported to their exact messages.

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
    _vercel_ai as vercel_ai,
)
from flowdrop_core.importers._claims import Claim, Miss

FRESH = Path(__file__).resolve().parents[2] / "sample_data" / "fresh"


def imported(name: str) -> ImportedConversation:
    """A corpus file, its format detected."""
    return load_conversation(FRESH / name, name=name)


def test_vercel_ui_messages_1602() -> None:
    got = imported("vercel_ui_messages_1602.json")
    assert got.format == "vercel-ai"

    assert got.messages == [
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "call-1",
                    "type": "function",
                    "function": {"name": "screenshot", "arguments": '{"value": "value-1"}'},
                }
            ],
        },
        {"role": "tool", "content": "result-1", "tool_call_id": "call-1"},
        {"role": "user", "content": "Thanks!"},
    ]

    assert got.origins == ["[0].parts[0]", "[0].parts[1]", "[1]"]

    assert [(n.where, n.what) for n in got.notes] == []


def test_vercel_ui_messages_1142() -> None:
    got = imported("vercel_ui_messages_1142.json")
    assert got.format == "vercel-ai"

    assert got.messages == [
        {
            "role": "assistant",
            "content": "response",
            "tool_calls": [
                {
                    "id": "call-1",
                    "type": "function",
                    "function": {"name": "screenshot", "arguments": '{"value": "value-1"}'},
                }
            ],
        },
        {"role": "tool", "content": "result-1", "tool_call_id": "call-1"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "call-2",
                    "type": "function",
                    "function": {"name": "screenshot", "arguments": '{"value": "value-2"}'},
                },
                {
                    "id": "call-3",
                    "type": "function",
                    "function": {"name": "screenshot", "arguments": '{"value": "value-3"}'},
                },
            ],
        },
        {"role": "tool", "content": "result-2", "tool_call_id": "call-2"},
        {"role": "tool", "content": "result-3", "tool_call_id": "call-3"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "call-4",
                    "type": "function",
                    "function": {"name": "screenshot", "arguments": '{"value": "value-4"}'},
                }
            ],
        },
        {"role": "tool", "content": "result-4", "tool_call_id": "call-4"},
    ]

    assert got.origins == [
        "[0].parts[0]",
        "[0].parts[2]",
        "[0].parts[3]",
        "[0].parts[4]",
        "[0].parts[5]",
        "[0].parts[6]",
        "[0].parts[7]",
    ]

    assert [(n.where, n.what) for n in got.notes] == []


def test_vercel_ui_messages_457() -> None:
    got = imported("vercel_ui_messages_457.json")
    assert got.format == "vercel-ai"

    assert got.messages == [{"role": "assistant", "content": "Hello, human!"}]

    assert got.origins == ["[0]"]

    assert [(n.where, n.what) for n in got.notes] == [
        ("[0].parts[0]", "reasoning part"),
        ("[0].parts[1]", "reasoning part"),
    ]


def test_vercel_model_messages_667() -> None:
    got = imported("vercel_model_messages_667.json")
    assert got.format == "vercel-ai"

    assert got.messages == [
        {
            "role": "assistant",
            "content": "Let me calculate that for you.",
            "tool_calls": [
                {
                    "id": "call1",
                    "type": "function",
                    "function": {
                        "name": "calculator",
                        "arguments": '{"numbers": [1, 2], "operation": "add"}',
                    },
                }
            ],
        },
        {"role": "tool", "content": "3", "tool_call_id": "call1"},
    ]

    assert got.origins == ["[0]", "[1].content[0]"]

    assert [(n.where, n.what) for n in got.notes] == []


def test_vercel_model_messages_1627() -> None:
    got = imported("vercel_model_messages_1627.json")
    assert got.format == "vercel-ai"

    assert got.messages == [
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "call-1",
                    "type": "function",
                    "function": {"name": "screenshot", "arguments": '{"value": "value-1"}'},
                }
            ],
        },
        {"role": "tool", "content": "result-1", "tool_call_id": "call-1"},
        {"role": "user", "content": "Thanks!"},
    ]

    assert got.origins == ["[0]", "[1].content[0]", "[2]"]

    assert [(n.where, n.what) for n in got.notes] == []


def _read(document: object) -> ImportedConversation:
    return parse_conversation(json.dumps(document), source_name="ui.json")


def test_tool_states_provider_tools_files_and_data_parts() -> None:
    """An errored call is an error result, a denied one too; a call still waiting has no
    result; a provider-run tool is a marker; data parts are notes; a request body works."""
    got = _read(
        {"id": "chat1", "trigger": "submit-message", "messages": [
            {"id": "u1", "role": "user", "parts": [
                {"type": "text", "text": "go"},
                {"type": "file", "mediaType": "image/png", "url": "data:...", "filename": "a.png"}]},
            {"id": "a1", "role": "assistant", "parts": [
                {"type": "tool-search", "toolCallId": "c1", "state": "output-error",
                 "input": {"q": "x"}, "errorText": "boom"},
                {"type": "tool-rm", "toolCallId": "c2", "state": "output-denied",
                 "input": {}, "approval": {"id": "p", "approved": False, "reason": "no"}},
                {"type": "tool-wait", "toolCallId": "c3", "state": "input-available", "input": {}},
                {"type": "tool-web", "toolCallId": "w1", "state": "output-available",
                 "providerExecuted": True, "input": {"q": "y"}, "output": {"hits": 1}},
                {"type": "data-weather", "data": {"t": 20}}]},
        ]}
    )  # fmt: skip
    assert got.format == "vercel-ai"
    assert got.messages == [
        {"role": "user", "content": "go\n[file a.png]"},
        {
            "role": "assistant",
            "content": '[provider tool web w1] {"q": "y"}\n[provider tool result web w1] {"hits": 1}',
            "tool_calls": [
                {"id": "c1", "type": "function", "function": {"name": "search", "arguments": '{"q": "x"}'}},
                {"id": "c2", "type": "function", "function": {"name": "rm", "arguments": "{}"}},
                {"id": "c3", "type": "function", "function": {"name": "wait", "arguments": "{}"}},
            ],
        },
        {"role": "tool", "content": "[error] boom", "tool_call_id": "c1"},
        {"role": "tool", "content": "[error] denied: no", "tool_call_id": "c2"},
    ]  # fmt: skip
    assert got.origins[0] == "messages[0]"
    assert [(n.where, n.what) for n in got.notes] == [("messages[1].parts[4]", "data-weather part")]


def test_a_model_message_error_result_and_an_unknown_part() -> None:
    got = _read(
        [
            {"role": "assistant", "content": [
                {"type": "tool-call", "toolCallId": "c1", "toolName": "f", "input": {}},
                {"type": "source", "text": "s"}]},
            {"role": "tool", "content": [
                {"type": "tool-result", "toolCallId": "c1", "toolName": "f",
                 "output": {"type": "error-text", "value": "failed"}}]},
        ]
    )  # fmt: skip
    assert got.messages == [
        {"role": "assistant", "content": "s", "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{}"}}]},
        {"role": "tool", "content": "[error] failed", "tool_call_id": "c1"},
    ]  # fmt: skip
    assert [(n.where, n.unknown) for n in got.notes] == [("[0].content[1]", True)]


@pytest.mark.parametrize(
    ("document", "problem"),
    [
        ([{"role": "assistant", "parts": [{"type": "tool-f", "state": "input-available"}]}],
         "[0].parts[0]: tool-f part without a string 'toolCallId'"),
        ([{"role": "user", "parts": [{"type": "tool-f", "toolCallId": "c"}]}],
         "[0].parts[0]: a tool part on a user message"),
        ([{"role": "robot", "parts": [{"type": "text", "text": "x"}]}],
         "[0].role: unknown role 'robot' (expected system or user or assistant)"),
    ],
)  # fmt: skip
def test_bad_messages_are_one_located_error(document: object, problem: str) -> None:
    with pytest.raises(ConversationFormatError) as info:
        parse_conversation(json.dumps(document), format="vercel-ai", source_name="ui.json")
    assert str(info.value) == f"ui.json is not valid vercel-ai: {problem}"


def test_the_signature() -> None:
    assert isinstance(
        vercel_ai.claims([{"role": "user", "parts": [{"type": "text", "text": "x"}]}]), Claim
    )
    assert isinstance(
        vercel_ai.claims([{"role": "assistant", "content": [{"type": "tool-call"}]}]), Claim
    )
    assert isinstance(vercel_ai.claims([{"role": "user", "content": "x"}]), Miss)
    assert isinstance(
        vercel_ai.claims([{"role": "user", "parts": [{"text": "x"}]}]), Miss
    )  # Gemini


def _forced(document: object) -> ImportedConversation:
    """Read as vercel-ai whatever detection would say."""
    return parse_conversation(json.dumps(document), format="vercel-ai", source_name="ui.json")


def test_ui_sources_unknown_parts_legacy_content_and_pending_states() -> None:
    """Sources are markers, an unknown part keeps its text (or its type) with an unknown
    note, AI SDK 4's ``content`` copy is noted when it differs from the parts, a dynamic
    tool takes its ``toolName``, a provider tool without output is one marker, and a call
    in an unexpected state is noted with no result."""
    got = _forced(
        [
            {"role": "user", "content": "old text", "parts": [
                {"type": "text", "text": "look"},
                {"type": "source-url", "url": "https://x.test/a"},
                {"type": "source-document", "title": "Doc"},
                {"type": "widget", "text": "w"},
                {"type": "gadget"}]},
            {"role": "assistant", "content": "same", "parts": [
                {"type": "text", "text": "same"},
                {"type": "dynamic-tool", "toolName": "dyn", "toolCallId": "d1",
                 "state": "output-available", "input": {"a": 1}, "output": "ok"},
                {"type": "tool-web", "toolCallId": "w1", "providerExecuted": True,
                 "input": {"q": "z"}},
                {"type": "tool-ask", "toolCallId": "k1", "state": "approval-requested",
                 "input": {}}]},
        ]
    )  # fmt: skip
    assert got.messages == [
        {"role": "user", "content": "look\n[source-url https://x.test/a]\n[source-document Doc]\nw\n[gadget]"},
        {
            "role": "assistant",
            "content": 'same\n[provider tool web w1] {"q": "z"}',
            "tool_calls": [
                {"id": "d1", "type": "function", "function": {"name": "dyn", "arguments": '{"a": 1}'}},
                {"id": "k1", "type": "function", "function": {"name": "ask", "arguments": "{}"}},
            ],
        },
        {"role": "tool", "content": "ok", "tool_call_id": "d1"},
    ]  # fmt: skip
    assert got.origins == ["[0]", "[1]", "[1].parts[1]"]
    assert [(n.where, n.what, n.why, n.content, n.unknown) for n in got.notes] == [
        ("[0].parts[3]", "unknown part type 'widget'", "vercel-ai has no such part type",
         '{"type": "widget", "text": "w"}', True),
        ("[0].parts[4]", "unknown part type 'gadget'", "vercel-ai has no such part type",
         '{"type": "gadget"}', True),
        ("[0].content", "field 'content'", "the parts are read instead", "old text", False),
        ("[1].parts[3]", "tool part in state 'approval-requested'", "the call has no result yet",
         '{"type": "tool-ask", "toolCallId": "k1", "state": "approval-requested", "input": {}}',
         False),
    ]  # fmt: skip


def test_model_messages_string_content_reasoning_files_and_legacy_results() -> None:
    """A string content is the message; reasoning is a note; images and files are markers;
    a ``tool-result`` without a typed ``output`` takes ``result`` and ``isError``."""
    got = _forced(
        [
            {"role": "system", "content": "be brief"},
            {"role": "user", "content": [
                {"type": "text", "text": "see"},
                {"type": "image", "mediaType": "image/png", "image": "..."},
                {"type": "file", "mimeType": "application/pdf", "data": "..."}]},
            {"role": "assistant", "content": [
                {"type": "reasoning", "text": "hmm"},
                {"type": "tool-call", "toolCallId": "c1", "toolName": "f", "args": {"x": 1}},
                {"type": "tool-call", "toolCallId": "c2", "toolName": "g"}]},
            {"role": "tool", "content": [
                {"type": "tool-result", "toolCallId": "c1", "result": {"y": 2}},
                {"type": "tool-result", "toolCallId": "c2", "result": "bad", "isError": True}]},
        ]
    )  # fmt: skip
    assert got.messages == [
        {"role": "system", "content": "be brief"},
        {"role": "user", "content": "see\n[image image/png]\n[file application/pdf]"},
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "f", "arguments": '{"x": 1}'}},
            {"id": "c2", "type": "function", "function": {"name": "g", "arguments": "{}"}}]},
        {"role": "tool", "content": '{"y": 2}', "tool_call_id": "c1"},
        {"role": "tool", "content": "[error] bad", "tool_call_id": "c2"},
    ]  # fmt: skip
    assert got.origins == ["[0]", "[1]", "[2]", "[3].content[0]", "[3].content[1]"]
    assert [(n.where, n.what, n.why, n.content) for n in got.notes] == [
        ("[2].content[0]", "reasoning part", "model reasoning is not a conversation message",
         '{"type": "reasoning", "text": "hmm"}'),
    ]  # fmt: skip


@pytest.mark.parametrize(
    ("document", "problem"),
    [
        ([{"role": "user", "content": "x"}],
         "neither UIMessages (parts with AI SDK types) nor model messages "
         "(content with tool-call / tool-result parts)"),
        ({"messages": [{"role": "user", "content": "x"}]},
         "messages: neither UIMessages (parts with AI SDK types) nor model messages "
         "(content with tool-call / tool-result parts)"),
        # A message that is not an object makes the list neither kind: one error for the list.
        ([{"role": "user", "parts": [{"type": "text", "text": "x"}]}, "stray"],
         "neither UIMessages (parts with AI SDK types) nor model messages "
         "(content with tool-call / tool-result parts)"),
        ([{"role": "assistant", "content": [{"type": "tool-call"}]}, 7],
         "neither UIMessages (parts with AI SDK types) nor model messages "
         "(content with tool-call / tool-result parts)"),
        ({"messages": []}, "expected a list of AI SDK messages, got object"),
        ([{"role": "user", "parts": [{"type": "text", "text": "x"}, "loose"]}],
         "[0].parts[1]: part without a string 'type'"),
        ([{"role": "user", "parts": [{"type": "text"}]}],
         "[0].parts[0]: text part without a string 'text'"),
        ([{"role": "assistant", "parts": [{"type": "dynamic-tool", "toolCallId": "c"}]}],
         "[0].parts[0]: dynamic-tool part without a string 'toolName'"),
        ([{"role": "assistant", "content": [{"type": "tool-call"}]},
          {"role": "user", "content": {"text": "x"}}],
         "[1].content: expected a string or parts, got object"),
        ([{"role": "robot", "content": [{"type": "tool-call"}]}],
         "[0].role: unknown role 'robot' (expected system or user or assistant or tool)"),
    ],
)  # fmt: skip
def test_more_bad_messages_are_one_located_error(document: object, problem: str) -> None:
    with pytest.raises(ConversationFormatError) as info:
        _forced(document)
    assert str(info.value) == f"ui.json is not valid vercel-ai: {problem}"


def test_a_tool_part_with_an_output_but_no_state_has_its_result() -> None:
    """An ``output`` is the call's result whatever the state says (none here); a call marked
    ``output-available`` whose output is absent has a null result."""
    got = _forced(
        [{"role": "assistant", "parts": [
            {"type": "tool-f", "toolCallId": "c1", "input": {}, "output": {"n": 1}},
            {"type": "tool-g", "toolCallId": "c2", "input": {}, "state": "output-available"}]}]
    )  # fmt: skip
    assert got.messages == [
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{}"}},
            {"id": "c2", "type": "function", "function": {"name": "g", "arguments": "{}"}}]},
        {"role": "tool", "content": '{"n": 1}', "tool_call_id": "c1"},
        {"role": "tool", "content": "null", "tool_call_id": "c2"},
    ]  # fmt: skip
    assert got.notes == []
