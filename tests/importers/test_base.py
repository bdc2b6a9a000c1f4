"""Shared importer machinery: origins, notes, errors, turns, strictness, the long sample."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest
from import_helpers import (
    DEEP,
    HUGE_INT,
    ORPHAN,
    SAMPLES,
    _long_generator,
    _refired_and_dangling,
    call_main,
    error_of,
    request,
)

from flowdrop_core.importers import (
    FORMATS,
    REGISTRY,
    ConversationFormatError,
    ImportNote,
    group_turns,
    load_conversation,
    loads_or_problem,
    parse_conversation,
)
from flowdrop_core.importers._base import Out, Problem, as_text, json_text, last_call, parts_text


def test_scenario_buffer_then_steps() -> None:
    text = json.dumps(
        {
            "name": "s",
            "buffer": [
                {
                    "role": "assistant",
                    "content": "",
                    "metadata": {"tool_calls": [{"id": "c1", "name": "search"}]},
                }
            ],
            "steps": [
                {"append": {"role": "tool", "content": "r", "tool_call_id": "c1"}},
                {"append": [{"role": "user", "content": "a"}, {"role": "user", "content": "b"}]},
            ],
        }
    )
    got = parse_conversation(text)
    assert got.format == "scenario"
    assert got.messages == [
        {"role": "assistant", "content": "", "tool_calls": [call_main("c1", "search")]},
        {"role": "tool", "content": "r", "tool_call_id": "c1"},
        {"role": "user", "content": "a"},
        {"role": "user", "content": "b"},
    ]
    assert got.origins == [
        "buffer[0]",
        "steps[0].append",
        "steps[1].append[0]",
        "steps[1].append[1]",
    ]


@pytest.mark.parametrize(
    ("filename", "fmt", "count"),
    [
        ("openai_chat.json", "openai-chat", 13),
        ("openai_responses.json", "openai-responses", 13),
        ("anthropic_messages.json", "anthropic", 14),
        ("langchain_messages.json", "langchain", 13),
        ("conversation.jsonl", "jsonl", 13),
    ],
)
def test_samples_are_detected_and_interesting(filename: str, fmt: str, count: int) -> None:
    path = SAMPLES / filename
    got = load_conversation(path)
    assert got.format == fmt
    assert len(got.messages) == len(got.origins) == count
    assert got.name == str(path)
    assert sorted(i for turn in got.turns for i in turn) == list(range(count))
    refired, dangling = _refired_and_dangling(got.messages)
    assert len(refired) == 1, "each sample re-fires one tool result"
    assert len(dangling) == 1, "each sample leaves one call unanswered"
    assert load_conversation(path, format=fmt).messages == got.messages
    # Every sample answers each call after declaring it, so strict mode accepts it too.
    assert load_conversation(path, strict=True).messages == got.messages


def test_sample_origins_point_into_the_file() -> None:
    got = load_conversation(SAMPLES / "conversation.jsonl")
    lines = (SAMPLES / "conversation.jsonl").read_text(encoding="utf-8").split("\n")
    for message, origin in zip(got.messages, got.origins, strict=True):
        number = int(origin.removeprefix("line "))
        assert json.loads(lines[number - 1])["role"] == message["role"]


def test_load_from_bytes_uses_the_given_name() -> None:
    raw = (SAMPLES / "openai_chat.json").read_bytes()
    assert load_conversation(raw).name == "<bytes>"
    assert load_conversation(raw, name="upload.json").name == "upload.json"
    with pytest.raises(ConversationFormatError, match=r"^up\.json: not UTF-8 text"):
        load_conversation(b"\xff\xfe[]", name="up.json")


def test_truncated_json() -> None:
    """Not JSON: said first, with its line and column; no reason per format follows."""
    text = '{"messages": [\n  {"role": "user", "content": "hi"},\n  {"role": "assistant", "content": "he'
    assert error_of(text) == (
        "rec.json: not JSON (Unterminated string starting at line 3, column 36)"
    )


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("[1]", None),
        ('{"n": ' + HUGE_INT + "}", "not JSON (integer too long: more than 4300 digits)"),
        (DEEP, "not JSON (nested too deeply): more than 100 levels at line 1, column 101"),
        (
            DEEP + "]" * 100_000,
            "not JSON (nested too deeply): more than 100 levels at line 1, column 101",
        ),
        ("[1,", "not JSON (Expecting value at line 1, column 4)"),
    ],
)
def test_loads_or_problem_turns_every_json_refusal_into_one_error(
    text: str, problem: str | None
) -> None:
    if problem is None:
        assert loads_or_problem(text) == [1]
        return
    with pytest.raises(ConversationFormatError) as info:
        loads_or_problem(text)
    assert str(info.value) == problem
    assert info.value.__cause__ is None and info.value.__context__ is None


@pytest.mark.parametrize(
    ("text", "json_problem", "jsonl_problem"),
    [
        (
            '[{"role": "user", "content": "x", "n": ' + HUGE_INT + "}]",
            "not JSON (integer too long: more than 4300 digits)",
            "line 1: not JSON (integer too long: more than 4300 digits)",
        ),
        (
            DEEP,
            "not JSON (nested too deeply): more than 100 levels at line 1, column 101",
            "line 1: not JSON (nested too deeply): more than 100 levels at line 1, column 101",
        ),
    ],
)
def test_json_refused_without_a_decode_error_names_the_file(
    text: str, json_problem: str, jsonl_problem: str
) -> None:
    """A too-long integer (ValueError) or deep nesting (RecursionError): an error, no traceback."""
    assert error_of(text) == f"rec.json: {json_problem}"
    assert error_of(text, format="anthropic") == f"rec.json is not valid anthropic: {json_problem}"
    with pytest.raises(ConversationFormatError) as info:
        load_conversation(text.encode(), format="jsonl", name="big.json")
    assert str(info.value) == f"big.json is not valid jsonl: {jsonl_problem}"


def test_message_with_no_role() -> None:
    text = json.dumps(
        {
            "messages": [
                {"role": "user", "content": "hi"},
                {"role": "assistant", "content": "yo"},
                {"content": "lost"},
            ]
        }
    )
    message = error_of(text)
    problems, shapes = message.split("\nwhat each format reads:\n")
    # What the file looks like, then the two nearest formats (those that claim it and fail
    # first) with what each lacks, then what each of them reads.
    assert problems == (
        "no known format matched rec.json: a JSON object with keys 'messages'\n"
        "the nearest formats, and what each lacked:\n"
        "- openai-chat, anthropic: messages[2]: missing 'role'\n"
        "- langchain: messages[2]: no LangChain 'type' and no 'role' with 'content'"
    )
    listed = ("openai-chat", "anthropic", "langchain")
    assert shapes.splitlines() == [f"- {f.name}: {f.expects}" for f in REGISTRY if f.name in listed]


def test_orphan_result_is_imported_by_default() -> None:
    got = parse_conversation(ORPHAN)
    assert got.messages[3] == {"role": "tool", "content": "from nowhere", "tool_call_id": "x"}
    assert got.origins[3] == "messages[3]"


def test_orphan_result_is_an_error_in_strict_mode() -> None:
    assert error_of(ORPHAN, strict=True) == (
        "rec.json: messages[3]: tool result for call 'x' whose call never appears before it"
    )


def test_strict_mode_also_rejects_a_result_ahead_of_its_call_and_an_idless_result() -> None:
    ahead = [
        {"role": "tool", "tool_call_id": "a", "content": "early"},
        {"role": "assistant", "content": None, "tool_calls": [call_main("a", "f")]},
    ]
    assert error_of(json.dumps(ahead), strict=True) == (
        "rec.json: [0]: tool result for call 'a' whose call never appears before it"
    )
    idless = [
        {"role": "assistant", "content": None, "tool_calls": [call_main("0", "f")]},
        {"role": "tool", "tool_call_id": "0", "content": "?"},
    ]
    assert error_of(json.dumps(idless), strict=True) == (
        "rec.json: [1]: tool result has no usable tool_call_id"
    )


def test_format_override_reports_only_that_format() -> None:
    text = (SAMPLES / "openai_chat.json").read_text(encoding="utf-8")
    assert error_of(text, format="anthropic") == (
        "rec.json is not valid anthropic: messages[0]: unknown role 'system' "
        "(expected user or assistant)"
    )
    assert error_of(text, format="gemini") == (
        "rec.json is not valid gemini: no 'contents' or 'candidates' at the top level"
    )


def test_unknown_format_and_empty_file() -> None:
    assert error_of("[]", format="yaml") == (
        f"unknown format 'yaml'; known formats: {', '.join(FORMATS)}"
    )
    assert FORMATS == (
        "openai-chat", "openai-responses", "responses-log", "cohere", "anthropic", "otel-genai",
        "openinference", "otel-legacy", "vercel-ai", "pydantic-ai", "gemini", "gemini-cli",
        "bedrock", "api-recording", "langchain", "langfuse", "xlam", "glaive", "swe-agent",
        "mini-swe-agent", "hermes", "sharegpt", "scenario", "claude-code", "jsonl", "codex",
        "gemini-cli-jsonl", "pi", "chatml",
    )  # fmt: skip
    assert error_of(" \n\n") == "rec.json is empty"


def test_problems_are_available_per_format() -> None:
    with pytest.raises(ConversationFormatError) as info:
        parse_conversation('{"messages": [{"content": "x"}]}')
    assert list(info.value.problems) == list(FORMATS)
    assert info.value.problems["openai-chat"] == "messages[0]: missing 'role'"


@pytest.mark.parametrize(
    ("fmt", "document", "problem"),
    [
        ("openai-responses", [{"type": "function_call", "name": "f"}], "[0]: function_call without 'call_id'"),
        ("openai-responses", [{"type": {"x": 1}}], "[0]: item 'type' must be a string, got object"),
        ("openai-responses", {"output": [{"type": "function_call_output", "call_id": "c"}]}, "output[0]: function_call_output without 'output'"),
        ("anthropic", {"messages": [{"role": "user", "content": [{"type": "tool_use", "id": "a", "name": "f"}]}]}, "messages[0].content[0]: tool_use block in a user message"),
        ("anthropic", {"messages": [{"role": "user", "content": [{"type": "tool_result"}]}]}, "messages[0].content[0]: tool_result block without 'tool_use_id'"),
        ("anthropic", {"messages": [{"role": "assistant"}]}, "messages[0]: missing 'content'"),
        ("langchain", [{"type": "robot", "data": {}}], "[0]: unknown message type 'robot' (expected human, ai, system or tool)"),
        ("scenario", {"name": "s", "steps": [{"apend": []}]}, "steps[0].append: missing required field"),
        ("scenario", {"name": "s", "buffer": [7], "steps": []}, "buffer[0]: expected a message object, got number"),
    ],
)  # fmt: skip
def test_other_format_problems(fmt: str, document: Any, problem: str) -> None:
    assert error_of(json.dumps(document), format=fmt) == f"rec.json is not valid {fmt}: {problem}"


def test_group_turns() -> None:
    def roles(*names: str) -> list[dict[str, Any]]:
        return [{"role": name} for name in names]

    assert group_turns([]) == []
    assert group_turns(roles("system", "system", "user", "assistant", "tool", "user")) == [
        [0, 1],
        [2, 3, 4],
        [5],
    ]
    # A recording that starts mid-loop still groups; a late system message joins its turn.
    assert group_turns(roles("tool", "assistant", "user", "system", "assistant")) == [
        [0, 1],
        [2, 3, 4],
    ]
    assert group_turns(roles("system", "assistant", "tool")) == [[0], [1, 2]]


def test_long_conversation_is_the_generators_output_and_imports() -> None:
    generator = _long_generator()
    path = SAMPLES.parent / "long_conversation.jsonl"
    committed = path.read_text(encoding="utf-8")
    assert committed == generator.render(generator.generate()), (
        "sample_data/long_conversation.jsonl is stale: run scripts/gen_long_conversation.py"
    )
    assert len(committed.encode()) < 3_000_000
    got = load_conversation(path, strict=True)
    assert got.format == "jsonl"
    assert len(got.messages) >= 5000
    refired, dangling = _refired_and_dangling(got.messages)
    assert len(refired) > 10
    # The generator's crashes leave a calling turn followed straight by a user nudge:
    # exactly those calls, and no other, are unanswered.
    msgs = got.messages
    crashed = {
        c["id"]
        for k, m in enumerate(msgs[:-1])
        if m.get("tool_calls") and msgs[k + 1]["role"] == "user"
        for c in m["tool_calls"]
    }
    assert crashed and dangling == crashed


def test_long_conversation_generator_is_seeded() -> None:
    generator = _long_generator()
    assert generator.generate(300, seed=1) == generator.generate(300, seed=1)
    assert generator.generate(300, seed=1) != generator.generate(300, seed=2)


def test_call_id_spelling_follows_the_engine_order() -> None:
    """MEM-11: tool_call_id first, then id; an unusable one falls through to the other."""
    calls = [
        {"tool_call_id": "buf", "id": "flat", "name": "a"},
        {"tool_call_id": "0", "id": "flat2", "name": "b"},
        {"tool_call_id": " ", "name": "c"},
    ]
    got = parse_conversation(
        json.dumps([{"role": "assistant", "content": "", "tool_calls": calls}])
    )
    assert [c["id"] for c in got.messages[0]["tool_calls"]] == ["buf", "flat2", " "]


def test_call_id_is_the_engines_reading() -> None:
    """MEM-11: messages.read_call_id reads the id; an unusable one is kept raw, for display."""
    calls = [
        {"tool_call_id": "0", "id": "c1", "name": "a"},
        {"tool_call_id": " c2 ", "name": "b"},
        {"id": 0, "name": "c"},
        {"tool_call_id": "0", "name": "d"},
        {"name": "e"},
    ]
    got = parse_conversation(
        json.dumps([{"role": "assistant", "content": "", "tool_calls": calls}])
    )
    assert [c["id"] for c in got.messages[0]["tool_calls"]] == ["c1", "c2", 0, "0", None]


def test_import_notes_are_values_that_cannot_be_changed_after_the_import() -> None:
    """An import's notes may be shared (a trace's earlier calls): no caller can alter one."""
    document = {"messages": [{"role": "user", "content": [{"type": "thinking", "thinking": "x"}]}]}
    got = parse_conversation(json.dumps(document), format="anthropic")
    (note,) = got.notes
    with pytest.raises(dataclasses.FrozenInstanceError):
        note.where = "elsewhere"  # type: ignore[misc]
    assert note.where == "messages[0].content[0]"
    same = ImportNote(note.where, note.what, note.why, note.content, note.unknown)
    assert {note, same} == {note}


def test_a_value_json_cannot_write_is_shown_as_its_str() -> None:
    """Helpers never crash on a left-out value: what JSON cannot write is shown as ``str``."""
    assert json_text(b"raw") == "b'raw'"
    assert as_text({1, 2}) == "{1, 2}"
    loop: list[object] = []
    loop.append(loop)
    assert json_text(loop) == "[[...]]"
    assert json_text({"a": ["é", 1]}) == '{"a": ["é", 1]}'


def test_anthropic_system_blocks_must_be_objects_a_bare_string_is_refused() -> None:
    """Only formats that allow bare strings as parts (LangChain) read them as text."""
    document = {"system": ["be brief"], "messages": [{"role": "user", "content": "hi"}]}
    with pytest.raises(ConversationFormatError) as info:
        parse_conversation(json.dumps(document), format="anthropic")
    assert str(info.value) == (
        "<text> is not valid anthropic: system[0]: expected a content part object, got string"
    )


def test_parts_with_bare_strings_allowed_join_every_part() -> None:
    out = Out()
    parts = ["a", {"type": "text", "text": "b"}, "c"]
    assert parts_text(parts, "content", out, "fmt", {"text": "text"}, strings=True) == "a\nb\nc"
    assert out.notes == []


def test_the_last_call_of_no_calls_is_a_problem_not_a_crash() -> None:
    with pytest.raises(Problem) as info:
        last_call([], Out(), "why")
    assert str(info.value) == "no model call with messages in the trace"


def test_a_message_only_earlier_calls_held_is_one_note_however_many_held_it() -> None:
    gone = {"role": "user", "content": "forgotten"}
    kept = {"role": "user", "content": "kept"}
    got = parse_conversation(json.dumps([request(gone), request(gone), request(kept)]))
    assert got.format == "openai-chat"
    assert got.messages == [kept]
    assert [(n.where, n.what, n.content) for n in got.notes] == [
        ("[0].messages[0]", "message of call [0]", json.dumps(gone)),
    ]


def test_a_note_repeated_by_earlier_calls_is_kept_once() -> None:
    odd = {"role": "user", "content": [{"type": "sticker", "text": "wave"}]}
    kept = {"role": "user", "content": "kept"}
    got = parse_conversation(
        json.dumps([request(odd), request(odd), request(kept)]), format="openai-chat"
    )
    assert got.messages == [kept]
    assert [(n.where, n.what) for n in got.notes] == [
        ("[0].messages[0]", "message of call [0]"),
        ("[0].messages[0].content[0]", "unknown content part type 'sticker'"),
    ]


def test_legacy_function_calls_repeated_by_each_request_are_the_same_messages() -> None:
    """Made-up call ids differ per request; the call and its result still match the last one's."""
    asked = {"role": "user", "content": "weather?"}
    calls = {
        "role": "assistant",
        "content": None,
        "function_call": {"name": "f", "arguments": "{}"},
    }
    result = {"role": "function", "name": "f", "content": "cold"}
    first = request(asked, calls, result)
    last = request(asked, calls, result, {"role": "assistant", "content": "It is cold."})
    got = parse_conversation(json.dumps([first, last]))
    made_up = "[1].messages[1].function_call"
    assert got.messages[2] == {"role": "tool", "content": "cold", "tool_call_id": made_up}
    assert len(got.messages) == 4
    assert got.notes == []


def test_a_text_part_without_string_text_is_a_located_error() -> None:
    document = {"system": [{"type": "text", "text": 5}], "messages": []}
    with pytest.raises(ConversationFormatError) as info:
        parse_conversation(json.dumps(document), format="anthropic")
    assert str(info.value) == (
        "<text> is not valid anthropic: system[0]: text part without a string 'text'"
    )


def test_a_note_as_a_dict_holds_every_field() -> None:
    note = ImportNote("[0].content[1]", "reasoning part", "not a message", "hmm", unknown=True)
    assert note.to_dict() == {
        "where": "[0].content[1]",
        "what": "reasoning part",
        "why": "not a message",
        "content": "hmm",
        "unknown": True,
    }
    assert json.loads(json.dumps(note.to_dict())) == note.to_dict()


def test_a_note_reads_as_where_what_and_why() -> None:
    assert str(ImportNote("[2]", "reasoning part", "not a message")) == (
        "[2]: reasoning part: not a message"
    )
    assert str(ImportNote("", "field 'x'", "not read")) == "(top level): field 'x': not read"


def test_a_sqlite_file_is_named_with_what_opens_it_not_as_bad_utf8(tmp_path: Path) -> None:
    """A store given where a recording is expected (an upload, a path): not "not UTF-8 text"."""
    import sqlite3

    path = tmp_path / "checkpoints.sqlite"
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE checkpoints (thread_id TEXT)")
    conn.commit()
    conn.close()
    for source in (path, path.read_bytes()):
        with pytest.raises(ConversationFormatError) as info:
            load_conversation(source, name="up.sqlite")
        assert str(info.value) == (
            "up.sqlite: a SQLite file, not a recorded conversation (JSON or JSON Lines); a "
            "LangGraph checkpoint file, an OpenAI Agents session file or a FlowDrop store is "
            "opened by 'flowdrop-buffer store FILE' (the Store page)"
        )
