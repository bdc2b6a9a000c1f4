"""SWE-agent and mini-SWE-agent trajectories: real runs, read as the model saw them."""

from __future__ import annotations

import json

from import_helpers import load

from flowdrop_core.importers import parse_conversation


def test_swe_agent_function_calling_history_with_tool_call_ids() -> None:
    """SWE-agent writes a result's call as ``tool_call_ids`` (a list): each answers its call."""
    got = load("swe_agent_function_calling.traj", "swe-agent")
    assert [m["role"] for m in got.messages] == ["system", "user"] + ["assistant", "tool"] * 5
    assert got.messages[2]["tool_calls"][0] == {
        "id": "call_PbWErNIge3YTrli3fiVvmIid",
        "type": "function",
        "function": {"name": "find_file", "arguments": '{"file_name":"missing_colon.py"}'},
    }
    calls = [m["tool_calls"][0]["id"] for m in got.messages if m["role"] == "assistant"]
    answered = [m["tool_call_id"] for m in got.messages if m["role"] == "tool"]
    assert answered == calls
    assert got.origins[3] == "history[3]"
    assert got.notes == []


def test_swe_agent_trajectory_notes_the_submission() -> None:
    got = load("swe_agent_test_repo.traj", "swe-agent")
    assert len(got.messages) == 10
    assert [(n.where, n.what, n.why) for n in got.notes] == [
        ("info.submission", "submission",
         "what the run submitted, not a conversation message (exit status 'submitted')")
    ]  # fmt: skip
    assert "def division(a: float, b: float) -> float:" in got.notes[0].content


def test_mini_swe_agent_text_based_trajectory() -> None:
    """Version 1 (``mini-swe-agent-1``): observations are user messages; not read as a
    Chat request body, which would leave ``info`` unread."""
    got = load("mini_swe_agent_gitconfig.traj.json", "mini-swe-agent")
    assert [m["role"] for m in got.messages] == ["system", "user"] + ["assistant", "user"] * 2 + [
        "assistant"
    ]
    assert got.messages[3]["content"].startswith("<returncode>0</returncode>")
    assert [n.what for n in got.notes] == ["submission"]


def test_mini_swe_agent_toolcall_trajectory_with_extra_and_exit() -> None:
    """Version 1.1 (mini-SWE-agent 2): ``extra`` is bookkeeping; the ``exit`` message (the
    submitted output) is a note, so the submit call stays unanswered, as it was."""
    got = load("mini_swe_agent_toolcall.traj.json", "mini-swe-agent")
    assert [m["role"] for m in got.messages] == ["system", "user"] + ["assistant", "tool"] * 3 + [
        "assistant"
    ]
    assert got.messages[3] == {
        "role": "tool",
        "content": "<returncode>0</returncode>\n<output>\n./astropy/modeling/separable.py\n</output>",
        "tool_call_id": "call_00_KVNoGhlWmTJUowwDsUa74968",
    }
    assert [(n.where, n.what) for n in got.notes] == [
        ("messages[9]", "exit message"),
        ("info.submission", "submission"),
    ]
    assert got.notes[0].content.startswith("diff --git a/astropy/modeling/separable.py")


def test_a_chat_request_body_is_still_openai_chat() -> None:
    document = {"model": "m", "messages": [{"role": "user", "content": "hi"}]}
    assert parse_conversation(json.dumps(document)).format == "openai-chat"
