"""Detection: which format claims a document, the nearest misses, nested values."""

from __future__ import annotations

import dataclasses
import json
import re
from typing import Any

import pytest
from import_helpers import (
    GEMINI_MODEL,
    OTEL_USER,
    error_fmt,
    generation,
    imported_edge,
    imported_fmt,
    notes_edge,
    notes_fmt,
    rows_edge,
)

from flowdrop_core.importers import (
    REGISTRY,
    ConversationFormatError,
    load_conversation,
    parse_conversation,
)


def test_notes_as_json_rows_keep_what_was_left_out() -> None:
    got = imported_edge(
        [{"role": "user", "content": [{"type": "widget", "text": "w"}]}], "openai-chat"
    )
    assert rows_edge(got) == [("user", "w", None, None)]
    assert got.notes_as_dicts() == [
        {
            "where": "[0].content[0]",
            "what": "unknown content part type 'widget'",
            "why": "openai-chat has no such part type; its text is kept",
            "content": '{"type": "widget", "text": "w"}',
            "unknown": True,
        }
    ]


@pytest.mark.parametrize("fmt", ["openai-chat", "openai-responses", "langchain"])
def test_unknown_content_part_keeps_its_text_and_is_a_note(fmt: str) -> None:
    part = {"type": "code", "text": "print(1)"}
    documents = {
        "openai-chat": [{"role": "user", "content": [part]}],
        "openai-responses": [{"type": "message", "role": "user", "content": [part]}],
        "langchain": [{"type": "human", "data": {"content": [part]}}],
    }
    got = imported_fmt(documents[fmt], fmt)
    assert got.messages == [{"role": "user", "content": "print(1)"}]
    assert len(got.notes) == 1
    assert got.notes[0].what == "unknown content part type 'code'"
    assert got.notes[0].content == json.dumps(part)


def test_unknown_part_without_text_is_a_marker_never_an_empty_message() -> None:
    got = imported_fmt([{"role": "user", "content": [{"type": "hologram", "data": "x"}]}])
    assert got.messages == [{"role": "user", "content": "[hologram]"}]
    assert notes_fmt(got) == [
        (
            "[0].content[0]",
            "unknown content part type 'hologram'",
            "openai-chat has no such part type; shown as a marker",
        )
    ]


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
    message = error_fmt(document)
    assert message.startswith("no known format matched <text>:")
    assert "what each format reads:" in message


def test_nested_messages_are_read_by_the_format_that_reads_them_completely() -> None:
    """OpenAI Chat reads OTel or Gemini messages only with a note (their 'parts' left
    out); detection goes on to the format that reads them with none."""
    got = imported_edge([generation(input=[OTEL_USER], output=[GEMINI_MODEL])], "langfuse")
    assert rows_edge(got) == [("user", "hi", None, None), ("assistant", "yo", None, None)]
    assert got.origins == ["[0].input[0]", "[0].output[0]"]
    assert notes_edge(got) == []


def test_a_whole_nested_value_read_as_one_message_is_located_at_the_value() -> None:
    got = imported_edge(
        {
            "trace": {"id": "t", "output": {"role": "assistant", "content": "a"}},
            "observations": [generation()],
        },
        "langfuse",
    )
    assert rows_edge(got) == [("assistant", "a", None, None)]
    assert got.origins == ["trace.output"]


def test_nested_value_no_format_reads_names_the_format_that_read_furthest() -> None:
    """Gemini reads this output as far as contents[0].parts; every other format
    refuses it at the top, so the note gives Gemini's problem."""
    output = {"contents": [{"role": "model", "parts": 5}]}
    got = imported_edge([generation(input="q", output=output)], "langfuse")
    assert rows_edge(got) == [("user", "q", None, None)]
    assert notes_edge(got) == [
        (
            "[0].output",
            "generation output in no known format",
            "no format reads it (expected a list of parts (nearest format: gemini))",
        )
    ]
    assert got.notes[0].content == json.dumps(output)


def test_orphan_result_in_a_file_is_imported_unless_strict_is_asked(tmp_path: Any) -> None:
    path = tmp_path / "orphan.json"
    path.write_text(
        json.dumps([{"role": "user", "content": "hi"}, {"role": "tool", "tool_call_id": "x", "content": "r"}]),
        encoding="utf-8",
    )  # fmt: skip
    got = load_conversation(path)
    assert got.messages[1] == {"role": "tool", "content": "r", "tool_call_id": "x"}
    with pytest.raises(ValueError, match="tool result for call 'x' whose call never appears"):
        load_conversation(path, strict=True)


def test_formats_and_imported_conversations_cannot_be_changed_by_a_caller() -> None:
    got = imported_edge([{"role": "user", "content": "hi"}], "openai-chat")
    with pytest.raises(dataclasses.FrozenInstanceError):
        got.format = "anthropic"  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        REGISTRY[0].name = "other"  # type: ignore[misc]


def test_every_format_declares_its_claim_next_to_its_reader() -> None:
    """A format is a module with NAME, EXPECTS, claims and read (or read_text)."""
    for spec in REGISTRY:
        assert callable(spec.claims), spec.name
        assert (spec.read is None) != (spec.read_text is None), spec.name


def test_only_claiming_formats_are_read_and_the_rest_say_what_they_lacked() -> None:
    """A list of role + parts messages with a part type no format has: before, Chat
    'read' such a list as messages with content null; now nobody claims it, and the error
    names the nearest formats with what each lacks."""
    document = [{"id": "m1", "role": "user", "parts": [{"type": "txt", "body": "hi"}]}]
    with pytest.raises(ConversationFormatError) as info:
        parse_conversation(json.dumps(document), source_name="ui.json")
    message = str(info.value)
    assert message.startswith(
        "no known format matched ui.json: a JSON list of 1 object with keys 'id', 'role', "
        "'parts'\nthe nearest formats, and what each lacked:\n"
    )
    assert "- openai-chat: [0]: no 'content', 'tool_calls' or 'tool_call_id'" in message
    assert info.value.problems["gemini"] == (
        "[0].parts[0]: a typed part (Gemini parts have no 'type' or 'part_kind')"
    )
    assert info.value.problems["vercel-ai"].startswith("no AI SDK UI parts")


def test_a_vercel_ui_message_is_claimed_by_vercel_ai_alone() -> None:
    """The same list with an AI SDK ``text`` part is a UIMessage: only vercel-ai reads it."""
    document = [{"id": "m1", "role": "user", "parts": [{"type": "text", "text": "hi"}]}]
    got = parse_conversation(json.dumps(document), source_name="ui.json")
    assert (got.format, got.messages) == ("vercel-ai", [{"role": "user", "content": "hi"}])


@pytest.mark.parametrize(
    ("document", "problem"),
    [
        ([], "an empty list"),
        ({"messages": []}, "messages: an empty list"),
        ({"output": [{"type": "reasoning", "summary": []}]}, "no message: all 1 items read"),
    ],
)
def test_an_import_with_no_message_is_an_error(document: Any, problem: str) -> None:
    with pytest.raises(ConversationFormatError, match=re.escape(problem)):
        parse_conversation(json.dumps(document))


#: Each new format's real sample, and every format that claims it (its own first).
NEW_FORMAT_CLAIMERS = {
    "gemini_cli_session.json": {"gemini-cli"},
    "gemini_cli_cancelled_call.json": {"gemini-cli"},
    "gemini_cli_session.jsonl": {"gemini-cli-jsonl"},
    "pi_session_refactor.jsonl": {"pi"},
    "swe_agent_test_repo.traj": {"swe-agent"},
    "mini_swe_agent_toolcall.traj.json": {"mini-swe-agent"},
    "mini_swe_agent_gitconfig.traj.json": {"mini-swe-agent"},
    "glaive_v2_news_headlines.json": {"glaive"},
}


@pytest.mark.parametrize("name", sorted(NEW_FORMAT_CLAIMERS))
def test_new_formats_are_claimed_by_their_reader_alone(name: str) -> None:
    """A neighbour claiming one of these would read it without the fields only its own
    reader knows (a LangGraph state without Gemini CLI's summary, a Chat body without a
    trajectory's submission, Claude Code lines without pi's tree)."""
    from import_helpers import SAMPLES

    from flowdrop_core.importers._claims import Claim, lines_of

    text = (SAMPLES / name).read_text(encoding="utf-8")
    try:
        document: Any = json.loads(text)
    except json.JSONDecodeError:
        document = None
    lines = lines_of(text)
    claimers = set()
    for spec in REGISTRY:
        if spec.on_text:
            verdict = spec.claims(text)
        elif spec.read_text is not None:
            verdict = spec.claims(lines)
        elif document is None:
            continue
        else:
            verdict = spec.claims(document)
        if isinstance(verdict, Claim):
            claimers.add(spec.name)
    assert claimers == NEW_FORMAT_CLAIMERS[name]
