"""The pydantic-ai message history (``ModelMessagesTypeAdapter`` JSON): real public examples imported to their exact messages.

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
    _pydantic_ai as pydantic_ai,
)
from flowdrop_core.importers._claims import Claim, Miss

FRESH = Path(__file__).resolve().parents[2] / "sample_data" / "fresh"


def imported(name: str) -> ImportedConversation:
    """A corpus file, its format detected."""
    return load_conversation(FRESH / name, name=name)


def test_pydantic_ai_history_tool_return() -> None:
    got = imported("pydantic_ai_history_tool_return.json")
    assert got.format == "pydantic-ai"

    assert got.messages == [
        {"role": "user", "content": "Hello"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "call_1",
                    "type": "function",
                    "function": {"name": "my_tool", "arguments": "{}"},
                }
            ],
        },
        {
            "role": "tool",
            "content": '{"items": [{"name": "Example", "url": "/some/path/12345"}]}',
            "tool_call_id": "call_1",
        },
    ]

    assert got.origins == ["[0].parts[0]", "[1]", "[2].parts[0]"]

    assert [(n.where, n.what) for n in got.notes] == []


def test_pydantic_ai_history_capability_load() -> None:
    got = imported("pydantic_ai_history_capability_load.json")
    assert got.format == "pydantic-ai"

    assert got.messages == [
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "c1",
                    "type": "function",
                    "function": {"name": "load_capability", "arguments": '{"id": "refunds"}'},
                },
                {
                    "id": "c2",
                    "type": "function",
                    "function": {"name": "load_capability", "arguments": '{"foo": "bar"}'},
                },
            ],
        },
        {
            "role": "tool",
            "content": '{"instructions": "Confirm the order id."}',
            "tool_call_id": "c1",
        },
    ]

    assert got.origins == ["[0]", "[1].parts[0]"]

    assert [(n.where, n.what) for n in got.notes] == []


def _read(document: object) -> ImportedConversation:
    return parse_conversation(json.dumps(document), source_name="h.json")


def test_instructions_retries_thinking_and_builtin_tools() -> None:
    """Instructions become a system message when they change; a tool retry is an error
    result; thinking is a note; a provider's built-in tool is a visible marker."""
    got = _read(
        [
            {"kind": "request", "instructions": "Be brief.", "parts": [
                {"part_kind": "user-prompt", "content": ["Look at", {"kind": "image-url", "url": "http://x/a.png"}]}]},
            {"kind": "response", "parts": [
                {"part_kind": "thinking", "content": "hmm"},
                {"part_kind": "builtin-tool-call", "tool_name": "web_search", "tool_call_id": "b1", "args": {"q": "a"}},
                {"part_kind": "tool-call", "tool_name": "f", "tool_call_id": "c1", "args": "{\"x\": 1}"}]},
            {"kind": "request", "instructions": "Be brief.", "parts": [
                {"part_kind": "retry-prompt", "tool_name": "f", "tool_call_id": "c1", "content": "bad x"}]},
            {"kind": "request", "parts": [{"part_kind": "retry-prompt", "content": "answer in JSON"}]},
        ]
    )  # fmt: skip
    assert got.format == "pydantic-ai"
    assert got.messages == [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "Look at\n[image-url http://x/a.png]"},
        {
            "role": "assistant",
            "content": '[builtin-tool-call web_search b1] {"q": "a"}',
            "tool_calls": [
                {"id": "c1", "type": "function", "function": {"name": "f", "arguments": '{"x": 1}'}}
            ],
        },
        {"role": "tool", "content": "[error] bad x", "tool_call_id": "c1"},
        {"role": "user", "content": "answer in JSON"},
    ]
    assert [(n.where, n.what, n.content) for n in got.notes] == [
        ("[1].parts[0]", "thinking part", "hmm")
    ]


def test_an_unknown_part_kind_is_kept_and_noted_as_unknown() -> None:
    got = _read([{"kind": "response", "parts": [{"part_kind": "video", "content": "clip"}]}])
    assert got.messages == [{"role": "assistant", "content": "clip"}]
    assert [(n.where, n.unknown) for n in got.notes] == [("[0].parts[0]", True)]


@pytest.mark.parametrize(
    ("document", "problem"),
    [
        ([{"kind": "response", "parts": [{"part_kind": "tool-call", "tool_name": "f"}]}],
         "[0].parts[0]: tool-call part without 'tool_call_id'"),
        ([{"kind": "request", "parts": [{"part_kind": "text", "content": "x"}]}],
         "[0].parts[0]: a 'text' part belongs to a response, not a request"),
        ([{"kind": "request", "parts": [{"part_kind": "user-prompt", "content": 3}]}],
         "[0].parts[0].content: expected a string or a list, got number"),
    ],
)  # fmt: skip
def test_bad_history_is_one_located_error(document: object, problem: str) -> None:
    with pytest.raises(ConversationFormatError) as info:
        parse_conversation(json.dumps(document), format="pydantic-ai", source_name="h.json")
    assert str(info.value) == f"h.json is not valid pydantic-ai: {problem}"


def test_the_signature_needs_kind_and_part_kind() -> None:
    assert isinstance(
        pydantic_ai.claims([{"kind": "request", "parts": [{"part_kind": "user-prompt"}]}]), Claim
    )
    assert isinstance(pydantic_ai.claims([{"kind": "request", "parts": [{"text": "x"}]}]), Miss)
    assert isinstance(pydantic_ai.claims([{"role": "user", "parts": [{"part_kind": "x"}]}]), Miss)
    assert isinstance(pydantic_ai.claims([]), Miss)


def _forced(document: object) -> ImportedConversation:
    """Read as pydantic-ai whatever detection would say."""
    return parse_conversation(json.dumps(document), format="pydantic-ai", source_name="h.json")


def test_one_request_object_with_an_unknown_part_and_an_unread_field() -> None:
    """A single message object is read with origins from its top; an unknown request part
    is an unknown note and no message; a field pydantic-ai does not have is noted."""
    got = _forced(
        {"kind": "request", "run_id": "r1", "extra": {"a": 1}, "parts": [
            {"part_kind": "system-prompt", "content": "sys"},
            {"part_kind": "user-prompt", "content": "hi"},
            {"part_kind": "audio-prompt", "content": "noise"}]}
    )  # fmt: skip
    assert got.messages == [
        {"role": "system", "content": "sys"},
        {"role": "user", "content": "hi"},
    ]
    assert got.origins == ["parts[0]", "parts[1]"]
    assert [(n.where, n.what, n.why, n.content, n.unknown) for n in got.notes] == [
        ("extra", "field 'extra'", "pydantic-ai does not read it", '{"a": 1}', True),
        ("parts[2]", "unknown part kind 'audio-prompt'", "pydantic-ai has no such part kind",
         '{"part_kind": "audio-prompt", "content": "noise"}', True),
    ]  # fmt: skip


def test_files_builtin_returns_and_an_empty_response() -> None:
    """A file part is a marker of its media type, a built-in tool's return a marker with its
    content, and a response with no parts is an empty assistant text (its origin the message)."""
    got = _forced(
        {"messages": [
            {"kind": "request", "parts": [{"part_kind": "user-prompt", "content": "draw"}]},
            {"kind": "response", "parts": [
                {"part_kind": "file", "content": {"media_type": "image/png", "data": "..."}},
                {"part_kind": "file", "content": "raw"},
                {"part_kind": "builtin-tool-return", "tool_name": "code", "tool_call_id": "b2",
                 "content": {"out": 1}}]},
            {"kind": "response", "parts": []}]}
    )  # fmt: skip
    assert got.messages == [
        {"role": "user", "content": "draw"},
        {"role": "assistant", "content": '[file image/png]\n[file]\n[builtin-tool-return code b2] {"out": 1}'},
        {"role": "assistant", "content": ""},
    ]  # fmt: skip
    assert got.origins == ["messages[0].parts[0]", "messages[1]", "messages[2]"]
    assert got.notes == []


@pytest.mark.parametrize(
    ("document", "problem"),
    [
        ({"kind": "response", "parts": "text"}, "parts: missing 'parts' list"),
        ({"kind": "reply", "parts": []}, "expected a list of pydantic-ai messages, got object"),
        ([{"kind": "response", "parts": "text"}], "[0].parts: missing 'parts' list"),
        ({"messages": [{"kind": "request"}]}, "messages[0].parts: missing 'parts' list"),
        ([{"kind": "request", "parts": []}, "x"], "[1]: expected a message object, got string"),
        ([{"kind": "ask", "parts": []}], "[0]: 'kind' must be 'request' or 'response', got 'ask'"),
        ([{"kind": "request", "parts": [{"content": "x"}]}],
         "[0].parts[0]: part without a string 'part_kind'"),
        ([{"kind": "response", "parts": ["x"]}], "[0].parts[0]: part without a string 'part_kind'"),
        ([{"kind": "response", "parts": [{"part_kind": "tool-call", "tool_call_id": "c"}]}],
         "[0].parts[0]: tool-call part without a string 'tool_name'"),
        ([{"kind": "response", "parts": [{"part_kind": "user-prompt", "content": "x"}]}],
         "[0].parts[0]: a 'user-prompt' part belongs to a request, not a response"),
        ([{"kind": "response", "parts": [{"part_kind": "text", "content": ["x"]}]}],
         "[0].parts[0].content: expected a string, got list"),
        ([{"kind": "request", "parts": [{"part_kind": "user-prompt", "content": ["a", 3]}]}],
         "[0].parts[0].content[1]: expected text or a media object, got 3"),
    ],
)  # fmt: skip
def test_more_bad_history_is_one_located_error(document: object, problem: str) -> None:
    with pytest.raises(ConversationFormatError) as info:
        _forced(document)
    assert str(info.value) == f"h.json is not valid pydantic-ai: {problem}"


def test_the_signature_of_an_object_that_is_no_message() -> None:
    verdict = pydantic_ai.claims({"kind": "reply", "parts": []})
    assert isinstance(verdict, Miss)
    assert str(verdict) == "expected a list of {'kind', 'parts'} messages"
