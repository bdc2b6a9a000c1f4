"""The pi coding agent's session JSONL: real sessions (version 1) and a branched tree."""

from __future__ import annotations

import json
from typing import Any

from import_helpers import load

from flowdrop_core.importers import parse_conversation


def test_pi_session_with_parallel_tool_calls_and_thinking() -> None:
    got = load("pi_session_refactor.jsonl", "pi")
    assert [m["role"] for m in got.messages] == [
        "user", "assistant", "tool", "tool", "assistant", "tool", "assistant", "user", "assistant"
    ]  # fmt: skip
    assert got.messages[1]["tool_calls"] == [
        {"id": "toolu_012yuiPP1VAfh196GXaAmT8D", "type": "function", "function": {
            "name": "read",
            "arguments": '{"path": "/Users/badlogic/workspaces/pi-mono/packages/coding-agent/src/main.ts"}'}},
        {"id": "toolu_018AGG1WjGWVfUR2Sibzkh2Q", "type": "function", "function": {
            "name": "read",
            "arguments": '{"path": "/Users/badlogic/workspaces/pi-mono/packages/coding-agent/src/tui/tui-renderer.ts"}'}},
    ]  # fmt: skip
    assert [m["tool_call_id"] for m in got.messages if m["role"] == "tool"] == [
        "toolu_012yuiPP1VAfh196GXaAmT8D",
        "toolu_018AGG1WjGWVfUR2Sibzkh2Q",
        "toolu_01KgRZiUs86jzrwZs41sAvEs",
    ]
    assert got.origins[:3] == ["line 2", "line 3", "line 4"]
    assert [(n.where, n.what) for n in got.notes] == [("line 14: content[0]", "thinking block")]


def test_pi_session_with_an_aborted_request() -> None:
    """An assistant entry that holds only ``errorMessage`` (the request was aborted) is a
    note, not an empty turn."""
    got = load("pi_session_large.jsonl", "pi")
    assert [(m["role"], m["content"]) for m in got.messages[:2]] == [
        ("user", "/mode"),
        ("user", got.messages[1]["content"]),
    ]
    assert [(n.where, n.what, n.content) for n in got.notes] == [
        ("line 3: message.errorMessage", "model error", "Request was aborted")
    ]
    assert sum(len(m.get("tool_calls", ())) for m in got.messages) == 7
    assert sum(m["role"] == "tool" for m in got.messages) == 7


def _entry(kind: str, entry_id: str, parent: str | None, **fields: Any) -> str:
    return json.dumps(
        {"type": kind, "id": entry_id, "parentId": parent, "timestamp": "t", **fields}
    )


def test_pi_tree_reads_the_path_to_the_last_entry_and_notes_the_other_branch() -> None:
    """Version 3 (session.md, "Tree Structure"): branching makes new children of an earlier
    entry; the conversation is the path from the last entry to the root."""
    user = {"role": "user", "content": "Hello"}
    text = "\n".join([
        json.dumps({"type": "session", "version": 3, "id": "s", "timestamp": "t", "cwd": "/p"}),
        _entry("message", "a1", None, message=user),
        _entry("message", "b1", "a1", message={"role": "assistant", "content": [
            {"type": "text", "text": "Hi!"}]}),
        _entry("message", "c1", "b1", message={"role": "user", "content": "try A"}),
        _entry("message", "d1", "c1", message={"role": "assistant", "content": [
            {"type": "text", "text": "A done"}]}),
        _entry("branch_summary", "e1", "b1", fromId="d1", summary="Branch explored approach A"),
        _entry("message", "f1", "e1", message={"role": "user", "content": "try B"}),
        _entry("model_change", "g1", "f1", provider="openai", modelId="gpt-4o"),
    ]) + "\n"  # fmt: skip
    got = parse_conversation(text)
    assert got.format == "pi"
    assert [(m["role"], m["content"]) for m in got.messages] == [
        ("user", "Hello"),
        ("assistant", "Hi!"),
        ("user", "try B"),
    ]
    assert [(n.where, n.what, n.content) for n in got.notes] == [
        ("line 4", "another branch", "try A"),
        ("line 5", "another branch", "A done"),
        ("line 6", "branch_summary entry", "Branch explored approach A"),
    ]
