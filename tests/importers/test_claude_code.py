"""The claude_code importer: what it claims, the messages and notes it reads, its located errors."""

from __future__ import annotations

import json
from typing import Any

import pytest
from import_helpers import (
    SAMPLES,
    SESSION_START,
    START,
    answer,
    call_claude_code,
    call_fmt,
    call_sample,
    load,
    notes_edge,
    notes_sample,
    refused,
    rows_edge,
    session,
    text,
    use_claude_code,
)

from flowdrop_core.importers import (
    ConversationFormatError,
    parse_conversation,
)


@pytest.mark.parametrize(
    ("line", "why"),
    [
        ("[1]", "expected an event object, got list"),
        ('{"type":5}', "event without a string 'type'"),
        ("{bad", "not JSON (Expecting property name enclosed in double quotes at column 2)"),
    ],
    ids=["list", "type-not-text", "not-json"],
)
def test_claude_code_unreadable_line_after_the_start_is_a_located_note(line: str, why: str) -> None:
    got = parse_conversation(SESSION_START + line + "\n", format="claude-code")
    assert rows_edge(got) == [("user", "hi", None, None)]
    assert notes_edge(got) == [("line 2", "unreadable line", why)]


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
        {"role": "assistant", "content": "Let me look.", "tool_calls": [call_fmt("tu_1", "Bash")]},
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
    from flowdrop_core.importers import _claude_code as claude_code
    from flowdrop_core.importers._base import Out, Problem

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


def test_claude_code_session_jsonl() -> None:
    got = load("claude_code_session.jsonl", "claude-code")
    lines = [
        json.loads(line)
        for line in (SAMPLES / "claude_code_session.jsonl").read_text(encoding="utf-8").splitlines()
    ]
    edit = lines[3]["message"]["content"][0]
    assert got.messages == [
        {"role": "user", "content": lines[0]["message"]["content"][0]["text"]},
        {"role": "assistant", "content": lines[1]["message"]["content"][0]["text"]},
        {"role": "user", "content": lines[2]["message"]["content"][0]["text"]},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                call_sample("tool_001", "Edit", json.dumps(edit["input"], ensure_ascii=False))
            ],
        },
        {
            "role": "tool",
            "content": "File created successfully at: /tmp/decorator_example.py",
            "tool_call_id": "tool_001",
        },
        {"role": "assistant", "content": lines[5]["message"]["content"][0]["text"]},
    ]
    assert got.origins == [
        "line 1: message",
        "line 2: message",
        "line 3: message",
        "line 4: message",
        "line 5: message.content[0]",
        "line 6: message",
    ]
    assert notes_sample(got) == [("line 7", "summary event")]
    assert got.notes[0].content == lines[6]["summary"]


def test_a_session_that_opens_with_an_answer_is_read() -> None:
    got = session(answer("msg_1", text("Hello.")), START)
    assert got.messages == [
        {"role": "assistant", "content": "Hello."},
        {"role": "user", "content": "hi"},
    ]
    assert got.origins == ["line 1: message", "line 2: message"]


def test_blank_lines_between_events_are_skipped_and_reading_goes_on() -> None:
    got = session(START, "", "   ", answer("msg_1", text("Hello.")))
    assert got.messages == [
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": "Hello."},
    ]
    assert got.origins == ["line 1: message", "line 4: message"]
    assert got.notes == []


def test_streamed_text_blocks_of_one_answer_join_into_one_content() -> None:
    got = session(START, answer("msg_1", text("One.")), answer("msg_1", text("Two.")))
    assert got.messages[1] == {"role": "assistant", "content": "One.\nTwo."}
    assert got.origins[1] == "line 2: message+line 3: message"


def test_streamed_calls_without_text_leave_the_content_null() -> None:
    got = session(
        START, answer("msg_1", use_claude_code("tu_1")), answer("msg_1", use_claude_code("tu_2"))
    )
    assert got.messages[1] == {
        "role": "assistant",
        "content": None,
        "tool_calls": [call_claude_code("tu_1"), call_claude_code("tu_2")],
    }


def test_reasoning_streamed_inside_an_answer_is_a_note_at_its_own_line() -> None:
    thinking = {"type": "thinking", "thinking": "check the folder", "signature": "sig"}
    got = session(
        START,
        answer("msg_1", text("Let me look.")),
        answer("msg_1", thinking),
        answer("msg_1", use_claude_code("tu_1")),
    )
    assert got.messages[1] == {
        "role": "assistant",
        "content": "Let me look.",
        "tool_calls": [call_claude_code("tu_1")],
    }
    assert got.origins[1] == "line 2: message+line 3: message+line 4: message"
    assert [(n.where, n.what, n.content) for n in got.notes] == [
        ("line 3: message.content[0]", "thinking block", "check the folder")
    ]


@pytest.mark.parametrize("message_id", ["", 7, None])
def test_answers_without_a_text_id_are_never_merged(message_id: Any) -> None:
    got = session(START, answer(message_id, text("One.")), answer(message_id, text("Two.")))
    assert got.messages[1:] == [
        {"role": "assistant", "content": "One."},
        {"role": "assistant", "content": "Two."},
    ]


def test_user_lines_are_never_merged_even_with_the_same_message_id() -> None:
    line = {"type": "user", "message": {"id": "u1", "role": "user", "content": "again"}}
    got = session(START, line, line)
    assert got.messages == [
        {"role": "user", "content": "hi"},
        {"role": "user", "content": "again"},
        {"role": "user", "content": "again"},
    ]


@pytest.mark.parametrize(
    ("line", "why"),
    [
        ({"type": "user", "message": "hi"}, "user event without a 'message' object"),
        ({"type": "assistant"}, "assistant event without a 'message' object"),
        (
            {"type": "user", "message": {"role": "assistant", "content": "x"}},
            "message: role 'assistant' in a user event",
        ),
    ],
)
def test_an_event_whose_message_does_not_match_it_is_an_unreadable_line(
    line: dict[str, Any], why: str
) -> None:
    got = session(START, line)
    assert got.messages == [{"role": "user", "content": "hi"}]
    assert [(n.where, n.what, n.why, n.content) for n in got.notes] == [
        ("line 2", "unreadable line", why, json.dumps(line))
    ]


def test_other_events_are_notes_with_their_text_or_else_their_json() -> None:
    empty = {"type": "summary", "summary": "", "leafUuid": "u9"}
    numeric = {"type": "system", "content": 5}
    got = session(START, {"type": "summary", "summary": "Listed files."}, empty, numeric)
    assert [(n.where, n.what, n.why, n.content, n.unknown) for n in got.notes] == [
        ("line 2", "summary event", "not a conversation message", "Listed files.", False),
        ("line 3", "summary event", "not a conversation message", json.dumps(empty), False),
        ("line 4", "system event", "not a conversation message", json.dumps(numeric), False),
    ]


def test_a_file_of_only_summaries_is_not_a_session() -> None:
    assert refused({"type": "summary", "summary": "Listed files."}) == (
        "<text> is not valid claude-code: no user or assistant event"
    )


def test_twenty_unreadable_lines_before_any_event_refuse_the_file() -> None:
    """Detection stops reading another JSON Lines file as a session after 20 bad lines."""
    chat = [json.dumps({"role": "user", "content": f"m{i}"}) for i in range(20)]
    assert refused(*chat, START) == (
        "<text> is not valid claude-code: line 1: event without a string 'type'"
    )
    got = session(*chat[:19], START)
    assert got.messages == [{"role": "user", "content": "hi"}]
    assert len(got.notes) == 19


# --------------------------------------------------------------------------- real recordings


STREAMED_CALL = {
    "id": "toolu_01BWgwmyj8gGuqFNHMPqqtN2",
    "type": "function",
    "function": {
        "name": "Grep",
        "arguments": '{"pattern": "data-border-color", "output_mode": "files_with_matches"}',
    },
}


def test_a_streamed_answer_split_by_a_progress_line_is_one_message() -> None:
    """Two lines of one answer (one message.id) with a progress line between them were two
    assistant turns, and normalize moved a result between them with no finding."""
    got = load("claude_code_streamed_progress.jsonl", "claude-code")
    assert got.messages == [
        {
            "role": "assistant",
            "content": "I'll research how `data-border-color` is used thro...",
            "tool_calls": [STREAMED_CALL],
        }
    ]
    assert got.origins == ["line 1: message+line 3: message"]
    assert [(n.where, n.what) for n in got.notes] == [("line 2", "progress event")]


def test_a_message_without_role_takes_the_event_type() -> None:
    """Events whose message has no role were read as empty user messages (by JSON Lines)."""
    lines = (SAMPLES / "claude_code_streamed_progress.jsonl").read_text(encoding="utf-8")
    events = [json.loads(line) for line in lines.splitlines()]
    for event in events:
        if isinstance(event.get("message"), dict):
            del event["message"]["role"]
    got = parse_conversation("\n".join(json.dumps(e) for e in events))
    assert got.format == "claude-code"
    assert got.messages == load("claude_code_streamed_progress.jsonl", "claude-code").messages


def test_claude_code_rewound_session_reads_the_live_chain_and_notes_the_abandoned_branch() -> None:
    """A rewound session: lines 3 and 5 are user prompts with one parentUuid (line 2's).
    The live conversation is the parentUuid chain that ends at the last line (through the
    compact boundary's logicalParentUuid); the abandoned branch (lines 3-4) is notes."""
    got = load("claude_code_rewound.jsonl", "claude-code")
    assert [(m["role"], m["content"]) for m in got.messages] == [
        ("user", "Start"),
        ("assistant", "Ready"),
        ("user", "Second attempt"),
        ("assistant", "Second answer"),
        ("user", "Keep going"),
        ("assistant", "Kept going"),
        (
            "user",
            "This session is being continued from a previous conversation that ran out of "
            "context. Summary: the user asked for a plan.",
        ),
        ("user", "After compaction"),
        ("assistant", "Final answer"),
    ]
    assert got.origins[2] == "line 5: message"
    why = "the session was rewound to line 2; the live conversation is the parentUuid chain ending at line 12"
    assert [(n.where, n.what, n.why, n.content) for n in got.notes] == [
        ("line 3", "abandoned branch: user message", why, "First attempt"),
        ("line 4", "abandoned branch: assistant message", why, "First answer"),
        ("line 9", "system event", "not a conversation message", "Conversation compacted"),
    ]
    assert not any(n.unknown for n in got.notes)


def test_claude_code_sibling_tool_results_are_not_a_rewind() -> None:
    """Two tool results that name the same parent are answers to one turn's calls, not a
    rewind: both stay messages."""
    lines = [
        {"type": "user", "uuid": "u", "parentUuid": None,
         "message": {"role": "user", "content": "go"}},
        {"type": "assistant", "uuid": "a", "parentUuid": "u", "message": {
            "role": "assistant", "content": [use_claude_code("t1"), use_claude_code("t2")]}},
        {"type": "user", "uuid": "r1", "parentUuid": "a", "message": {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "t1", "content": "one"}]}},
        {"type": "user", "uuid": "r2", "parentUuid": "a", "message": {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "t2", "content": "two"}]}},
    ]  # fmt: skip
    got = parse_conversation("\n".join(json.dumps(x) for x in lines), format="claude-code")
    assert [m["role"] for m in got.messages] == ["user", "assistant", "tool", "tool"]
    assert got.notes == []
