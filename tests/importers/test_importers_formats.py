"""Issue 13 items 1-2 in detail: each reader's spellings, its notes, and detection.

The sample files have their own tests (test_importers_samples.py); these are the
shapes the samples do not cover, one behaviour per test, with exact results.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from flowdrop_core.importers import (
    ConversationFormatError,
    ImportedConversation,
    ImportNote,
    parse_conversation,
)


def call(call_id: Any, name: str, arguments: str = "{}") -> dict[str, Any]:
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}


def imported(document: Any, fmt: str | None = None) -> ImportedConversation:
    return parse_conversation(json.dumps(document), format=fmt)


def notes(got: ImportedConversation) -> list[tuple[str, str, str]]:
    return [(n.where, n.what, n.why) for n in got.notes]


def error(document: Any, fmt: str | None = None) -> str:
    with pytest.raises(ConversationFormatError) as info:
        imported(document, fmt)
    return str(info.value)


# --------------------------------------------------------------------------- the silent failures


def test_otel_messages_are_not_taken_for_openai_chat() -> None:
    """Issue 13: role + parts read as Chat gave null texts; now OTel reads them, Chat notes them."""
    document = [
        {"role": "user", "parts": [{"type": "text", "content": "weather?"}]},
        {"role": "assistant", "parts": [{"type": "text", "content": "sunny"}]},
    ]
    got = imported(document)
    assert got.format == "otel-genai"
    assert got.messages == [
        {"role": "user", "content": "weather?"},
        {"role": "assistant", "content": "sunny"},
    ]
    # Forced to Chat, every text would sit in a note: that is no import at all.
    with pytest.raises(ConversationFormatError) as info:
        imported(document, "openai-chat")
    assert str(info.value) == (
        "<text> is not valid openai-chat: [0]: the message's whole content went to a note "
        "(field 'parts')"
    )


def test_role_based_langchain_dicts_keep_calls_from_additional_kwargs() -> None:
    """Issue 13: calls under additional_kwargs.tool_calls were lost and their results orphaned."""
    document = [
        {"role": "user", "content": "weather?"},
        {
            "role": "assistant",
            "content": "",
            "additional_kwargs": {
                "tool_calls": [
                    {"id": "c1", "type": "function", "function": {"name": "w", "arguments": "{}"}}
                ]
            },
        },
        {"role": "tool", "tool_call_id": "c1", "content": "sunny"},
    ]
    got = imported(document)
    assert got.format == "langchain"
    assert got.messages == [
        {"role": "user", "content": "weather?"},
        {"role": "assistant", "content": None, "tool_calls": [call("c1", "w")]},
        {"role": "tool", "content": "sunny", "tool_call_id": "c1"},
    ]
    assert got.notes == []


@pytest.mark.parametrize("fmt", ["openai-chat", "openai-responses", "langchain"])
def test_unknown_content_part_keeps_its_text_and_is_a_note(fmt: str) -> None:
    part = {"type": "code", "text": "print(1)"}
    documents = {
        "openai-chat": [{"role": "user", "content": [part]}],
        "openai-responses": [{"type": "message", "role": "user", "content": [part]}],
        "langchain": [{"type": "human", "data": {"content": [part]}}],
    }
    got = imported(documents[fmt], fmt)
    assert got.messages == [{"role": "user", "content": "print(1)"}]
    assert len(got.notes) == 1
    assert got.notes[0].what == "unknown content part type 'code'"
    assert got.notes[0].content == json.dumps(part)


def test_unknown_part_without_text_is_a_marker_never_an_empty_message() -> None:
    got = imported([{"role": "user", "content": [{"type": "hologram", "data": "x"}]}])
    assert got.messages == [{"role": "user", "content": "[hologram]"}]
    assert notes(got) == [
        (
            "[0].content[0]",
            "unknown content part type 'hologram'",
            "openai-chat has no such part type; shown as a marker",
        )
    ]


@pytest.mark.parametrize(
    ("item", "content"),
    [
        ({"type": "web_search_call", "id": "ws_1", "status": "completed", "action": {"type": "search", "query": "q"}},
         '[web_search_call ws_1] {"status": "completed", "action": {"type": "search", "query": "q"}}'),
        ({"type": "file_search_call", "id": "fs_1", "queries": ["a"], "status": "completed"},
         '[file_search_call fs_1] {"queries": ["a"], "status": "completed"}'),
        ({"type": "code_interpreter_call", "id": "ci_1", "code": "1+1", "outputs": [{"type": "logs", "logs": "2"}]},
         '[code_interpreter_call ci_1] {"code": "1+1", "outputs": [{"type": "logs", "logs": "2"}]}'),
        ({"type": "mcp_call", "id": "mcp_1", "server_label": "fs", "name": "read", "arguments": "{}", "output": "x"},
         '[mcp_call mcp_1] {"server_label": "fs", "name": "read", "arguments": "{}", "output": "x"}'),
    ],
)  # fmt: skip
def test_responses_hosted_tool_items_are_visible_and_never_fatal(
    item: dict[str, Any], content: str
) -> None:
    got = imported(
        {
            "input": "go",
            "output": [item, {"type": "message", "role": "assistant", "content": "done"}],
        }
    )
    assert got.format == "openai-responses"
    assert got.messages == [
        {"role": "user", "content": "go"},
        {"role": "assistant", "content": content},
        {"role": "assistant", "content": "done"},
    ]


def test_responses_client_side_calls_of_every_kind() -> None:
    got = imported(
        [
            {"type": "computer_call", "call_id": "cc1", "action": {"type": "click", "x": 1}},
            {
                "type": "computer_call_output",
                "call_id": "cc1",
                "output": {"type": "computer_screenshot"},
            },
            {"type": "custom_tool_call", "call_id": "ct1", "name": "patch", "input": "*** Begin"},
            {"type": "custom_tool_call_output", "call_id": "ct1", "output": "ok"},
            {
                "type": "reasoning",
                "id": "rs",
                "summary": [{"type": "summary_text", "text": "think"}],
            },
        ]
    )
    assert got.messages == [
        {"role": "assistant", "content": None, "tool_calls": [call("cc1", "computer", '{"type": "click", "x": 1}')]},
        {"role": "tool", "content": '{"type": "computer_screenshot"}', "tool_call_id": "cc1"},
        {"role": "assistant", "content": None, "tool_calls": [call("ct1", "patch", "*** Begin")]},
        {"role": "tool", "content": "ok", "tool_call_id": "ct1"},
    ]  # fmt: skip
    assert got.notes == [
        ImportNote(
            "[4]", "reasoning item", "model reasoning is not a conversation message", "think"
        )
    ]


# --------------------------------------------------------------------------- OpenAI Chat


def test_chat_legacy_function_call_and_function_role() -> None:
    got = imported(
        {
            "messages": [
                {"role": "user", "content": "weather?"},
                {"role": "assistant", "content": None, "function_call": {"name": "w", "arguments": '{"c":1}'}},
                {"role": "function", "name": "w", "content": "sunny"},
                {"role": "function", "name": "w", "content": "again"},
            ]
        }
    )  # fmt: skip
    assert got.format == "openai-chat"
    assert got.messages == [
        {"role": "user", "content": "weather?"},
        {"role": "assistant", "content": None, "tool_calls": [call("messages[1].function_call", "w", '{"c":1}')]},
        {"role": "tool", "content": "sunny", "tool_call_id": "messages[1].function_call"},
        {"role": "tool", "content": "again", "tool_call_id": None},
    ]  # fmt: skip
    assert notes(got) == [
        (
            "messages[3]",
            "function result without a call",
            "no earlier function_call named 'w' is open; imported with no tool_call_id",
        )
    ]


def test_chat_every_content_part_type() -> None:
    got = imported(
        [
            {
                "role": "user",
                "content": [
                    {"type": "text", "text": "look"},
                    {"type": "image_url", "image_url": {"url": "https://x/y.png"}},
                    {"type": "input_audio", "input_audio": {"data": "AAA", "format": "wav"}},
                    {"type": "file", "file": {"file_id": "file-1"}},
                ],
            },
            {
                "role": "assistant",
                "content": [{"type": "refusal", "refusal": "no"}],
                "audio": {"id": "audio_1", "transcript": "spoken"},
            },
            {"role": "assistant", "content": None, "refusal": "I can't"},
        ]
    )
    assert got.messages == [
        {"role": "user", "content": "look\n[image_url]\n[input_audio]\n[file]"},
        {"role": "assistant", "content": "no\n[audio audio_1] spoken"},
        {"role": "assistant", "content": "I can't"},
    ]
    assert got.notes == []


def test_chat_recording_of_requests_each_followed_by_its_response() -> None:
    """Response objects next to request bodies: what the last call saw, then its reply."""
    weather = call("c1", "w")
    got = imported(
        [
            {"model": "m", "messages": [{"role": "user", "content": "weather?"}]},
            {"object": "chat.completion", "choices": [{"message": {"role": "assistant", "content": None, "tool_calls": [weather]}}]},
            {"model": "m", "messages": [
                {"role": "user", "content": "weather?"},
                {"role": "assistant", "content": None, "tool_calls": [weather]},
                {"role": "tool", "tool_call_id": "c1", "content": "sunny"},
            ]},
            {"object": "chat.completion", "choices": [{"message": {"role": "assistant", "content": "Sunny."}}]},
        ]
    )  # fmt: skip
    assert got.format == "openai-chat"
    assert got.messages == [
        {"role": "user", "content": "weather?"},
        {"role": "assistant", "content": None, "tool_calls": [weather]},
        {"role": "tool", "content": "sunny", "tool_call_id": "c1"},
        {"role": "assistant", "content": "Sunny."},
    ]
    assert got.origins == [
        "[2].messages[0]",
        "[2].messages[1]",
        "[2].messages[2]",
        "[3].choices[0]",
    ]
    assert got.notes == []


def test_chat_response_with_several_choices_notes_the_others() -> None:
    got = imported(
        {
            "object": "chat.completion",
            "choices": [
                {"index": 0, "message": {"role": "assistant", "content": "one"}},
                {"index": 1, "message": {"role": "assistant", "content": "two"}},
            ],
        }
    )
    assert got.messages == [{"role": "assistant", "content": "one"}]
    assert notes(got) == [
        (
            "choices[1]",
            "another choice",
            "a response's alternative completions are not one conversation; choices[0] is imported",
        )
    ]
    assert got.notes[0].content == '{"role": "assistant", "content": "two"}'


# --------------------------------------------------------------------------- Anthropic, OTel, Gemini, Bedrock


def test_anthropic_thinking_is_a_note_with_its_text() -> None:
    got = imported(
        {
            "messages": [
                {"role": "user", "content": "q"},
                {
                    "role": "assistant",
                    "content": [
                        {"type": "thinking", "thinking": "hmm", "signature": "s"},
                        {"type": "redacted_thinking", "data": "xyz"},
                        {"type": "text", "text": "a"},
                    ],
                },
            ]
        }
    )
    assert got.messages == [{"role": "user", "content": "q"}, {"role": "assistant", "content": "a"}]
    assert [(n.where, n.what, n.content) for n in got.notes] == [
        ("messages[1].content[0]", "thinking block", "hmm"),
        ("messages[1].content[1]", "redacted_thinking block", '{"type": "redacted_thinking", "data": "xyz"}'),
    ]  # fmt: skip


def test_otel_blob_uri_file_parts_are_markers_and_reasoning_a_note() -> None:
    got = imported(
        [
            {
                "role": "user",
                "parts": [
                    {"type": "text", "content": "what is this?"},
                    {"type": "uri", "modality": "image", "uri": "https://x/y.png"},
                    {"type": "blob", "mime_type": "audio/wav", "content": "AAA"},
                    {"type": "file", "file_id": "f1"},
                ],
            },
            {
                "role": "assistant",
                "parts": [
                    {"type": "reasoning", "content": "think"},
                    {"type": "text", "content": "a cat"},
                ],
            },
        ]
    )
    assert got.messages == [
        {"role": "user", "content": "what is this?\n[uri image]\n[blob audio/wav]\n[file]"},
        {"role": "assistant", "content": "a cat"},
    ]
    assert [(n.where, n.what, n.content) for n in got.notes] == [
        ("[1].parts[0]", "reasoning part", "think")
    ]


def test_gemini_snake_case_with_ids_system_and_thoughts() -> None:
    got = imported(
        {
            "system_instruction": {"parts": [{"text": "be brief"}]},
            "contents": [
                {"role": "user", "parts": [{"text": "weather?"}]},
                {
                    "role": "model",
                    "parts": [
                        {"text": "let me think", "thought": True},
                        {"function_call": {"id": "fc1", "name": "w", "args": {"c": "Oslo"}}},
                        {"function_call": {"name": "w", "args": {"c": "Rome"}}},
                    ],
                },
                {
                    "role": "user",
                    "parts": [
                        {"function_response": {"name": "w", "response": {"t": 1}}},
                        {"function_response": {"id": "fc1", "name": "w", "response": {"t": 2}}},
                    ],
                },
            ],
        }
    )
    assert got.format == "gemini"
    assert got.messages == [
        {"role": "system", "content": "be brief"},
        {"role": "user", "content": "weather?"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [call("fc1", "w", '{"c": "Oslo"}'), call("contents[1].parts[2]", "w", '{"c": "Rome"}')],
        },
        # Without an id, a response answers the oldest open call of its name (fc1 here is
        # still open, so the id-less response takes it; the one with id fc1 keeps its id).
        {"role": "tool", "content": '{"t": 1}', "tool_call_id": "fc1"},
        {"role": "tool", "content": '{"t": 2}', "tool_call_id": "fc1"},
    ]  # fmt: skip
    assert [(n.where, n.what) for n in got.notes] == [("contents[1].parts[0]", "thought part")]


def test_gemini_unknown_part_is_a_marker_and_a_note() -> None:
    got = imported({"contents": [{"role": "model", "parts": [{"newKind": {"x": 1}}]}]})
    assert got.messages == [{"role": "assistant", "content": "[newKind]"}]
    assert [(n.where, n.what, n.unknown) for n in got.notes] == [
        ("contents[0].parts[0]", "unknown part", True)
    ]


def test_bedrock_response_json_result_error_status_and_reasoning() -> None:
    got = imported(
        {
            "messages": [
                {"role": "user", "content": [{"text": "go"}]},
                {"role": "assistant", "content": [{"toolUse": {"toolUseId": "t1", "name": "f", "input": {}}}]},
                {
                    "role": "user",
                    "content": [{"toolResult": {"toolUseId": "t1", "content": [{"json": {"a": 1}}], "status": "error"}}],
                },
            ],
            "output": {
                "message": {
                    "role": "assistant",
                    "content": [{"reasoningContent": {"reasoningText": {"text": "hmm"}}}, {"text": "done"}],
                }
            },
        }
    )  # fmt: skip
    assert got.format == "bedrock"
    assert got.messages == [
        {"role": "user", "content": "go"},
        {"role": "assistant", "content": None, "tool_calls": [call("t1", "f")]},
        {"role": "tool", "content": '[error] {"a": 1}', "tool_call_id": "t1"},
        {"role": "assistant", "content": "done"},
    ]
    assert [(n.where, n.what, n.content) for n in got.notes] == [
        ("output.message.content[0]", "reasoningContent block", "hmm")
    ]


# --------------------------------------------------------------------------- LangChain / LangGraph


def test_langgraph_flat_model_dump_state_and_updates() -> None:
    messages = [
        {"type": "human", "content": "hi", "id": "1"},
        {
            "type": "ai",
            "content": "",
            "tool_calls": [{"name": "f", "args": {}, "id": "c1"}],
            "id": "2",
        },
        {"type": "tool", "content": "r", "tool_call_id": "c1", "status": "error", "id": "3"},
    ]
    expected = [
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": None, "tool_calls": [call("c1", "f")]},
        {"role": "tool", "content": "[error] r", "tool_call_id": "c1"},
    ]
    state = imported({"messages": messages})
    assert (state.format, state.messages) == ("langchain", expected)
    updates = imported(
        [{"agent": {"messages": messages[:2]}}, {"tools": {"messages": messages[2:]}}]
    )
    assert updates.messages == expected
    assert updates.origins == [
        "[0].agent.messages[0]",
        "[0].agent.messages[1]",
        "[1].tools.messages[0]",
    ]


def test_langgraph_values_note_a_message_the_last_state_dropped() -> None:
    first = {"type": "human", "content": "gone", "id": "1"}
    kept = {"type": "human", "content": "kept", "id": "2"}
    got = imported([{"messages": [first]}, {"messages": [kept]}])
    assert got.messages == [{"role": "user", "content": "kept"}]
    assert [(n.where, n.what) for n in got.notes] == [
        ("[0].messages[0]", "message missing from the last state")
    ]


def test_langchain_tool_message_without_an_id_and_with_object_content() -> None:
    """Importers read, they do not judge: an id-less result stays id-less (MEM-1 judges it);
    structured content a tracing integration logged is shown as its JSON, with a note."""
    got = imported(
        [
            {"type": "tool", "data": {"content": "x"}},
            {"role": "tool", "content": {"k": 1}, "additional_kwargs": {}},
        ]
    )
    assert got.format == "langchain"
    assert got.messages == [
        {"role": "tool", "content": "x"},
        {"role": "tool", "content": '{"k": 1}'},
    ]
    assert [(n.where, n.what, n.unknown) for n in got.notes] == [
        ("[1].content", "content that is an object", True)
    ]


def test_langchain_legacy_function_call_in_additional_kwargs() -> None:
    got = imported(
        [
            {"type": "ai", "data": {"content": "", "additional_kwargs": {"function_call": {"name": "f", "arguments": "{}"}}}},
            {"type": "function", "data": {"content": "r", "name": "f"}},
        ]
    )  # fmt: skip
    where = "[0].data.additional_kwargs.function_call"
    assert got.messages == [
        {"role": "assistant", "content": None, "tool_calls": [call(where, "f")]},
        {"role": "tool", "content": "r", "tool_call_id": where},
    ]


# --------------------------------------------------------------------------- traces


def test_trace_export_notes_what_an_earlier_call_saw_but_the_last_did_not() -> None:
    """A trace whose last generation does not hold an earlier one's reply: that reply is a note."""
    trace = {
        "id": "t",
        "observations": [
            {"id": "g2", "type": "GENERATION", "startTime": "2024-01-01T00:00:02Z",
             "input": [{"role": "user", "content": "second"}], "output": "answer two"},
            {"id": "g1", "type": "GENERATION", "startTime": "2024-01-01T00:00:01Z",
             "input": [{"role": "user", "content": "first"}], "output": "answer one"},
        ],
    }  # fmt: skip
    got = imported(trace)
    assert got.format == "langfuse"
    assert got.messages == [
        {"role": "user", "content": "second"},
        {"role": "assistant", "content": "answer two"},
    ]
    assert [(n.where, n.what, n.content) for n in got.notes] == [
        ("observations[1].input[0]", "message of generation 'observations[1]'", '{"role": "user", "content": "first"}'),
        ("observations[1].output", "message of generation 'observations[1]'", '{"role": "assistant", "content": "answer one"}'),
    ]  # fmt: skip


# --------------------------------------------------------------------------- bad input (issue 9 item 2)


@pytest.mark.parametrize(
    "document",
    [
        {"input": [{"type": {"x": 1}}]},
        [{"role": "user", "content": [{"type": ["text"], "text": "hi"}]}],
        [{"role": {"x": 1}, "content": "hi"}],
        [{"type": ["human"], "data": {"content": "x"}}],
        {"contents": [{"role": ["user"], "parts": [{"text": "x"}]}]},
        {"conversations": [{"from": {"a": 1}, "value": "x"}]},
    ],
)
def test_a_type_or_role_that_is_an_object_or_list_is_a_located_error(document: Any) -> None:
    message = error(document)
    assert message.startswith("no known format matched <text>:")
    assert "what each format reads:" in message


def test_otel_part_with_an_object_type_is_an_error_not_a_crash() -> None:
    """OTel does not claim it (no string part type), nor Chat (no content): a located error."""
    with pytest.raises(ConversationFormatError) as info:
        imported([{"role": "user", "parts": [{"type": {"t": 1}}]}])
    assert info.value.problems["otel-genai"] == "[0].parts[0]: a part without a string 'type'"
    assert info.value.problems["openai-chat"] == "[0]: no 'content', 'tool_calls' or 'tool_call_id'"


def test_claude_code_unreadable_lines_are_notes_not_a_refused_session() -> None:
    """A session log can hold a bad event or a line cut by a crash: each is a located note."""
    text = (
        '{"type": "user", "message": {"role": "user", "content": "hi"}}\n'
        '{"type": ["x"]}\n'
        '{"type": "user", "message": {"role": "user", "contenst": []}}\n'
        '{"type": "assistant", "message": {"role": "assistant", "content": [{"type": "te'
    )
    got = parse_conversation(text, source_name="s.jsonl")
    assert got.format == "claude-code"
    assert got.messages == [{"role": "user", "content": "hi"}]
    assert [(n.where, n.what, n.why, n.unknown) for n in got.notes] == [
        ("line 2", "unreadable line", "event without a string 'type'", True),
        ("line 3", "unreadable line", "message: missing 'content'", True),
        ("line 4", "unreadable line", "not JSON (Unterminated string starting at column 77)", True),
    ]
    assert got.notes[2].content == text.split("\n")[3]


def test_claude_code_streamed_blocks_of_one_answer_are_one_message() -> None:
    def line(role: str, message_id: str | None, block: dict[str, Any]) -> str:
        message = {"role": role, "content": [block]} | ({"id": message_id} if message_id else {})
        return json.dumps({"type": role, "message": message})

    text = "\n".join(
        [
            line("user", None, {"type": "text", "text": "list files"}),
            line("assistant", "msg_1", {"type": "text", "text": "Let me look."}),
            line(
                "assistant",
                "msg_1",
                {"type": "tool_use", "id": "tu_1", "name": "Bash", "input": {}},
            ),
            line("user", None, {"type": "tool_result", "tool_use_id": "tu_1", "content": "a b"}),
            line("assistant", "msg_2", {"type": "text", "text": "Two files."}),
            line("assistant", "msg_3", {"type": "text", "text": "Anything else?"}),
        ]
    )
    got = parse_conversation(text)
    assert got.format == "claude-code"
    assert got.messages == [
        {"role": "user", "content": "list files"},
        {"role": "assistant", "content": "Let me look.", "tool_calls": [call("tu_1", "Bash")]},
        {"role": "tool", "content": "a b", "tool_call_id": "tu_1"},
        {"role": "assistant", "content": "Two files."},
        {"role": "assistant", "content": "Anything else?"},
    ]
    assert got.origins[1] == "line 2: message+line 3: message"


def test_a_file_with_no_session_event_is_not_claude_code() -> None:
    with pytest.raises(ConversationFormatError) as info:
        parse_conversation('{"type": ["x"]}\n', format="claude-code", source_name="s.jsonl")
    assert (
        str(info.value) == "s.jsonl is not valid claude-code: line 1: event without a string 'type'"
    )


def test_claude_code_gives_up_on_a_file_that_opens_with_no_session_event() -> None:
    """Detection reads a chat JSONL once as a session: past 20 unreadable lines it stops."""
    from flowdrop_core.importers import claude_code
    from flowdrop_core.importers.base import Out, Problem

    chat = [json.dumps({"role": "user", "content": f"m{i}"}) for i in range(25)]
    session_event = json.dumps(
        {"type": "user", "uuid": "u1", "message": {"role": "user", "content": "late"}}
    )
    out = Out()
    with pytest.raises(Problem, match="line 1: event without a string 'type'"):
        claude_code.read_text("\n".join([*chat, session_event]), out)
    assert len(out.notes) == claude_code.GIVE_UP_AFTER - 1
    # a session whose event comes after a few unreadable lines is still read
    out = Out()
    claude_code.read_text("\n".join([*chat[:3], session_event]), out)
    assert [m["content"] for m in out.messages] == ["late"]
