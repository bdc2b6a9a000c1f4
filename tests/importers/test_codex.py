"""The Codex CLI rollouts: real public examples imported to their exact messages.

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
    _codex as codex,
)
from flowdrop_core.importers._claims import Claim, Miss, lines_of

FRESH = Path(__file__).resolve().parents[2] / "sample_data" / "fresh"


def imported(name: str) -> ImportedConversation:
    """A corpus file, its format detected."""
    return load_conversation(FRESH / name, name=name)


def test_codex_golden_session() -> None:
    got = imported("codex_golden_session.jsonl")
    assert got.format == "codex"

    assert got.messages == [
        {"role": "user", "content": "List the files in the current directory"},
        {"role": "assistant", "content": "I'll list the files for you."},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "call_golden_001",
                    "type": "function",
                    "function": {"name": "shell", "arguments": '{"command": "ls -la"}'},
                }
            ],
        },
        {
            "role": "tool",
            "content": "total 24\n"
            "drwxr-xr-x 3 user user 4096 Jan 4 09:00 .\n"
            "-rw-r--r-- 1 user user  256 Jan 4 08:00 README.md",
            "tool_call_id": "call_golden_001",
        },
        {"role": "user", "content": "Thanks!"},
        {
            "role": "assistant",
            "content": "You're welcome! The directory contains a README.md file.",
        },
    ]

    assert got.origins == ["line 3", "line 5", "line 6", "line 7", "line 8", "line 9"]

    assert [(n.where, n.what) for n in got.notes] == [("line 4", "reasoning item")]


def test_codex_tools_session() -> None:
    got = imported("codex_tools_session.jsonl")
    assert got.format == "codex"

    assert got.messages == [
        {"role": "user", "content": "List the synthetic files."},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "call-structured-001",
                    "type": "function",
                    "function": {
                        "name": "exec_command",
                        "arguments": '{"cmd":"find . -maxdepth 1 -type f"}',
                    },
                }
            ],
        },
        {
            "role": "tool",
            "content": "./alpha.txt\n./beta.txt",
            "tool_call_id": "call-structured-001",
        },
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "call-custom-001",
                    "type": "function",
                    "function": {
                        "name": "apply_patch",
                        "arguments": "*** Begin Patch\n"
                        "*** Add File: gamma.txt\n"
                        "+synthetic\n"
                        "*** End Patch",
                    },
                }
            ],
        },
        {"role": "tool", "content": "Done!", "tool_call_id": "call-custom-001"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "call-mcp-001",
                    "type": "function",
                    "function": {
                        "name": "mcp__synthetic__lookup",
                        "arguments": '{"query":"fixture"}',
                    },
                }
            ],
        },
        {"role": "tool", "content": '{"status":"ok"}', "tool_call_id": "call-mcp-001"},
        {"role": "assistant", "content": "The synthetic files are alpha.txt and beta.txt."},
    ]

    assert got.origins == [
        "line 4",
        "line 6",
        "line 7",
        "line 8",
        "line 9",
        "line 10",
        "line 11",
        "line 13",
    ]

    assert [(n.where, n.what) for n in got.notes] == [
        ("line 14", "future_synthetic_record line"),
        ("line 5", "reasoning item"),
    ]


def test_codex_real_session() -> None:
    got = imported("codex_real_session.jsonl")
    assert got.format == "codex"

    assert got.messages == [
        {"role": "system", "content": "[REDACTED_BASE_INSTRUCTIONS]"},
        {"role": "system", "content": "[REDACTED_DEVELOPER_CONTEXT]"},
        {
            "role": "user",
            "content": "<environment_context>\n"
            "  <cwd>/tmp/agent-history-real-agent/codex/workspace</cwd>\n"
            "  <shell>bash</shell>\n"
            "  <current_date>2026-06-05</current_date>\n"
            "  <timezone>Asia/Calcutta</timezone>\n"
            "</environment_context>",
        },
        {"role": "user", "content": "[REDACTED_PROMPT]"},
        {"role": "assistant", "content": "[REDACTED_ASSISTANT_TEXT]"},
    ]

    assert got.origins == [
        "line 1.payload.base_instructions",
        "line 3",
        "line 4",
        "line 6",
        "line 9",
    ]

    assert [(n.where, n.what) for n in got.notes] == []


def _rollout(*lines: dict[str, object]) -> str:
    return "\n".join(json.dumps(line) for line in lines) + "\n"


def test_a_shown_message_no_item_repeats_is_a_message_and_compaction_a_note() -> None:
    text = _rollout(
        {"type": "session_meta", "payload": {"id": "s", "instructions": "You are Codex."}},
        {"type": "event_msg", "payload": {"type": "user_message", "message": "fix it"}},
        {"type": "compacted", "payload": {"message": "summary of before"}},
        {"type": "event_msg", "payload": {"type": "agent_reasoning", "text": "plan"}},
        {"type": "response_item", "payload": {"type": "message", "role": "assistant",
                                              "content": [{"type": "output_text", "text": "ok"}]}},
        {"type": "event_msg", "payload": {"type": "agent_message", "message": "ok"}},
    )  # fmt: skip
    got = parse_conversation(text, source_name="r.jsonl")
    assert got.format == "codex"
    assert got.messages == [
        {"role": "system", "content": "You are Codex."},
        {"role": "user", "content": "fix it"},
        {"role": "assistant", "content": "ok"},
    ]
    assert got.origins == ["line 1.payload.instructions", "line 2", "line 5"]
    assert [(n.where, n.what) for n in got.notes] == [
        ("line 3", "compacted history"),
        ("line 4", "reasoning event"),
    ]


def test_a_rollout_with_nothing_to_read_is_an_error() -> None:
    text = _rollout({"type": "session_meta", "payload": {"id": "s"}},
                    {"type": "event_msg", "payload": {"type": "token_count"}})  # fmt: skip
    with pytest.raises(ConversationFormatError) as info:
        parse_conversation(text, format="codex", source_name="r.jsonl")
    assert str(info.value) == "r.jsonl is not valid codex: no message or tool call in the rollout"


def test_a_broken_line_is_located() -> None:
    text = '{"type": "session_meta", "payload": {}}\n{"type": "response_item", "payload": '
    with pytest.raises(ConversationFormatError) as info:
        parse_conversation(text, format="codex", source_name="r.jsonl")
    assert str(info.value).startswith("r.jsonl is not valid codex: line 2: not JSON")


def test_the_signature() -> None:
    assert isinstance(codex.claims(lines_of('{"type": "session_meta", "payload": {}}\n')), Claim)
    assert isinstance(codex.claims(lines_of('{"type": "user", "message": {}}\n')), Miss)
    assert isinstance(codex.claims(lines_of("not json\n")), Miss)


def _codex_error(text: str) -> str:
    with pytest.raises(ConversationFormatError) as info:
        parse_conversation(text, format="codex", source_name="r.jsonl")
    return str(info.value).removeprefix("r.jsonl is not valid codex: ")


SESSION: dict[str, object] = {"type": "session_meta", "payload": {"id": "s"}}


@pytest.mark.parametrize(
    ("lines", "problem"),
    [
        ([{"type": "response_item", "payload": "x"}],
         "line 1.payload: expected an item, got string"),
        ([{"type": "session_meta", "payload": ["x"]}],
         "line 1.payload: expected an object, got list"),
        ([SESSION, {"type": "event_msg", "payload": {"message": "x"}}],
         "line 2.payload: event without a string 'type'"),
        ([SESSION, {"type": "event_msg", "payload": {"type": "user_message", "message": 3}}],
         "line 2.payload.message: expected a string"),
        ([{"type": "event_msg", "payload": {"type": "token_count"}}, {"a": 1}],
         "line 1: not a Codex rollout: every line must be {'type', 'payload'}, "
         "with a session_meta or response_item line"),
        # A bad item is located at its line, not at its index among the items.
        ([SESSION,
          {"type": "response_item", "payload": {"type": "message", "role": "user", "content": "hi"}},
          {"type": "event_msg", "payload": {"type": "token_count"}},
          {"type": "response_item", "payload": {"type": 5}}],
         "line 4: item 'type' must be a string, got number"),
        ([SESSION,
          {"type": "response_item", "payload": {"type": "message", "role": "robot", "content": "hi"}}],
         "line 2: unknown role 'robot' (expected system or user or assistant)"),
    ],
)  # fmt: skip
def test_bad_rollout_lines_are_located_at_their_line(
    lines: list[dict[str, object]], problem: str
) -> None:
    assert _codex_error(_rollout(*lines)) == problem


def test_other_events_and_unknown_lines_are_notes_and_turn_context_is_silent() -> None:
    text = _rollout(
        SESSION,
        {"type": "turn_context", "payload": {"cwd": "/x"}},
        {"type": "response_item", "payload": {"type": "message", "role": "user",
                                              "content": [{"type": "input_text", "text": "ls"}]}},
        {"type": "event_msg", "payload": {"type": "exec_command_begin", "command": ["ls"]}},
        {"type": "telemetry", "payload": {"n": 1}},
    )  # fmt: skip
    got = parse_conversation(text, format="codex", source_name="r.jsonl")
    assert got.messages == [{"role": "user", "content": "ls"}]
    assert got.origins == ["line 3"]
    assert [(n.where, n.what, n.why, n.content, n.unknown) for n in got.notes] == [
        ("line 4", "exec_command_begin event",
         "an event the CLI showed, not a conversation message",
         '{"type": "exec_command_begin", "command": ["ls"]}', False),
        ("line 5", "telemetry line", "codex has no such line type", '{"n": 1}', True),
    ]  # fmt: skip


def test_the_signature_needs_a_session_or_an_item_line() -> None:
    verdict = codex.claims(lines_of('{"type": "event_msg", "payload": {"type": "token_count"}}\n'))
    assert isinstance(verdict, Miss)
    assert str(verdict) == "no session_meta or response_item line"


def test_a_shown_message_repeating_an_item_with_an_image_is_read_once() -> None:
    """The item's text parts (not its image) are what the shown event repeats."""
    text = _rollout(
        SESSION,
        {"type": "response_item", "payload": {"type": "message", "role": "user", "content": [
            {"type": "input_text", "text": "look"},
            {"type": "input_image", "image_url": "data:image/png;base64,AAAA"}]}},
        {"type": "event_msg", "payload": {"type": "user_message", "message": "look"}},
    )  # fmt: skip
    got = parse_conversation(text, format="codex", source_name="r.jsonl")
    assert got.messages == [{"role": "user", "content": "look\n[input_image]"}]
    assert got.origins == ["line 2"]
    assert got.notes == []
