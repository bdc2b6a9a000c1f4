"""Gemini CLI chat recordings (JSON and JSON Lines) and logs.json: real sessions read whole."""

from __future__ import annotations

import json
from typing import Any

from import_helpers import load

from flowdrop_core.importers import ConversationFormatError, parse_conversation


def test_gemini_cli_session_json_reads_user_and_model_messages_and_notes_thoughts() -> None:
    got = load("gemini_cli_session.json", "gemini-cli")
    assert [m["role"] for m in got.messages] == ["user"] + ["assistant"] * 7
    assert got.messages[0]["content"] == "請幫我檢查一下所有代碼是否足夠簡潔 而不是一堆冗餘代碼"
    assert got.origins[:2] == ["messages[0]", "messages[1]"]
    assert [(n.where, n.what) for n in got.notes] == [
        (f"messages[{k}].thoughts", "thoughts") for k in range(1, 7)
    ]
    assert got.notes[0].content.startswith("Considering User Needs: I'm analyzing")


def test_gemini_cli_tool_call_and_its_cancelled_result() -> None:
    got = load("gemini_cli_cancelled_call.json", "gemini-cli")
    call_id = "run_shell_command-1764718994223-08cd8e5b0be998"
    assert got.messages == [
        {"role": "user", "content": "intall claude-cli"},
        {
            "role": "assistant",
            "content": "I will use `pip` to install `claude-cli`.",
            "tool_calls": [
                {
                    "id": call_id,
                    "type": "function",
                    "function": {
                        "name": "run_shell_command",
                        "arguments": '{"command": "pip install claude-cli", '
                        '"description": "Install claude-cli using pip."}',
                    },
                }
            ],
        },
        {
            "role": "tool",
            "content": '[error] {"error": "[Operation Cancelled] Reason: User cancelled the '
            'operation."}',
            "tool_call_id": call_id,
        },
        {
            "role": "user",
            "content": "use choco or other windows package manager that is similar to homebrew",
        },
        {"role": "assistant", "content": "Okay, I will use Chocolatey to install `claude-cli`."},
    ]
    assert got.origins[2] == "messages[1].toolCalls[0].result"


def test_gemini_cli_jsonl_folds_rewritten_records_and_reads_each_call_once() -> None:
    """The CLI rewrites a model message in full when its tool calls finish (lines 6 and 8
    hold one id): it is one message, at its first place, from its last copy."""
    got = load("gemini_cli_session.jsonl", "gemini-cli-jsonl")
    roles = [m["role"] for m in got.messages]
    assert roles == (
        ["user", "assistant"] + ["tool"] * 5 + ["assistant"] + ["tool"] * 3
        + ["assistant", "tool", "assistant", "tool", "user", "assistant", "user", "assistant"]
        + ["tool"] * 2
    )  # fmt: skip
    assert got.origins[1:3] == ["line 8", "line 8: toolCalls[0].result"]
    ids = [c["id"] for m in got.messages for c in m.get("tool_calls", ())]
    assert ids == sorted(set(ids), key=ids.index)  # each call once
    answered = [m["tool_call_id"] for m in got.messages if m["role"] == "tool"]
    assert answered == ids
    assert [(n.where, n.what) for n in got.notes if "thoughts" not in n.what] == [
        ("line 2", "info message"),
        ("line 27", "info message"),
    ]


def _lines(*records: dict[str, Any]) -> str:
    head = {"sessionId": "s", "projectHash": "h", "startTime": "t"}
    return "\n".join(json.dumps(r) for r in (head, *records)) + "\n"


def test_gemini_cli_jsonl_rewind_drops_the_later_messages_as_notes() -> None:
    """``$rewindTo`` drops that message and every one after it, as the CLI's loader does."""
    text = _lines(
        {"id": "a", "type": "user", "content": "first"},
        {"id": "b", "type": "gemini", "content": "reply"},
        {"id": "c", "type": "user", "content": "second"},
        {"$rewindTo": "c"},
        {"id": "d", "type": "user", "content": "second, edited"},
    )
    got = parse_conversation(text)
    assert got.format == "gemini-cli-jsonl"
    assert [m["content"] for m in got.messages] == ["first", "reply", "second, edited"]
    assert [(n.where, n.what, n.why, n.content) for n in got.notes] == [
        ("line 4", "rewound message", "the session was rewound at line 5 (to 'c')", "second")
    ]


def test_gemini_cli_jsonl_set_messages_replaces_the_conversation() -> None:
    text = _lines(
        {"id": "a", "type": "user", "content": "old"},
        {"$set": {"messages": [{"id": "x", "type": "user", "content": [{"text": "new"}]}]}},
    )
    got = parse_conversation(text)
    assert [(m["role"], m["content"]) for m in got.messages] == [("user", "new")]
    assert got.origins == ["line 3: $set.messages[0]"]
    assert [(n.where, n.what) for n in got.notes] == [("line 2", "message replaced by $set")]


def test_gemini_cli_logs_json_is_the_users_prompts() -> None:
    """logs.json as gemini-cli's Logger writes it (``LogEntry``: sessionId, messageId,
    timestamp, type 'user', message), here of two sessions."""
    entries = [
        {"sessionId": "s1", "messageId": 0, "type": "user", "message": "what is this repo?",
         "timestamp": "2025-08-01T00:00:10.604Z"},
        {"sessionId": "s1", "messageId": 1, "type": "user", "message": "/compress",
         "timestamp": "2025-08-01T00:00:27.352Z"},
        {"sessionId": "s2", "messageId": 0, "type": "user", "message": "hello again",
         "timestamp": "2025-08-02T00:00:00.000Z"},
    ]  # fmt: skip
    got = parse_conversation(json.dumps(entries, indent=2))
    assert got.format == "gemini-cli"
    assert [(m["role"], m["content"]) for m in got.messages] == [
        ("user", "what is this repo?"),
        ("user", "/compress"),
        ("user", "hello again"),
    ]
    assert got.origins == ["[0].message", "[1].message", "[2].message"]
    assert [(n.where, n.what, n.content) for n in got.notes] == [("[2]", "another session", "s2")]


def test_gemini_cli_recording_of_cli_messages_only_is_refused_with_the_reason() -> None:
    """A session of only what the CLI printed (an ``info`` and an ``error``) holds no
    conversation: refused, naming what it lacks."""
    document = {"sessionId": "s", "projectHash": "h", "messages": [
        {"id": "1", "type": "info", "content": "Loaded cached credentials."},
        {"id": "2", "type": "error", "content": "quota exceeded"},
    ]}  # fmt: skip
    try:
        parse_conversation(json.dumps(document))
    except ConversationFormatError as exc:
        assert "gemini-cli: messages: no 'user' or 'gemini' record" in str(exc)
    else:
        raise AssertionError("a recording with no conversation was read")


def test_gemini_cli_session_summary_is_a_note() -> None:
    """The CLI titles a session (``summary``, in the JSON file or a ``$set`` line): it was
    in neither the messages nor the notes."""
    record = {"id": "a", "type": "user", "content": "update the CLI"}
    document = {"sessionId": "s", "projectHash": "h", "summary": "Update Gemini CLI via npm",
                "messages": [record]}  # fmt: skip
    got = parse_conversation(json.dumps(document))
    assert [(n.where, n.what, n.content) for n in got.notes] == [
        ("summary", "session summary", "Update Gemini CLI via npm")
    ]
    got = parse_conversation(_lines(record, {"$set": {"summary": "Update Gemini CLI via npm"}}))
    assert [(n.where, n.what) for n in got.notes] == [("line 3: $set.summary", "session summary")]
