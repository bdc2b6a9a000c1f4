"""Importers (issue 4, item 2): each format, origins, detection, turns and exact error text."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from typing import Any

import pytest

from flowdrop_core.importers import (
    FORMATS,
    REGISTRY,
    ConversationFormatError,
    group_turns,
    load_conversation,
    loads_or_problem,
    parse_conversation,
)

JSON_FORMATS = (
    "openai-chat, openai-responses, responses-log, cohere, anthropic, otel-genai, "
    "openinference, vercel-ai, pydantic-ai, gemini, bedrock, langchain, langfuse, xlam, "
    "hermes, sharegpt, scenario"
)
SAMPLES = Path(__file__).resolve().parents[2] / "sample_data" / "imports"


def call(call_id: Any, name: str, arguments: str = "{}") -> dict[str, Any]:
    """An expected tool call in OpenAI Chat shape."""
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}


def error_of(text: str, **kwargs: Any) -> str:
    with pytest.raises(ConversationFormatError) as info:
        parse_conversation(text, source_name="rec.json", **kwargs)
    return str(info.value)


# --------------------------------------------------------------------------- one inline example per format


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
            "tool_calls": [call("call_1", "get_weather", '{"city":"Oslo"}')],
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
        {"role": "assistant", "content": "", "tool_calls": [call("c1", "search")]},
        {
            "role": "tool",
            "content": "Tool call was interrupted; no result.",
            "tool_call_id": "c1",
            "metadata": {"healed": True},
        },
    ]
    assert got.origins == ["[0]", "[1]"]


def test_openai_responses_folds_consecutive_calls() -> None:
    text = json.dumps(
        {
            "instructions": "be brief",
            "input": [
                {"role": "user", "content": "weather and news?"},
                {"type": "reasoning", "id": "rs_1", "summary": []},
                {"type": "function_call", "call_id": "c1", "name": "weather", "arguments": "{}"},
                {"type": "function_call", "call_id": "c2", "name": "news", "arguments": {"q": 1}},
                {"type": "function_call_output", "call_id": "c1", "output": "sunny"},
                {"type": "function_call_output", "call_id": "c2", "output": "quiet"},
            ],
            "output": [
                {
                    "type": "message",
                    "role": "assistant",
                    "content": [
                        {"type": "output_text", "text": "Sunny", "annotations": []},
                        {"type": "output_text", "text": "and quiet."},
                    ],
                }
            ],
        }
    )
    got = parse_conversation(text)
    assert got.format == "openai-responses"
    assert got.messages == [
        {"role": "system", "content": "be brief"},
        {"role": "user", "content": "weather and news?"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [call("c1", "weather"), call("c2", "news", '{"q": 1}')],
        },
        {"role": "tool", "content": "sunny", "tool_call_id": "c1"},
        {"role": "tool", "content": "quiet", "tool_call_id": "c2"},
        {"role": "assistant", "content": "Sunny\nand quiet."},
    ]
    assert got.origins == [
        "instructions",
        "input[0]",
        "input[2]+input[3]",
        "input[4]",
        "input[5]",
        "output[0]",
    ]
    assert got.turns == [[0], [1, 2, 3, 4, 5]]


def test_anthropic_blocks_become_flat_messages() -> None:
    text = json.dumps(
        {
            "system": [{"type": "text", "text": "be brief"}],
            "messages": [
                {"role": "user", "content": "weather?"},
                {
                    "role": "assistant",
                    "content": [
                        {"type": "thinking", "thinking": "hmm", "signature": "x"},
                        {
                            "type": "tool_use",
                            "id": "tu_1",
                            "name": "weather",
                            "input": {"c": "Oslo"},
                        },
                        {"type": "tool_use", "id": "tu_2", "name": "news", "input": {}},
                    ],
                },
                {
                    "role": "user",
                    "content": [
                        {"type": "tool_result", "tool_use_id": "tu_1", "content": "cold"},
                        {
                            "type": "tool_result",
                            "tool_use_id": "tu_2",
                            "content": [{"type": "text", "text": "timeout"}],
                            "is_error": True,
                        },
                        {"type": "text", "text": "and tomorrow?"},
                    ],
                },
                {"role": "assistant", "content": [{"type": "text", "text": "Colder."}]},
            ],
        }
    )
    got = parse_conversation(text)
    assert got.format == "anthropic"
    assert got.messages == [
        {"role": "system", "content": "be brief"},
        {"role": "user", "content": "weather?"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [call("tu_1", "weather", '{"c": "Oslo"}'), call("tu_2", "news")],
        },
        {"role": "tool", "content": "cold", "tool_call_id": "tu_1"},
        {"role": "tool", "content": "[error] timeout", "tool_call_id": "tu_2"},
        {"role": "user", "content": "and tomorrow?"},
        {"role": "assistant", "content": "Colder."},
    ]
    assert got.origins == [
        "system",
        "messages[0]",
        "messages[1]",
        "messages[2].content[0]",
        "messages[2].content[1]",
        "messages[2]",
        "messages[3]",
    ]
    # The tool results close the turn in progress; the user's text starts the next one.
    assert got.turns == [[0], [1, 2, 3, 4], [5, 6]]


def test_langchain_messages_to_dict() -> None:
    text = json.dumps(
        [
            {"type": "system", "data": {"content": "be brief", "type": "system"}},
            {"type": "human", "data": {"content": "weather?", "type": "human", "id": "h1"}},
            {
                "type": "ai",
                "data": {
                    "content": "",
                    "tool_calls": [
                        {"name": "weather", "args": {"c": "Oslo"}, "id": "c1", "type": "tool_call"}
                    ],
                },
            },
            {
                "type": "tool",
                "data": {"content": "boom", "tool_call_id": "c1", "status": "error"},
            },
            {
                "type": "ai",
                "data": {
                    "content": "retrying",
                    "additional_kwargs": {
                        "tool_calls": [
                            {
                                "id": "c2",
                                "type": "function",
                                "function": {"name": "weather", "arguments": '{"c":"Oslo"}'},
                            }
                        ]
                    },
                },
            },
            {"type": "tool", "data": {"content": "cold", "tool_call_id": "c2"}},
        ]
    )
    got = parse_conversation(text)
    assert got.format == "langchain"
    assert got.messages == [
        {"role": "system", "content": "be brief"},
        {"role": "user", "content": "weather?"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [call("c1", "weather", '{"c": "Oslo"}')],
        },
        {"role": "tool", "content": "[error] boom", "tool_call_id": "c1"},
        {
            "role": "assistant",
            "content": "retrying",
            "tool_calls": [call("c2", "weather", '{"c":"Oslo"}')],
        },
        {"role": "tool", "content": "cold", "tool_call_id": "c2"},
    ]
    assert got.origins == ["[0]", "[1]", "[2]", "[3]", "[4]", "[5]"]


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
        {"role": "assistant", "content": "", "tool_calls": [call("c1", "search")]},
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


def test_jsonl_messages_and_conversations_per_line() -> None:
    lines = [
        json.dumps({"role": "user", "content": "hi", "timestamp": "t1"}),
        "",
        json.dumps({"type": "function_call", "call_id": "c1", "name": "f", "arguments": "{}"}),
        json.dumps({"type": "function_call", "call_id": "c2", "name": "g", "arguments": "{}"}),
        json.dumps({"type": "function_call_output", "call_id": "c1", "output": "one"}),
        "   ",
        json.dumps({"messages": [{"role": "user", "content": "next"}]}),
        json.dumps([{"role": "assistant", "content": "line\u2028separator"}]),
    ]
    got = parse_conversation("\n".join(lines) + "\n")
    assert got.format == "jsonl"
    assert got.messages == [
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": None, "tool_calls": [call("c1", "f"), call("c2", "g")]},
        {"role": "tool", "content": "one", "tool_call_id": "c1"},
        {"role": "user", "content": "next"},
        {"role": "assistant", "content": "line\u2028separator"},
    ]
    assert got.origins == [
        "line 1",
        "line 3+line 4",
        "line 5",
        "line 7: messages[0]",
        "line 8: [0]",
    ]
    assert got.turns == [[0, 1, 2], [3, 4]]


# --------------------------------------------------------------------------- the sample files


def _refired_and_dangling(messages: list[dict[str, Any]]) -> tuple[set[str], set[str]]:
    declared: list[str] = [c["id"] for m in messages for c in m.get("tool_calls", [])]
    answered = [m["tool_call_id"] for m in messages if m["role"] == "tool"]
    refired = {cid for cid in answered if answered.count(cid) > 1}
    dangling = set(declared) - set(answered)
    return refired, dangling


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


# --------------------------------------------------------------------------- malformed files: exact text


def test_truncated_json() -> None:
    text = '{"messages": [\n  {"role": "user", "content": "hi"},\n  {"role": "assistant", "content": "he'
    assert error_of(text) == (
        "no known format matched rec.json:\n"
        f"- {JSON_FORMATS}: not JSON (Unterminated string starting at line 3, column 36)\n"
        "- claude-code, codex, jsonl: line 1: not JSON (Expecting value at column 15)\n"
        f"- chatml: {NO_CHATML}"
    )


def test_jsonl_line_that_is_not_json() -> None:
    text = (
        '{"role": "user", "content": "hi"}\n'
        '{"role": "assistant", "content": "yo"}\n'
        '{"role": "tool" "content": "x"}\n'
    )
    assert error_of(text) == (
        "no known format matched rec.json:\n"
        f"- {JSON_FORMATS}: not JSON (Extra data at line 2, column 1)\n"
        "- claude-code: line 1: event without a string 'type'\n"
        f"- chatml: {NO_CHATML}\n"
        "- codex, jsonl: line 3: not JSON (Expecting ',' delimiter at column 17)"
    )


#: What the ChatML text reader says of a file with no ``<|im_start|>role`` block.
NO_CHATML = "no <|im_start|>role blocks"
HUGE_INT = "9" * 5000  # past Python's 4300-digit limit for int("...")
DEEP = "[" * 100_000  # past the json module's recursion limit


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
    assert error_of(text) == (
        "no known format matched rec.json:\n"
        f"- {JSON_FORMATS}: {json_problem}\n"
        f"- claude-code, codex, jsonl: {jsonl_problem}\n"
        f"- chatml: {NO_CHATML}"
    )
    assert error_of(text, format="anthropic") == f"rec.json is not valid anthropic: {json_problem}"
    with pytest.raises(ConversationFormatError) as info:
        load_conversation(text.encode(), format="jsonl", name="big.json")
    assert str(info.value) == f"big.json is not valid jsonl: {jsonl_problem}"


@pytest.mark.parametrize(
    ("line", "problem"),
    [
        (
            '{"role": "user", "content": ' + HUGE_INT + "}",
            "not JSON (integer too long: more than 4300 digits)",
        ),
        (DEEP, "not JSON (nested too deeply): more than 100 levels at line 1, column 101"),
    ],
)
def test_jsonl_line_refused_without_a_decode_error_names_its_line(line: str, problem: str) -> None:
    text = '{"role": "user", "content": "hi"}\n' + line + "\n"
    assert error_of(text, format="jsonl") == (f"rec.json is not valid jsonl: line 2: {problem}")


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
    assert problems == (
        "no known format matched rec.json:\n"
        "- openai-chat, anthropic: messages[2]: missing 'role'\n"
        "- openai-responses: no 'input' or 'output' list at the top level\n"
        "- responses-log: expected a list of Responses request bodies and response objects, "
        "got object\n"
        "- cohere: expected a Cohere v2 chat request, response or recording, got object\n"
        "- otel-genai: expected GenAI messages, a span with gen_ai.input.messages or an OTLP "
        "export, got object\n"
        "- openinference: no span carries llm.input_messages or llm.output_messages\n"
        "- vercel-ai: messages: neither UIMessages (parts with AI SDK types) nor model messages "
        "(content with tool-call / tool-result parts)\n"
        "- pydantic-ai: messages[0]: 'kind' must be 'request' or 'response', got None\n"
        "- gemini: no 'contents' or 'candidates' at the top level\n"
        "- bedrock: messages[0].content: expected a list of content blocks, got string\n"
        "- langchain: messages[2]: missing 'type'\n"
        "- langfuse: expected a trace with 'observations' or a list of observations, got object\n"
        "- xlam: expected an xLAM row {'query', 'answers'}, got object\n"
        "- hermes: expected ShareGPT or chat turns with <tool_call> / <tool_response> tags\n"
        "- sharegpt: no 'conversations' list\n"
        "- scenario: not a scenario (no 'steps')\n"
        "- claude-code: line 1: event without a string 'type'\n"
        f"- chatml: {NO_CHATML}\n"
        "- codex: line 1: not a Codex rollout: every line must be {'type', 'payload'}, "
        "with a session_meta or response_item line\n"
        "- jsonl: line 1: messages[2]: missing 'role' (read as openai-chat)"
    )
    # A JSON file of an unknown shape also lists what each format expects.
    assert shapes.splitlines() == [f"- {f.name}: {f.expects}" for f in REGISTRY]


def test_jsonl_message_with_no_role_names_its_line() -> None:
    text = '{"role": "user", "content": "hi"}\n\n{"content": "lost"}\n'
    assert error_of(text, format="jsonl") == (
        "rec.json is not valid jsonl: line 3: missing 'role' (read as openai-chat)"
    )


ORPHAN = json.dumps(
    {
        "messages": [
            {"role": "user", "content": "hi"},
            {"role": "assistant", "content": None, "tool_calls": [call("a", "f")]},
            {"role": "tool", "tool_call_id": "a", "content": "ok"},
            {"role": "tool", "tool_call_id": "x", "content": "from nowhere"},
        ]
    }
)


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
        {"role": "assistant", "content": None, "tool_calls": [call("a", "f")]},
    ]
    assert error_of(json.dumps(ahead), strict=True) == (
        "rec.json: [0]: tool result for call 'a' whose call never appears before it"
    )
    idless = [
        {"role": "assistant", "content": None, "tool_calls": [call("0", "f")]},
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
        "openinference", "vercel-ai", "pydantic-ai", "gemini", "bedrock", "langchain",
        "langfuse", "xlam", "hermes", "sharegpt", "scenario", "claude-code", "chatml", "codex",
        "jsonl",
    )  # fmt: skip
    assert error_of(" \n\n") == "rec.json is empty"


def test_problems_are_available_per_format() -> None:
    with pytest.raises(ConversationFormatError) as info:
        parse_conversation('{"messages": [{"content": "x"}]}')
    assert list(info.value.problems) == list(FORMATS)
    assert info.value.problems["openai-chat"] == "messages[0]: missing 'role'"


@pytest.mark.parametrize(
    ("document", "problem"),
    [
        ([{"role": "user", "content": 3}], "[0].content: expected a string, a list of content parts or null, got number"),
        ([{"role": "operator", "content": "x"}], "[0]: unknown role 'operator' (expected system or user or assistant or tool or function)"),
        ([{"role": "user", "content": [{"type": {"x": 1}}]}], "[0].content[0]: content part without a string 'type'"),
        ([{"role": {"x": 1}, "content": "x"}], "[0]: unknown role {'x': 1} (expected system or user or assistant or tool or function)"),
        ([{"role": "user", "content": "x", "tool_calls": [call("a", "f")]}], "[0]: 'tool_calls' on a user message; only assistant turns call tools"),
        ({"system": "s", "messages": []}, "system: a top-level system prompt is Anthropic's layout, not OpenAI Chat's"),
        ("hello", "expected a list of messages or an object with 'messages', got string"),
    ],
)  # fmt: skip
def test_openai_chat_problems(document: Any, problem: str) -> None:
    assert error_of(json.dumps(document), format="openai-chat") == (
        f"rec.json is not valid openai-chat: {problem}"
    )


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


# --------------------------------------------------------------------------- turns


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


# --------------------------------------------------------------------------- the long conversation


def _long_generator() -> Any:
    path = Path(__file__).resolve().parents[2] / "scripts" / "gen_long_conversation.py"
    spec = importlib.util.spec_from_file_location("gen_long_conversation", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


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
