"""Shared helpers of the importer tests (tests/importers/): documents, readers, views."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from flowdrop_core.importers import (
    ConversationFormatError,
    ImportedConversation,
    load_conversation,
    parse_conversation,
)

JSON_FORMATS = (
    "openai-chat, openai-responses, responses-log, cohere, anthropic, otel-genai, "
    "openinference, otel-legacy, vercel-ai, pydantic-ai, gemini, bedrock, api-recording, langchain, "
    "langfuse, xlam, "
    "hermes, sharegpt, scenario"
)
#: What the ChatML reader says of text with no ``<|im_start|>role`` block.
NO_CHATML = "no <|im_start|>role block"


SAMPLES = Path(__file__).resolve().parents[1] / "sample_data" / "imports"


def call_main(call_id: Any, name: str, arguments: str = "{}") -> dict[str, Any]:
    """An expected tool call in OpenAI Chat shape."""
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}


def call_fmt(call_id: Any, name: str, arguments: str = "{}") -> dict[str, Any]:
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}


def call_sample(call_id: Any, name: str, arguments: str) -> dict[str, Any]:
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}


def call_claude_code(call_id: str) -> dict[str, Any]:
    return {"id": call_id, "type": "function", "function": {"name": "Bash", "arguments": "{}"}}


def call_gemini(call_id: str, name: str = "f", arguments: str = "{}") -> dict[str, Any]:
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}


def call_openai_responses(call_id: str, name: str, arguments: str = "{}") -> dict[str, Any]:
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}


def error_of(text: str, **kwargs: Any) -> str:
    with pytest.raises(ConversationFormatError) as info:
        parse_conversation(text, source_name="rec.json", **kwargs)
    return str(info.value)


def _refired_and_dangling(messages: list[dict[str, Any]]) -> tuple[set[str], set[str]]:
    declared: list[str] = [c["id"] for m in messages for c in m.get("tool_calls", [])]
    answered = [m["tool_call_id"] for m in messages if m["role"] == "tool"]
    refired = {cid for cid in answered if answered.count(cid) > 1}
    dangling = set(declared) - set(answered)
    return refired, dangling


NO_SESSION = "line 1: no line is a 'user' or 'assistant' event with a 'message' object"


HUGE_INT = "9" * 5000  # past Python's 4300-digit limit for int("...")


DEEP = "[" * 100_000  # past the json module's recursion limit


ORPHAN = json.dumps(
    {
        "messages": [
            {"role": "user", "content": "hi"},
            {"role": "assistant", "content": None, "tool_calls": [call_main("a", "f")]},
            {"role": "tool", "tool_call_id": "a", "content": "ok"},
            {"role": "tool", "tool_call_id": "x", "content": "from nowhere"},
        ]
    }
)


def _long_generator() -> Any:
    path = Path(__file__).resolve().parents[1] / "scripts" / "gen_long_conversation.py"
    spec = importlib.util.spec_from_file_location("gen_long_conversation", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def imported_edge(document: Any, fmt: str) -> ImportedConversation:
    return parse_conversation(json.dumps(document), format=fmt)


def imported_fmt(document: Any, fmt: str | None = None) -> ImportedConversation:
    return parse_conversation(json.dumps(document), format=fmt)


def imported_anthropic(document: Any) -> ImportedConversation:
    return parse_conversation(json.dumps(document), format="anthropic")


def imported_bedrock(document: Any) -> ImportedConversation:
    return parse_conversation(json.dumps(document), format="bedrock")


def imported_gemini(document: Any) -> ImportedConversation:
    return parse_conversation(json.dumps(document), format="gemini")


def imported_langchain(document: Any, fmt: str | None = "langchain") -> ImportedConversation:
    return parse_conversation(json.dumps(document), format=fmt)


def imported_langfuse(document: Any) -> ImportedConversation:
    return parse_conversation(json.dumps(document), format="langfuse")


def imported_openai_chat(document: Any) -> ImportedConversation:
    return parse_conversation(json.dumps(document), format="openai-chat")


def rows_edge(got: ImportedConversation) -> list[tuple[Any, ...]]:
    return [
        (m.get("role"), m.get("content"), m.get("tool_calls"), m.get("tool_call_id"))
        for m in got.messages
    ]


def rows_anthropic(got: ImportedConversation) -> list[tuple[Any, ...]]:
    return [(m.get("role"), m.get("content"), got.origins[i]) for i, m in enumerate(got.messages)]


def rows_bedrock(got: ImportedConversation) -> list[tuple[Any, ...]]:
    return [(m.get("role"), m.get("content"), got.origins[i]) for i, m in enumerate(got.messages)]


def notes_edge(got: ImportedConversation) -> list[tuple[str, str, str]]:
    return [(n.where, n.what, n.why) for n in got.notes]


def notes_fmt(got: ImportedConversation) -> list[tuple[str, str, str]]:
    return [(n.where, n.what, n.why) for n in got.notes]


def notes_sample(got: ImportedConversation) -> list[tuple[str, str]]:
    return [(n.where, n.what) for n in got.notes]


def notes_anthropic(got: ImportedConversation) -> list[tuple[str, str, str, str, bool]]:
    return [(n.where, n.what, n.why, n.content, n.unknown) for n in got.notes]


def notes_gemini(got: ImportedConversation) -> list[tuple[str, str, str, bool]]:
    return [(n.where, n.what, n.content, n.unknown) for n in got.notes]


def error_edge(document: Any, fmt: str) -> str:
    with pytest.raises(ConversationFormatError) as info:
        imported_edge(document, fmt)
    return str(info.value)


def error_fmt(document: Any, fmt: str | None = None) -> str:
    with pytest.raises(ConversationFormatError) as info:
        imported_fmt(document, fmt)
    return str(info.value)


def error_anthropic(document: Any) -> str:
    with pytest.raises(ConversationFormatError) as info:
        imported_anthropic(document)
    return str(info.value)


def error_langchain(document: Any) -> str:
    with pytest.raises(ConversationFormatError) as info:
        imported_langchain(document)
    return str(info.value).removeprefix("<text> is not valid langchain: ")


def error_openai_chat(document: Any) -> str:
    with pytest.raises(ConversationFormatError) as info:
        imported_openai_chat(document)
    return str(info.value).removeprefix("<text> is not valid openai-chat: ")


def use_edge(call_id: str = "t1") -> dict[str, Any]:
    return {"toolUse": {"toolUseId": call_id, "name": "f", "input": {"a": 1}}}


def use_claude_code(call_id: str) -> dict[str, Any]:
    return {"type": "tool_use", "id": call_id, "name": "Bash", "input": {}}


CALL = {"id": "t1", "type": "function", "function": {"name": "f", "arguments": '{"a": 1}'}}


BEDROCK_ERRORS: list[tuple[dict[str, Any], str]] = [
    ({"system": "x", "messages": []}, "system: expected a list of system blocks, got string"),
    ({"system": [5], "messages": []}, "system[0]: expected a {'text': ...} block"),
    ({"messages": "x"}, "messages: expected a list, got string"),
    ({"output": {"nomessage": 1}}, "output: missing 'message'"),
    (
        {"messages": [{"role": "user", "content": [5]}]},
        "messages[0].content[0]: expected a content block object, got number",
    ),
    (
        {"messages": [{"role": "user", "content": [{"type": "text", "text": "a"}]}]},
        "messages[0].content[0]: a block with 'type' is not a Converse block",
    ),
    (
        {"messages": [{"role": "assistant", "content": [{"toolUse": {"name": "f"}}]}]},
        "messages[0].content[0].toolUse: toolUse without 'toolUseId'",
    ),
    (
        {"messages": [{"role": "user", "content": [use_edge()]}]},
        "messages[0]: toolUse in a user message; only the assistant calls tools",
    ),
    (
        {
            "messages": [
                {"role": "assistant", "content": [use_edge()]},
                {"role": "user", "content": [{"toolResult": {"content": [{"text": "r"}]}}]},
            ]
        },
        "messages[1].content[0].toolResult: toolResult without 'toolUseId'",
    ),
    (
        {
            "messages": [
                {"role": "assistant", "content": [use_edge()]},
                {"role": "user", "content": [{"toolResult": {"toolUseId": "t1", "content": "x"}}]},
            ]
        },
        "messages[1].content[0].toolResult.content: expected a list, got string",
    ),
]


def generation(**fields: Any) -> dict[str, Any]:
    return {"id": "g", "type": "GENERATION", **fields}


USER_PARTS = [{"role": "user", "parts": [{"type": "text", "content": "hi"}]}]


def kv_edge(key: str, value: dict[str, Any]) -> dict[str, Any]:
    return {"key": key, "value": value}


def kv_otel(key: str, value: Any) -> dict[str, Any]:
    return {"key": key, "value": value}


PREFIX = "<text> is not valid otel-genai: "


OTEL_ERRORS: list[tuple[Any, str]] = [
    (
        5,
        "expected GenAI messages, a span with gen_ai.input.messages or an OTLP export, got number",
    ),
    ({"resourceSpans": "x"}, "resourceSpans: expected a list, got string"),
    ({"resourceSpans": [{"scopeSpans": "x"}]}, "resourceSpans[0].scopeSpans: expected a list"),
    (
        {"resourceSpans": [{"scopeSpans": [{"spans": "x"}]}]},
        "resourceSpans[0].scopeSpans[0].spans: expected a list",
    ),
    (
        [{"attributes": {"other": 1}}],
        "no span carries gen_ai.input.messages or gen_ai.output.messages",
    ),
    ([{"attributes": [5]}], "[0].attributes[0]: expected an attribute {'key', 'value'}"),
    (
        {"gen_ai.input.messages": "{bad"},
        "gen_ai.input.messages: not JSON "
        "(Expecting property name enclosed in double quotes at line 1, column 2)",
    ),
    (
        {"gen_ai.system_instructions": {"a": 1}, "gen_ai.input.messages": USER_PARTS},
        "gen_ai.system_instructions: expected a list of parts, got object",
    ),
    ([{"role": "user"}], "[0]: missing 'parts'"),
    ([{"role": "user", "parts": "x"}], "[0].parts: expected a list, got string"),
    ([{"role": "user", "parts": [5]}], "[0].parts[0]: expected a part object, got number"),
    ([{"role": "user", "parts": [{"content": "x"}]}], "[0].parts[0]: part without a string 'type'"),
    (
        [{"role": "user", "parts": [{"type": "text"}]}],
        "[0].parts[0]: text part without a string 'content'",
    ),
    (
        [{"role": "user", "parts": [{"type": "tool_call", "id": "c1", "name": "f"}]}],
        "[0]: tool_call part on a user message; only assistant turns call tools",
    ),
]


SHAREGPT_ERRORS: list[tuple[Any, str]] = [
    ({"conversations": "x"}, "conversations: expected a list, got string"),
    (
        {"conversations": [{"from": 5, "value": "x"}]},
        "conversations[0]: 'from' must be a string, got number",
    ),
    (
        {"conversations": [{"from": "human", "value": 5}]},
        "conversations[0].value: expected a string, got number",
    ),
    (
        {"conversations": [{"from": "bot", "value": "x"}]},
        "conversations[0]: unknown 'from' 'bot' "
        "(expected human, gpt, system, function_call or observation)",
    ),
    ({"system": ["be brief"], "conversations": []}, "system: expected a string, got list"),
    (
        [{"conversations": []}, {"system": 5, "conversations": []}],
        "[1].system: expected a string, got number",
    ),
    ("hello", "expected a record with 'conversations' or a list, got string"),
]


GEMINI_USER = {"role": "user", "parts": [{"text": "hi"}]}


GEMINI_ERRORS: list[tuple[Any, str]] = [
    ({"contents": 5}, "contents: expected a list, got number"),
    ({"contents": [GEMINI_USER], "candidates": "x"}, "candidates: expected a list, got string"),
    (
        {"contents": [GEMINI_USER], "candidates": [5]},
        "candidates[0]: expected a candidate with 'content'",
    ),
    (
        {"contents": [{"role": "user", "parts": [{"functionCall": {"name": "f", "args": {}}}]}]},
        "contents[0]: functionCall in a user content; only the model calls tools",
    ),
]


CHAT_ERRORS: list[tuple[Any, str]] = [
    ({"choices": "x"}, "choices: expected a list, got string"),
    ({"choices": [5]}, "choices[0]: expected a choice object with a 'message'"),
    (
        [{"role": "user", "content": 5}],
        "[0].content: expected a string, a list of content parts or null, got number",
    ),
    (
        [{"role": "user", "content": "x", "metadata": [1]}],
        "[0].metadata: expected an object, got list",
    ),
    (
        [{"role": "assistant", "content": None, "function_call": "x"}],
        "[0].function_call: expected a function_call object, got string",
    ),
    (
        [{"role": "assistant", "content": None, "tool_calls": [5]}],
        "[0].tool_calls[0]: expected a tool call object, got number",
    ),
    (
        [{"role": "assistant", "content": None, "tool_calls": "x"}],
        "[0].tool_calls: expected a list of tool calls, got string",
    ),
    (
        [{"role": "user", "content": [5]}],
        "[0].content[0]: expected a content part object, got number",
    ),
]


def tool_use(call_id: str = "t1") -> dict[str, Any]:
    return {"type": "tool_use", "id": call_id, "name": "f", "input": {}}


ANTHROPIC_ERRORS: list[tuple[Any, str]] = [
    (
        {"system": 5, "messages": [{"role": "user", "content": "hi"}]},
        "system: expected a string or a list of text blocks, got number",
    ),
    (
        {"messages": [{"role": "user", "content": [5]}]},
        "messages[0].content[0]: expected a content block object, got number",
    ),
    (
        {"messages": [{"role": "user", "content": [{"type": "text"}]}]},
        "messages[0].content[0]: text block without a string 'text'",
    ),
    (
        {"messages": [{"role": "assistant", "content": [{"type": "tool_use", "name": "f"}]}]},
        "messages[0].content[0]: tool_use block without 'id'",
    ),
    (
        {
            "messages": [
                {"role": "assistant", "content": [{"type": "tool_result", "tool_use_id": "x"}]}
            ]
        },
        "messages[0].content[0]: tool_result block in an assistant message",
    ),
    (
        {
            "messages": [
                {"role": "assistant", "content": [tool_use()]},
                {
                    "role": "user",
                    "content": [{"type": "tool_result", "tool_use_id": "t1", "content": 5}],
                },
            ]
        },
        "messages[1].content[0].content: expected a string or a list of blocks, got number",
    ),
]


LANGCHAIN_ERRORS: list[tuple[Any, str]] = [
    (
        [
            {
                "type": "ai",
                "content": "",
                "tool_calls": [{"id": "c1", "name": "search", "args": {}}],
            },
            {"role": "search", "content": 5},  # a JS tool result named by its tool
        ],
        "[1].content: expected a string, got number",
    ),
    (
        [{"role": "stranger", "content": "x"}],
        "[0]: unknown role 'stranger' (expected user, assistant, system or tool)",
    ),
    (
        [{"lc": 1, "type": "constructor", "id": ["x", "HumanMessage"], "kwargs": 5}],
        "[0].kwargs: expected an object, got number",
    ),
    (
        [{"type": "human", "content": 5}],
        "[0].content: expected a string or a list of content parts, got number",
    ),
    (
        [{"type": "ai", "content": "", "tool_calls": "x"}],
        "[0].tool_calls: expected a list, got string",
    ),
    (
        [{"type": "ai", "content": "", "additional_kwargs": {"tool_calls": "x"}}],
        "[0].additional_kwargs.tool_calls: expected a list, got string",
    ),
]


RESPONSES_CALL = {"type": "function_call", "call_id": "c1", "name": "f", "arguments": "{}"}


RESPONSES_ERRORS: list[tuple[Any, str]] = [
    ({"input": [{"type": "message", "content": "x"}]}, "input[0]: missing 'role'"),
    (
        {"input": [{"type": "function_call", "name": "f", "arguments": "{}"}]},
        "input[0]: function_call without 'call_id'",
    ),
    (
        {"input": [{"type": "function_call", "call_id": "c1", "arguments": "{}"}]},
        "input[0]: function_call without 'name'",
    ),
    (
        {"input": [RESPONSES_CALL, {"type": "function_call_output", "call_id": "c1"}]},
        "input[1]: function_call_output without 'output'",
    ),
]


SESSION_START = '{"type":"user","message":{"role":"user","content":"hi"}}\n'


OTEL_USER = {"role": "user", "parts": [{"type": "text", "content": "hi"}]}


GEMINI_MODEL = {"role": "model", "parts": [{"text": "yo"}]}


def load(name: str, fmt: str) -> ImportedConversation:
    """Import a sample, check it is detected as ``fmt`` and that forcing ``fmt`` agrees."""
    got = load_conversation(SAMPLES / name)
    assert got.format == fmt
    assert load_conversation(SAMPLES / name, format=fmt).messages == got.messages
    assert len(got.messages) == len(got.origins)
    return got


def raw(name: str) -> Any:
    return json.loads((SAMPLES / name).read_text(encoding="utf-8"))


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


USER_GEMINI = {"role": "user", "parts": [{"text": "weather?"}]}


USER_OTEL = {"role": "user", "parts": [{"type": "text", "content": "hi"}]}


def legacy_call(name: str) -> dict[str, Any]:
    """An AI message with a legacy ``additional_kwargs.function_call`` (no id in the source)."""
    return {
        "type": "ai",
        "content": "",
        "additional_kwargs": {"function_call": {"name": name, "arguments": "{}"}},
    }


def legacy_id(index: int) -> str:
    return f"[{index}].additional_kwargs.function_call"


def encoded(value: Any, times: int) -> Any:
    for _ in range(times):
        value = json.dumps(value)
    return value


QUESTION = {"messages": [{"role": "user", "content": "q"}]}


ASSISTANT = {"role": "assistant", "parts": [{"type": "text", "content": "yo"}]}


def request(*messages: dict[str, Any]) -> dict[str, Any]:
    return {"model": "gpt-4o", "messages": list(messages)}


def corpus_report() -> ModuleType:
    """``scripts/corpus_report.py`` loaded as a module (the fresh-corpus tests classify with it)."""
    module = sys.modules.get("corpus_report")
    if module is not None:
        return module
    root = Path(__file__).resolve().parents[1]
    spec = importlib.util.spec_from_file_location(
        "corpus_report", root / "scripts" / "corpus_report.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["corpus_report"] = module
    spec.loader.exec_module(module)
    return module
