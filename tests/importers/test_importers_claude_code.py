"""Claude Code sessions: what a user gets back for shapes the other importer tests leave out.

Each test states the exact messages, origins, notes or error text a user sees.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from flowdrop_core.importers import (
    ConversationFormatError,
    ImportedConversation,
    parse_conversation,
)

START = {"type": "user", "message": {"role": "user", "content": "hi"}}


def session(*events: Any) -> ImportedConversation:
    text = "\n".join(e if isinstance(e, str) else json.dumps(e) for e in events)
    return parse_conversation(text, format="claude-code")


def refused(*events: Any) -> str:
    with pytest.raises(ConversationFormatError) as info:
        session(*events)
    return str(info.value)


def answer(message_id: Any, *blocks: dict[str, Any]) -> dict[str, Any]:
    """One assistant line (Claude Code writes one per streamed block, with the answer's id)."""
    message = {"id": message_id, "role": "assistant", "content": list(blocks)}
    return {"type": "assistant", "message": message}


def text(value: str) -> dict[str, Any]:
    return {"type": "text", "text": value}


def use(call_id: str) -> dict[str, Any]:
    return {"type": "tool_use", "id": call_id, "name": "Bash", "input": {}}


def call(call_id: str) -> dict[str, Any]:
    return {"id": call_id, "type": "function", "function": {"name": "Bash", "arguments": "{}"}}


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
    got = session(START, answer("msg_1", use("tu_1")), answer("msg_1", use("tu_2")))
    assert got.messages[1] == {
        "role": "assistant",
        "content": None,
        "tool_calls": [call("tu_1"), call("tu_2")],
    }


def test_reasoning_streamed_inside_an_answer_is_a_note_at_its_own_line() -> None:
    thinking = {"type": "thinking", "thinking": "check the folder", "signature": "sig"}
    got = session(
        START,
        answer("msg_1", text("Let me look.")),
        answer("msg_1", thinking),
        answer("msg_1", use("tu_1")),
    )
    assert got.messages[1] == {
        "role": "assistant",
        "content": "Let me look.",
        "tool_calls": [call("tu_1")],
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
