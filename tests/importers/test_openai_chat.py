"""The openai_chat importer: what it claims, the messages and notes it reads, its located errors."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from import_helpers import (
    CHAT_ERRORS,
    call_fmt,
    call_main,
    call_sample,
    error_edge,
    error_of,
    error_openai_chat,
    imported_edge,
    imported_fmt,
    imported_openai_chat,
    load,
    notes_edge,
    notes_fmt,
    rows_edge,
)

from flowdrop_core.importers import (
    FORMATS,
    REGISTRY,
    Claim,
    ConversationFormatError,
    Miss,
    parse_conversation,
)
from flowdrop_core.importers import (
    _openai_chat as openai_chat,
)
from flowdrop_core.importers._base import Out, PendingCalls, Problem
from flowdrop_core.importers._openai_chat import chat_message, message_miss, plain_message


def test_openai_chat_request_body() -> None:
    text = json.dumps(
        {
            "model": "gpt-4o",
            "messages": [
                {"role": "developer", "content": "be brief"},
                {"role": "user", "content": [{"type": "text", "text": "weather?"}], "name": "ann"},
                {
                    "role": "assistant",
                    "content": None,
                    "tool_calls": [
                        {
                            "id": "call_1",
                            "type": "function",
                            "function": {"name": "get_weather", "arguments": '{"city":"Oslo"}'},
                        }
                    ],
                },
                {"role": "tool", "tool_call_id": "call_1", "content": "cold"},
            ],
        }
    )
    got = parse_conversation(text)
    assert got.format == "openai-chat"
    assert got.messages == [
        {"role": "system", "content": "be brief"},
        {"role": "user", "content": "weather?"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [call_main("call_1", "get_weather", '{"city":"Oslo"}')],
        },
        {"role": "tool", "content": "cold", "tool_call_id": "call_1"},
    ]
    assert got.origins == ["messages[0]", "messages[1]", "messages[2]", "messages[3]"]
    assert got.turns == [[0], [1, 2, 3]]
    assert got.name == "<text>"


def test_openai_chat_reads_stored_buffer_rows_too() -> None:
    """GR-MEM: both shapes are read everywhere; a healed placeholder stays marked."""
    text = json.dumps(
        [
            {
                "role": "assistant",
                "content": "",
                "metadata": {"tool_calls": [{"tool_call_id": "c1", "name": "search"}]},
            },
            {
                "role": "tool",
                "content": "Tool call was interrupted; no result.",
                "metadata": {"tool_call_id": "c1", "healed": True},
                "timestamp": "2025-01-01T00:00:00Z",
            },
        ]
    )
    got = parse_conversation(text)
    assert got.messages == [
        {"role": "assistant", "content": "", "tool_calls": [call_main("c1", "search")]},
        {
            "role": "tool",
            "content": "Tool call was interrupted; no result.",
            "tool_call_id": "c1",
            "metadata": {"healed": True},
        },
    ]
    assert got.origins == ["[0]", "[1]"]


@pytest.mark.parametrize(
    ("document", "problem"),
    [
        ([{"role": "user", "content": 3}], "[0].content: expected a string, a list of content parts or null, got number"),
        ([{"role": "operator", "content": "x"}], "[0]: unknown role 'operator' (expected system or user or assistant or tool or function)"),
        ([{"role": "user", "content": [{"type": {"x": 1}}]}], "[0].content[0]: content part without a string 'type'"),
        ([{"role": {"x": 1}, "content": "x"}], "[0]: unknown role {'x': 1} (expected system or user or assistant or tool or function)"),
        ([{"role": "user", "content": "x", "tool_calls": [call_main("a", "f")]}], "[0]: 'tool_calls' on a user message; only assistant turns call tools"),
        ({"system": "s", "messages": []}, "system: a top-level system prompt is Anthropic's layout, not OpenAI Chat's"),
        ("hello", "expected a list of messages or an object with 'messages', got string"),
    ],
)  # fmt: skip
def test_openai_chat_problems(document: Any, problem: str) -> None:
    assert error_of(json.dumps(document), format="openai-chat") == (
        f"rec.json is not valid openai-chat: {problem}"
    )


@pytest.mark.parametrize(("document", "problem"), CHAT_ERRORS)
def test_chat_bad_field_is_a_located_error(document: Any, problem: str) -> None:
    assert error_edge(document, "openai-chat") == f"<text> is not valid openai-chat: {problem}"


def test_chat_request_messages_then_the_response_choice() -> None:
    document = {
        "messages": [{"role": "user", "content": "q"}],
        "choices": [{"message": {"role": "assistant", "content": "a"}}],
    }
    got = imported_edge(document, "openai-chat")
    assert rows_edge(got) == [("user", "q", None, None), ("assistant", "a", None, None)]


def test_chat_object_content_is_its_json_with_a_note() -> None:
    got = imported_edge(
        [{"role": "tool", "content": {"rows": 2}, "tool_call_id": "c1"}], "openai-chat"
    )
    assert rows_edge(got) == [("tool", '{"rows": 2}', None, "c1")]
    assert notes_edge(got) == [
        (
            "[0].content",
            "content that is an object",
            "openai-chat content is text; shown as its JSON",
        )
    ]


def test_chat_stored_row_shape_null_metadata_and_id_in_metadata() -> None:
    """A buffer's own rows (id under metadata) read back as the same messages."""
    got = imported_edge(
        [
            {"role": "user", "content": "x", "metadata": None},
            {"role": "tool", "content": "r", "metadata": {"tool_call_id": "c9"}},
        ],
        "openai-chat",
    )
    assert rows_edge(got) == [("user", "x", None, None), ("tool", "r", None, "c9")]


def test_chat_legacy_function_call_and_function_role() -> None:
    got = imported_fmt(
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
        {"role": "assistant", "content": None, "tool_calls": [call_fmt("messages[1].function_call", "w", '{"c":1}')]},
        {"role": "tool", "content": "sunny", "tool_call_id": "messages[1].function_call"},
        {"role": "tool", "content": "again", "tool_call_id": None},
    ]  # fmt: skip
    assert notes_fmt(got) == [
        (
            "messages[3]",
            "function result without a call",
            "no earlier function_call named 'w' is open; imported with no tool_call_id",
        )
    ]


def test_chat_every_content_part_type() -> None:
    got = imported_fmt(
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
    weather = call_fmt("c1", "w")
    got = imported_fmt(
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
    got = imported_fmt(
        {
            "object": "chat.completion",
            "choices": [
                {"index": 0, "message": {"role": "assistant", "content": "one"}},
                {"index": 1, "message": {"role": "assistant", "content": "two"}},
            ],
        }
    )
    assert got.messages == [{"role": "assistant", "content": "one"}]
    assert notes_fmt(got) == [
        (
            "choices[1]",
            "another choice",
            "a response's alternative completions are not one conversation; choices[0] is imported",
        )
    ]
    assert got.notes[0].content == '{"role": "assistant", "content": "two"}'


def test_openai_chat_completion_response_object() -> None:
    got = load("openai_chat_completion.json", "openai-chat")
    assert got.messages == [
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                call_sample("call_abc123", "get_current_weather", '{\n"location": "Boston, MA"\n}')
            ],
        }
    ]
    assert got.origins == ["choices[0]"]
    assert got.notes == []


def test_openai_chat_message_with_several_content_parts() -> None:
    got = load("openai_chat_image_input.json", "openai-chat")
    assert got.messages == [{"role": "user", "content": "What is in this image?\n[image_url]"}]
    assert got.origins == ["messages[0]"]


def test_a_document_that_is_one_message_is_read_as_that_message() -> None:
    got = imported_openai_chat({"role": "user", "content": "hi"})
    assert got.messages == [{"role": "user", "content": "hi"}]
    assert got.origins == ["(top level)"]


@pytest.mark.parametrize(
    ("document", "problem"),
    [
        ({"foo": 1}, "no 'messages' or 'choices' at the top level"),
        ("hi", "expected a list of messages or an object with 'messages', got string"),
    ],
)
def test_a_document_with_no_messages_is_refused_saying_what_it_lacks(
    document: Any, problem: str
) -> None:
    assert error_openai_chat(document) == problem


def test_function_result_with_a_name_that_is_no_text_answers_the_oldest_call() -> None:
    got = imported_openai_chat(
        [
            {"role": "assistant", "content": None, "function_call": {"name": "f"}},
            {"role": "function", "name": 5, "content": "r"},
            {"role": "function", "name": 5, "content": "r2"},
        ]
    )
    assert got.messages[1:] == [
        {"role": "tool", "content": "r", "tool_call_id": "[0].function_call"},
        {"role": "tool", "content": "r2", "tool_call_id": None},
    ]
    assert [(n.where, n.what, n.why, n.content) for n in got.notes] == [
        (
            "[2]",
            "function result without a call",
            "no earlier function_call named 5 is open; imported with no tool_call_id",
            "",
        )
    ]


def test_an_empty_refusal_adds_nothing_and_audio_without_a_transcript_is_a_marker() -> None:
    got = imported_openai_chat(
        [
            {"role": "assistant", "content": "x", "refusal": ""},
            {"role": "assistant", "content": "y", "audio": {"id": "a1", "transcript": 5}},
        ]
    )
    assert got.messages == [
        {"role": "assistant", "content": "x"},
        {"role": "assistant", "content": "y\n[audio a1]"},
    ]
    assert got.notes == []


def test_a_legacy_call_repeated_by_a_later_request_is_one_message_of_the_recording() -> None:
    """A legacy function_call's made-up id is its place, which differs between two requests
    of a recording: the last request holding the same call leaves no note."""
    call = {"role": "assistant", "content": None, "function_call": {"name": "f", "arguments": "{}"}}
    result = {"role": "function", "name": "f", "content": "r"}
    question = {"role": "user", "content": "q"}

    def reply(text: str) -> dict[str, Any]:
        return {"choices": [{"message": {"role": "assistant", "content": text}}]}

    got = imported_openai_chat(
        [
            {"messages": [question, call, result]},
            reply("done"),
            {"messages": [{"role": "system", "content": "s"}, question, call, result]},
            reply("bye"),
        ]
    )
    made_up = "[2].messages[2].function_call"
    assert got.messages[2:] == [
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {"id": made_up, "type": "function", "function": {"name": "f", "arguments": "{}"}}
            ],
        },
        {"role": "tool", "content": "r", "tool_call_id": made_up},
        {"role": "assistant", "content": "bye"},
    ]
    assert [(n.where, n.what) for n in got.notes] == [("[1].choices[0]", "message of call [0]")]


# --------------------------------------------------------------------------- real recordings


def test_groq_cassette_error_body_is_a_located_note_and_reasoning_is_noted() -> None:
    """A Groq 400 {"error": ...} among the recorded exchanges made the whole file unreadable
    (with the error pointing at [0]); Groq's 'reasoning' was dropped with no note."""
    got = load("groq_tool_error_cassette.json", "openai-chat")
    bad, good = "pyd_ai_445dbde6c4764cafb5782bb928ef6c2c", "fc_311ba17b-89f9-48d3-8fd9-7e74a1264855"
    assert [(m["role"], m.get("tool_call_id") or [c["id"] for c in m.get("tool_calls", [])])
            for m in got.messages] == [
        ("system", []), ("user", []), ("assistant", [bad]), ("tool", bad),
        ("assistant", [good]), ("tool", good), ("assistant", []),
    ]  # fmt: skip
    assert got.messages[-1]["content"] == (
        "The first call failed due to missing and extra parameters, as expected. The second "
        'call succeeded and returned: "Something with name: test".'
    )
    assert [(n.where, n.what) for n in got.notes] == [
        ("[1]", "error response"),
        ("[5].choices[0].message.reasoning", "reasoning"),
        ("[3].choices[0]", "message of call [2]"),
        ("[3].choices[0].message.reasoning", "reasoning"),
    ]
    assert json.loads(got.notes[0].content)["code"] == "tool_use_failed"
    assert got.notes[1].content.startswith("We need to respond to user request.")


def test_an_item_that_is_no_exchange_is_located_where_it_is() -> None:
    """Among request and response bodies, the odd one out is named at its own index."""
    document = [{"messages": [{"role": "user", "content": "q"}]}, {"oops": 1}]
    with pytest.raises(ConversationFormatError) as info:
        parse_conversation(json.dumps(document))
    assert info.value.problems["openai-chat"] == (
        "[1]: neither a request ('messages'), a response ('choices') nor an error body ('error')"
    )


def test_deepseek_reasoning_content_is_a_note_with_its_text() -> None:
    got = load("deepseek_reasoning_cassette.json", "openai-chat")
    assert [m["role"] for m in got.messages] == ["user", "assistant"]
    assert got.messages[1]["content"].startswith("Crossing the street safely involves")
    assert [(n.where, n.what, n.why) for n in got.notes] == [
        ("[1].choices[0].message.reasoning_content", "reasoning",
         "model reasoning is not a conversation message"),
    ]  # fmt: skip
    assert got.notes[0].content.startswith("Okay, the user is asking how to cross the street.")


def test_a_thinking_part_in_chat_content_is_a_reasoning_note() -> None:
    """Mistral puts its reasoning in the content as a 'thinking' part: a note, not a marker."""
    thinking = {"type": "thinking", "thinking": [{"type": "text", "text": "hmm"}]}
    document = [
        {"role": "user", "content": "q"},
        {"role": "assistant", "content": [thinking, {"type": "text", "text": "a"}]},
    ]
    got = parse_conversation(json.dumps(document))
    assert got.format == "openai-chat"
    assert got.messages[1] == {"role": "assistant", "content": "a"}
    assert [(n.where, n.what, n.unknown) for n in got.notes] == [
        ("[1].content[0]", "thinking part", False)
    ]


def test_a_message_with_an_anthropic_tool_block_is_not_claimed_by_chat() -> None:
    block = {"type": "tool_use", "id": "t1", "name": "f", "input": {}}
    verdict = REGISTRY[FORMATS.index("openai-chat")].claims(
        [{"role": "assistant", "content": [block]}]
    )
    assert str(verdict) == "[0].content[0]: a 'tool_use' block is Anthropic's, not Chat's"


def test_mistral_cassette_thinking_chunks_are_notes_of_their_text() -> None:
    """pydantic-ai's Mistral cassette (``sample_data/fresh/``, source in its SOURCES.md:
    ``tests/models/cassettes/test_mistral/test_mistral_model_thinking_part.yaml``). Mistral's
    ``thinking`` chunk holds a list of text chunks (``{"type": "thinking", "thinking":
    [{"type": "text", "text": ...}]}``, ``ThinkChunk`` in mistralai/client-ts
    ``docs/models/components/thinkchunk.md``); Anthropic's thinking
    block holds a string and a signature. Taken for Anthropic's, the file was refused. The
    note holds the thinking text (the chunks' texts joined), not the chunk's JSON."""
    from pathlib import Path

    from flowdrop_core.importers import load_conversation

    path = Path(__file__).resolve().parents[2] / "sample_data/fresh"
    path = path / "cassette_mistral_mistral_model_thinking_part.json"
    bodies = json.loads(path.read_text(encoding="utf-8"))
    got = load_conversation(path)
    assert got.format == "openai-chat"
    reply = bodies[1]["choices"][0]["message"]["content"]
    assert [part["type"] for part in reply] == ["thinking", "text"]
    assert [m["role"] for m in got.messages] == ["user", "assistant", "user", "assistant"]
    assert got.messages[3] == {"role": "assistant", "content": reply[1]["text"]}
    assert [(n.where, n.what, n.unknown) for n in got.notes] == [
        ("[0].messages[1].content[0]", "thinking part", False),
        ("[1].choices[0].message.content[0]", "thinking part", False),
    ]
    thinking = "\n".join(chunk["text"] for chunk in reply[0]["thinking"])
    assert got.notes[1].content == thinking  # the thinking text, not the chunk's JSON
    sent = bodies[0]["messages"][1]["content"][0]["thinking"]
    assert got.notes[0].content == "\n".join(chunk["text"] for chunk in sent)


# -- the fast paths for the commonest message give what the full checks give --------

_ROLE = st.sampled_from(["system", "user", "assistant", "tool", "function", "developer", "x", 3])
_CALL = st.fixed_dictionaries(
    {"id": st.sampled_from(["c1", "c2", "", " c3 ", 0]), "type": st.just("function")},
    optional={
        "function": st.fixed_dictionaries(
            {"name": st.sampled_from(["f", "g"])},
            optional={"arguments": st.sampled_from(["{}", '{"a": 1}', {"a": 1}])},
        )
    },
)
_MESSAGE = st.fixed_dictionaries(
    {"role": _ROLE},
    optional={
        "content": st.one_of(
            st.none(),
            st.text(max_size=8),
            st.integers(),
            st.sampled_from(
                [
                    [{"type": "text", "text": "hi"}],
                    [{"type": "tool_result", "content": "r"}],  # Anthropic's, not Chat's
                    [{"text": "a part without type"}],
                ]
            ),
        ),
        "tool_calls": st.one_of(st.none(), st.lists(_CALL, max_size=2), st.just("x")),
        "tool_call_id": st.sampled_from(["c1", "", 7]),
        "name": st.sampled_from(["f", "g"]),
    },
)


def _chat_read(message: dict[str, Any]) -> tuple[Any, list[Any], list[Any]]:
    """``chat_message``'s result (or problem), notes and opened calls, for one message."""
    out, pending = Out(), PendingCalls()
    try:
        got: Any = chat_message(message, "[0]", out, pending)
    except Problem as problem:
        got = ("problem", problem.where, problem.what)
    return got, out.notes, list(pending._open)


@given(_MESSAGE)
@settings(max_examples=300, deadline=None)
def test_the_plain_message_path_reads_as_the_full_one(message: dict[str, Any]) -> None:
    # A ``metadata`` key (null: no metadata) sends the same message down the full path.
    assert _chat_read(message) == _chat_read({**message, "metadata": None})


@given(_MESSAGE)
@settings(max_examples=300, deadline=None)
def test_a_plain_message_is_one_the_claim_check_passes(message: dict[str, Any]) -> None:
    if plain_message(message):
        assert message_miss(message, "[0]") is None


def test_a_request_and_its_response_in_one_object_are_one_conversation() -> None:
    """An object holding a request's ``messages`` and its response's ``choices`` (a logged
    call) is the request's messages then the reply, each located."""
    document = {
        "messages": [{"role": "user", "content": "q"}],
        "choices": [{"message": {"role": "assistant", "content": "a"}}],
    }
    assert openai_chat.claims(document) == Claim("a request and its response")
    got = parse_conversation(json.dumps(document), source_name="call.json")
    assert got.format == "openai-chat"
    assert got.messages == [
        {"role": "user", "content": "q"},
        {"role": "assistant", "content": "a"},
    ]
    assert got.origins == ["messages[0]", "choices[0]"]
    assert got.notes == []


@pytest.mark.parametrize(
    ("document", "where", "what"),
    [
        ({"choices": [{"text": "x"}]}, "choices[0]", "missing 'message'"),
        ({"messages": [{"role": "user"}], "choices": [{"message": {"role": "assistant"}}]},
         "messages[0]", "no 'content', 'tool_calls' or 'tool_call_id'"),
    ],
)  # fmt: skip
def test_what_the_response_signature_misses(document: Any, where: str, what: str) -> None:
    missed = openai_chat.claims(document)
    assert isinstance(missed, Miss)
    assert (missed.where, missed.what) == (where, what)


@pytest.mark.parametrize(
    ("document", "got"),
    [
        ({"messages": 5}, "number"),
        ({"messages": {"a": 1}, "choices": [{"message": {"role": "assistant", "content": "a"}}]},
         "object"),
    ],
)  # fmt: skip
def test_messages_that_are_not_a_list_are_located(document: Any, got: str) -> None:
    with pytest.raises(ConversationFormatError) as info:
        parse_conversation(json.dumps(document), format="openai-chat", source_name="c.json")
    assert (
        str(info.value) == f"c.json is not valid openai-chat: messages: expected a list, got {got}"
    )


def test_a_request_among_exchanges_with_a_bad_message_is_missed_there() -> None:
    exchanges = [
        {"messages": [{"role": "user"}]},
        {"choices": [{"message": {"role": "assistant", "content": "a"}}]},
    ]
    assert openai_chat.claims(exchanges) == Miss(
        "[0].messages[0]", "no 'content', 'tool_calls' or 'tool_call_id'", 3
    )
