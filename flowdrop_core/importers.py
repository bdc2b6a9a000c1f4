"""Importers: recorded conversations on disk -> provider-flat messages with origins.

The inspector replays what people actually have on disk (issue 4, item 2):
OpenAI Chat Completions messages, OpenAI Responses items, Anthropic Messages,
LangChain ``messages_to_dict`` output, scenario files and JSONL. Every format
is turned into the same provider-flat messages (OpenAI Chat shape)::

    {"role": ..., "content": str | None,
     "tool_calls": [{"id", "type": "function", "function": {"name", "arguments"}}],
     "tool_call_id": ...}

``tool_calls`` appears only on an assistant message that declares calls,
``tool_call_id`` only on a ``tool`` message that carried one. A stored buffer
row marked ``healed`` keeps ``"metadata": {"healed": true}`` so a placeholder
stays a placeholder. Every message keeps an *origin*: where it came from in
the file (``line 3``, ``messages[4]``, ``messages[4].content[1]``,
``input[2]+input[3]`` for folded Responses calls), so the inspector can point
back at the recording.

Importers read; they do not judge. Duplicate results, unanswered calls and
unusable ids are exactly what the inspector must show, so they are imported
as they are. The one exception is ``strict=True``, which rejects a tool result
whose call never appears before it (an orphan) or that carries no usable id,
naming its origin. See ``docs/scenario-format.md`` ("Recorded conversations").

Detection tries :data:`FORMATS` in order and takes the first that reads the
whole file; when none does, the error lists every format and the first
problem each one hit. A plain user/assistant text exchange is valid in several
formats; they all yield the same messages, and the first in the order wins.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from flowdrop_core.ids import usable_id
from flowdrop_core.messages import read_call_function, read_call_id
from flowdrop_core.scenario import (
    JSONProblem,
    Scenario,
    _json_type,
    _readable_errors,
    parse_json,
)

__all__ = [
    "ERROR_PREFIX",
    "FORMATS",
    "ConversationFormatError",
    "ImportedConversation",
    "group_turns",
    "load_conversation",
    "loads_or_problem",
    "parse_conversation",
]

#: Every format, in the order auto-detection tries them.
FORMATS: tuple[str, ...] = (
    "openai-chat",
    "openai-responses",
    "anthropic",
    "langchain",
    "scenario",
    "jsonl",
)

Message = dict[str, Any]


class ConversationFormatError(ValueError):
    """A recorded conversation that could not be imported.

    ``problems`` maps each format tried to the first problem it hit
    (``"messages[2]: missing 'role'"``); the message says the same for people.
    """

    def __init__(self, message: str, problems: dict[str, str] | None = None) -> None:
        self.problems = problems or {}
        super().__init__(message)


@dataclass(frozen=True, slots=True)
class ImportedConversation:
    """An imported conversation: provider-flat messages, where each came from, and turns.

    ``origins[i]`` locates ``messages[i]`` in the file. ``turns`` groups
    message indexes by recorded turn (see :func:`group_turns`), which is what
    a per-turn replay appends at once.
    """

    name: str
    format: str
    messages: list[Message]
    origins: list[str]
    turns: list[list[int]] = field(default_factory=list)


class _Problem(Exception):
    """The first problem a reader hit: where in the file, and what."""

    def __init__(self, where: str, what: str) -> None:
        super().__init__(f"{where}: {what}" if where else what)
        self.where = where
        self.what = what


# --------------------------------------------------------------------------- public API


def load_conversation(
    source: str | Path | bytes,
    format: str | None = None,
    name: str | None = None,
    *,
    strict: bool = False,
) -> ImportedConversation:
    """Import a recorded conversation from a file path (``str``/``Path``) or raw ``bytes``.

    ``name`` is used in origins' owner and error messages; it defaults to the
    path as given (``"<bytes>"`` for bytes). A missing file raises ``OSError``.
    """
    if isinstance(source, bytes):
        label = name or "<bytes>"
        raw = source
    else:
        label = name or str(source)
        raw = Path(source).read_bytes()
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise ConversationFormatError(
            f"{label}: not UTF-8 text ({exc.reason} at byte {exc.start})"
        ) from None
    return parse_conversation(text, format=format, source_name=label, strict=strict)


def parse_conversation(
    text: str,
    format: str | None = None,
    source_name: str = "<text>",
    *,
    strict: bool = False,
) -> ImportedConversation:
    """Import a recorded conversation from text, detecting the format unless ``format`` is given.

    Raises :class:`ConversationFormatError`: with ``format`` given, with that
    format's first problem only; otherwise listing every format tried and why
    it failed. ``strict`` additionally rejects orphan tool results.
    """
    if format is not None and format not in FORMATS:
        raise ConversationFormatError(
            f"unknown format {format!r}; known formats: {', '.join(FORMATS)}"
        )
    if not text.strip():
        raise ConversationFormatError(f"{source_name} is empty")
    candidates = (format,) if format else FORMATS
    document, json_problem = _load_json(text)
    problems: dict[str, str] = {}
    for candidate in candidates:
        try:
            if candidate == "jsonl":
                messages, origins = _read_jsonl(text)
            elif json_problem is not None:
                raise json_problem
            else:
                messages, origins = _READERS[candidate](document)
        except _Problem as problem:
            problems[candidate] = str(problem)
            continue
        if strict:
            try:
                _check_orphans(messages, origins)
            except _Problem as problem:
                raise ConversationFormatError(
                    f"{source_name}: {problem}", {candidate: str(problem)}
                ) from None
        return ImportedConversation(
            name=source_name,
            format=candidate,
            messages=messages,
            origins=origins,
            turns=group_turns(messages),
        )
    if format:
        raise ConversationFormatError(
            f"{source_name} is not valid {format}: {problems[format]}", problems
        )
    raise ConversationFormatError(_no_match_message(source_name, problems), problems)


def group_turns(messages: list[Message]) -> list[list[int]]:
    """Group message indexes by recorded turn, for per-turn replay.

    A ``user`` message starts a turn. ``system`` messages before anything else
    form their own first group. Every other message (assistant turns, tool
    results, a later system message) joins the turn in progress; if there is
    none yet (a recording that starts with an assistant or tool message), it
    starts one. So a tool result always travels with the assistant turn that
    precedes it, and healing (MEM-3) runs only when a real user turn arrives.
    """
    turns: list[list[int]] = []
    leading_system = True
    for index, message in enumerate(messages):
        role = message.get("role")
        if leading_system and role == "system":
            if not turns:
                turns.append([])
            turns[0].append(index)
            continue
        if role == "user" or not turns or leading_system:
            turns.append([index])
        else:
            turns[-1].append(index)
        leading_system = False
    return turns


# --------------------------------------------------------------------------- shared pieces


def loads_or_problem(text: str, *, column_only: bool = False) -> Any:
    """:func:`~flowdrop_core.scenario.parse_json`, failing as a :class:`ConversationFormatError`."""
    try:
        return parse_json(text, column_only=column_only)
    except JSONProblem as exc:
        problem = str(exc)
    raise ConversationFormatError(problem)  # outside the handler: no chained context


def _load_json(text: str) -> tuple[Any, _Problem | None]:
    """Parse the whole text as JSON once; on failure, the problem every JSON format reports."""
    try:
        return loads_or_problem(text), None
    except ConversationFormatError as exc:
        return None, _Problem("", str(exc))


def _no_match_message(source_name: str, problems: dict[str, str]) -> str:
    """One line per distinct reason, naming every format that failed for it."""
    by_reason: dict[str, list[str]] = {}
    for fmt, reason in problems.items():
        by_reason.setdefault(reason, []).append(fmt)
    lines = [f"- {', '.join(fmts)}: {reason}" for reason, fmts in by_reason.items()]
    return f"no known format matched {source_name}:\n" + "\n".join(lines)


def _check_orphans(messages: list[Message], origins: list[str]) -> None:
    """strict mode: every tool result must answer a call declared earlier in the file."""
    declared: set[str] = set()
    for message, origin in zip(messages, origins, strict=True):
        role = message.get("role")
        if role == "assistant":
            for call in message.get("tool_calls") or ():
                call_id = usable_id(call.get("id"))
                if call_id is not None:
                    declared.add(call_id)
        elif role == "tool":
            call_id = usable_id(message.get("tool_call_id"))
            if call_id is None:
                raise _Problem(origin, "tool result has no usable tool_call_id")
            if call_id not in declared:
                raise _Problem(
                    origin, f"tool result for call {call_id!r} whose call never appears before it"
                )


def _arguments(value: Any) -> str:
    """Tool-call arguments as the JSON text OpenAI uses ('{}' when absent)."""
    if value is None:
        return "{}"
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False)


def _tool_call(call: Any, where: str) -> dict[str, Any]:
    """One declared call in OpenAI shape, from OpenAI, buffer-row or LangChain spelling.

    The id is what the engine reads (:func:`~flowdrop_core.messages.read_call_id`,
    MEM-11: the first usable one of ``tool_call_id`` and ``id``, as a trimmed
    string); if neither is usable the raw value is kept (``id``, or
    ``tool_call_id`` when only it is given), so the inspector shows it.
    """
    if not isinstance(call, dict):
        raise _Problem(where, f"expected a tool call object, got {_json_type(call)}")
    name, arguments = read_call_function(call)
    call_id: Any = read_call_id(call)
    if call_id is None:
        call_id = call.get("id", call.get("tool_call_id"))
    return {
        "id": call_id,
        "type": "function",
        "function": {"name": name, "arguments": _arguments(arguments)},
    }


def _tool_calls(value: Any, where: str) -> list[dict[str, Any]]:
    """A ``tool_calls`` list (or absent/null) in OpenAI shape."""
    if value is None:
        return []
    if not isinstance(value, list):
        raise _Problem(where, f"expected a list of tool calls, got {_json_type(value)}")
    return [_tool_call(call, f"{where}[{k}]") for k, call in enumerate(value)]


def _parts_text(
    parts: list[Any], where: str, text_keys: dict[str, str], placeholders: frozenset[str]
) -> str:
    """Join content parts: text-bearing parts give their text, media parts a ``[type]`` marker."""
    texts: list[str] = []
    for k, part in enumerate(parts):
        if not isinstance(part, dict):
            raise _Problem(
                f"{where}[{k}]", f"expected a content part object, got {_json_type(part)}"
            )
        kind = part.get("type")
        if kind in text_keys:
            value = part.get(text_keys[kind])
            if not isinstance(value, str):
                raise _Problem(f"{where}[{k}]", f"{kind} part without a string {text_keys[kind]!r}")
            texts.append(value)
        elif kind in placeholders:
            texts.append(f"[{kind}]")
        elif kind is None:
            raise _Problem(f"{where}[{k}]", "content part without 'type'")
        else:
            raise _Problem(f"{where}[{k}]", f"unknown content part type {kind!r}")
    return "\n".join(texts)


def _role(value: Any, where: str, allowed: tuple[str, ...], aliases: dict[str, str]) -> str:
    """Check a role against a format's allowed roles, mapping aliases (``developer``)."""
    if isinstance(value, str) and value in aliases:
        return aliases[value]
    if isinstance(value, str) and value in allowed:
        return value
    raise _Problem(where, f"unknown role {value!r} (expected {' or '.join(allowed)})")


def _top_list(value: Any, key: str, what: str) -> tuple[list[Any], str]:
    """A format's message list: the value itself, or ``value[key]``; with the origin prefix."""
    if isinstance(value, list):
        return value, ""
    if isinstance(value, dict):
        if key not in value:
            raise _Problem("", f"no {key!r} list at the top level")
        items = value[key]
        if not isinstance(items, list):
            raise _Problem(key, f"expected a list, got {_json_type(items)}")
        return items, key
    raise _Problem(
        "", f"expected a list of {what} or an object with {key!r}, got {_json_type(value)}"
    )


# --------------------------------------------------------------------------- OpenAI Chat

_CHAT_ROLES = ("system", "user", "assistant", "tool")
_CHAT_ALIASES = {"developer": "system"}
_CHAT_TEXT = {"text": "text", "refusal": "refusal"}
_CHAT_MEDIA = frozenset({"image_url", "input_audio", "file"})


def _chat_message(message: Any, where: str) -> Message:
    """One OpenAI Chat message (or stored buffer row) as a provider-flat message.

    Accepts both shapes GR-MEM names: ``tool_calls``/``tool_call_id`` at the
    top level or under ``metadata``. Content is kept as given (``null`` stays
    ``null``); a list of parts becomes their text joined by newlines.
    """
    if not isinstance(message, dict):
        raise _Problem(where, f"expected a message object, got {_json_type(message)}")
    if "role" not in message:
        raise _Problem(where, "missing 'role'")
    role = _role(message["role"], where, _CHAT_ROLES, _CHAT_ALIASES)
    content = message.get("content")
    if isinstance(content, list):
        content = _parts_text(content, f"{where}.content", _CHAT_TEXT, _CHAT_MEDIA)
    elif content is not None and not isinstance(content, str):
        raise _Problem(
            f"{where}.content",
            f"expected a string, a list of content parts or null, got {_json_type(content)}",
        )
    metadata = message.get("metadata", {})
    if metadata is None:
        metadata = {}
    if not isinstance(metadata, dict):
        raise _Problem(f"{where}.metadata", f"expected an object, got {_json_type(metadata)}")
    out: Message = {"role": role, "content": content}
    raw_calls = message["tool_calls"] if "tool_calls" in message else metadata.get("tool_calls")
    calls = _tool_calls(raw_calls, f"{where}.tool_calls")
    if calls:
        if role != "assistant":
            raise _Problem(
                where, f"'tool_calls' on a {role} message; only assistant turns call tools"
            )
        out["tool_calls"] = calls
    if role == "tool":
        if "tool_call_id" in message:
            out["tool_call_id"] = message["tool_call_id"]
        elif "tool_call_id" in metadata:
            out["tool_call_id"] = metadata["tool_call_id"]
    if metadata.get("healed") is True:
        out["metadata"] = {"healed": True}
    return out


def _read_openai_chat(document: Any) -> tuple[list[Message], list[str]]:
    """A JSON list of Chat messages, or an object (a request body) with ``messages``."""
    if isinstance(document, dict) and "system" in document and "messages" in document:
        raise _Problem(
            "system", "a top-level system prompt is Anthropic's layout, not OpenAI Chat's"
        )
    items, prefix = _top_list(document, "messages", "messages")
    messages: list[Message] = []
    origins: list[str] = []
    for i, item in enumerate(items):
        where = f"{prefix}[{i}]"
        messages.append(_chat_message(item, where))
        origins.append(where)
    return messages, origins


# --------------------------------------------------------------------------- OpenAI Responses

_RESPONSES_ROLES = ("system", "user", "assistant")
_RESPONSES_TEXT = {
    "input_text": "text",
    "output_text": "text",
    "text": "text",
    "refusal": "refusal",
}
_RESPONSES_MEDIA = frozenset({"input_image", "input_file", "input_audio"})
#: Items that carry no conversation message (model reasoning); skipped.
_RESPONSES_SKIPPED = frozenset({"reasoning"})


def _read_openai_responses(document: Any) -> tuple[list[Message], list[str]]:
    """Responses API items: a list, or an object with ``input`` and/or ``output``.

    ``instructions`` (a string) becomes a leading system message. A string
    ``input`` is one user message. Consecutive ``function_call`` items fold
    into one assistant message with several tool calls; its origin lists the
    items (``input[2]+input[3]``). ``reasoning`` items are skipped.
    """
    messages: list[Message] = []
    origins: list[str] = []
    sections: list[tuple[str, list[Any]]] = []
    if isinstance(document, list):
        sections.append(("", document))
    elif isinstance(document, dict):
        if "input" not in document and "output" not in document:
            raise _Problem("", "no 'input' or 'output' list at the top level")
        instructions = document.get("instructions")
        if isinstance(instructions, str) and instructions:
            messages.append({"role": "system", "content": instructions})
            origins.append("instructions")
        for key in ("input", "output"):
            if key not in document:
                continue
            items = document[key]
            if isinstance(items, str) and key == "input":
                messages.append({"role": "user", "content": items})
                origins.append("input")
            elif isinstance(items, list):
                sections.append((key, items))
            else:
                raise _Problem(key, f"expected a list of items, got {_json_type(items)}")
    else:
        raise _Problem(
            "", f"expected a list of items or an object with 'input', got {_json_type(document)}"
        )
    for prefix, items in sections:
        folding: Message | None = None
        for i, item in enumerate(items):
            where = f"{prefix}[{i}]"
            if not isinstance(item, dict):
                raise _Problem(where, f"expected an item object, got {_json_type(item)}")
            kind = item.get("type")
            if kind is None and "role" in item:
                kind = "message"
            if kind == "function_call":
                call = _responses_call(item, where)
                if folding is None:
                    folding = {"role": "assistant", "content": None, "tool_calls": []}
                    messages.append(folding)
                    origins.append(where)
                else:
                    origins[-1] += f"+{where}"
                folding["tool_calls"].append(call)
                continue
            folding = None
            if kind == "function_call_output":
                messages.append(_responses_output(item, where))
            elif kind == "message":
                messages.append(_responses_message(item, where))
            elif kind in _RESPONSES_SKIPPED:
                continue
            elif kind is None:
                raise _Problem(where, "missing 'type'")
            else:
                raise _Problem(where, f"unknown item type {kind!r}")
            origins.append(where)
    return messages, origins


def _responses_message(item: dict[str, Any], where: str) -> Message:
    """A ``message`` item (or an easy input message without ``type``)."""
    if "role" not in item:
        raise _Problem(where, "missing 'role'")
    role = _role(item["role"], where, _RESPONSES_ROLES, _CHAT_ALIASES)
    content = item.get("content")
    if isinstance(content, list):
        content = _parts_text(content, f"{where}.content", _RESPONSES_TEXT, _RESPONSES_MEDIA)
    elif not isinstance(content, str):
        raise _Problem(
            f"{where}.content",
            f"expected a string or a list of content parts, got {_json_type(content)}",
        )
    return {"role": role, "content": content}


def _responses_call(item: dict[str, Any], where: str) -> dict[str, Any]:
    """A ``function_call`` item as an OpenAI Chat tool call (its ``call_id`` is the id)."""
    for required in ("call_id", "name"):
        if required not in item:
            raise _Problem(where, f"function_call without {required!r}")
    return {
        "id": item["call_id"],
        "type": "function",
        "function": {"name": item["name"], "arguments": _arguments(item.get("arguments"))},
    }


def _responses_output(item: dict[str, Any], where: str) -> Message:
    """A ``function_call_output`` item as a ``tool`` message."""
    for required in ("call_id", "output"):
        if required not in item:
            raise _Problem(where, f"function_call_output without {required!r}")
    output = item["output"]
    if isinstance(output, list):
        output = _parts_text(output, f"{where}.output", _RESPONSES_TEXT, _RESPONSES_MEDIA)
    elif not isinstance(output, str):
        output = json.dumps(output, ensure_ascii=False)
    return {"role": "tool", "content": output, "tool_call_id": item["call_id"]}


# --------------------------------------------------------------------------- Anthropic

_ANTHROPIC_MEDIA = frozenset({"image", "document"})
_ANTHROPIC_SKIPPED = frozenset({"thinking", "redacted_thinking"})
#: Prefix marking a tool result the recording flagged as an error (``is_error``, ``status``).
ERROR_PREFIX = "[error] "


def _read_anthropic(document: Any) -> tuple[list[Message], list[str]]:
    """Anthropic Messages: an object with ``messages`` (and optional ``system``), or a list.

    An assistant message's ``text`` blocks become its content (``null`` when
    it only calls tools) and its ``tool_use`` blocks its tool calls. A user
    message's ``tool_result`` blocks become one ``tool`` message each, in
    block order, followed by one user message with its text blocks, if any.
    ``thinking`` blocks are skipped; images and documents become ``[image]``.
    """
    messages: list[Message] = []
    origins: list[str] = []
    if isinstance(document, dict) and "system" in document:
        system = document["system"]
        if isinstance(system, list):
            system = _parts_text(system, "system", {"text": "text"}, frozenset())
        elif not isinstance(system, str):
            raise _Problem(
                "system", f"expected a string or a list of text blocks, got {_json_type(system)}"
            )
        if system:
            messages.append({"role": "system", "content": system})
            origins.append("system")
    items, prefix = _top_list(document, "messages", "messages")
    for i, item in enumerate(items):
        where = f"{prefix}[{i}]"
        if not isinstance(item, dict):
            raise _Problem(where, f"expected a message object, got {_json_type(item)}")
        if "role" not in item:
            raise _Problem(where, "missing 'role'")
        role = _role(item["role"], where, ("user", "assistant"), {})
        if "content" not in item:
            raise _Problem(where, "missing 'content'")
        content = item["content"]
        if isinstance(content, str):
            messages.append({"role": role, "content": content})
            origins.append(where)
            continue
        if not isinstance(content, list):
            raise _Problem(
                f"{where}.content",
                f"expected a string or a list of content blocks, got {_json_type(content)}",
            )
        if role == "assistant":
            messages.append(_anthropic_assistant(content, where))
            origins.append(where)
        else:
            for message, origin in _anthropic_user(content, where):
                messages.append(message)
                origins.append(origin)
    return messages, origins


def _anthropic_block(block: Any, where: str) -> str:
    """A content block's type, after checking it is an object with one."""
    if not isinstance(block, dict):
        raise _Problem(where, f"expected a content block object, got {_json_type(block)}")
    kind = block.get("type")
    if not isinstance(kind, str):
        raise _Problem(where, "content block without 'type'")
    return kind


def _anthropic_text(block: dict[str, Any], where: str) -> str:
    """The text of a ``text`` block."""
    text = block.get("text")
    if not isinstance(text, str):
        raise _Problem(where, "text block without a string 'text'")
    return text


def _anthropic_assistant(blocks: list[Any], where: str) -> Message:
    """An assistant message from its content blocks."""
    texts: list[str] = []
    calls: list[dict[str, Any]] = []
    for k, block in enumerate(blocks):
        at = f"{where}.content[{k}]"
        kind = _anthropic_block(block, at)
        if kind == "text":
            texts.append(_anthropic_text(block, at))
        elif kind == "tool_use":
            for required in ("id", "name"):
                if required not in block:
                    raise _Problem(at, f"tool_use block without {required!r}")
            calls.append(
                {
                    "id": block["id"],
                    "type": "function",
                    "function": {
                        "name": block["name"],
                        "arguments": _arguments(block.get("input", {})),
                    },
                }
            )
        elif kind in _ANTHROPIC_MEDIA:
            texts.append(f"[{kind}]")
        elif kind in _ANTHROPIC_SKIPPED:
            continue
        elif kind == "tool_result":
            raise _Problem(at, "tool_result block in an assistant message")
        else:
            raise _Problem(at, f"unknown content block type {kind!r}")
    message: Message = {
        "role": "assistant",
        "content": "\n".join(texts) if texts or not calls else None,
    }
    if calls:
        message["tool_calls"] = calls
    return message


def _anthropic_user(blocks: list[Any], where: str) -> list[tuple[Message, str]]:
    """A user message's blocks: one tool message per tool_result, then the text as a user turn."""
    results: list[tuple[Message, str]] = []
    texts: list[str] = []
    for k, block in enumerate(blocks):
        at = f"{where}.content[{k}]"
        kind = _anthropic_block(block, at)
        if kind == "tool_result":
            if "tool_use_id" not in block:
                raise _Problem(at, "tool_result block without 'tool_use_id'")
            content = block.get("content", "")
            if isinstance(content, list):
                content = _parts_text(content, f"{at}.content", {"text": "text"}, _ANTHROPIC_MEDIA)
            elif not isinstance(content, str):
                raise _Problem(
                    f"{at}.content",
                    f"expected a string or a list of blocks, got {_json_type(content)}",
                )
            if block.get("is_error") is True:
                content = ERROR_PREFIX + content
            results.append(
                ({"role": "tool", "content": content, "tool_call_id": block["tool_use_id"]}, at)
            )
        elif kind == "text":
            texts.append(_anthropic_text(block, at))
        elif kind in _ANTHROPIC_MEDIA:
            texts.append(f"[{kind}]")
        elif kind == "tool_use":
            raise _Problem(at, "tool_use block in a user message")
        else:
            raise _Problem(at, f"unknown content block type {kind!r}")
    if texts or not results:
        results.append(({"role": "user", "content": "\n".join(texts)}, where))
    return results


# --------------------------------------------------------------------------- LangChain

_LANGCHAIN_ROLES = {
    "human": "user",
    "ai": "assistant",
    "system": "system",
    "tool": "tool",
    "HumanMessageChunk": "user",
    "AIMessageChunk": "assistant",
    "SystemMessageChunk": "system",
    "ToolMessageChunk": "tool",
}
_LANGCHAIN_CHAT_ROLES = {"human": "user", "ai": "assistant", "developer": "system"}


def _read_langchain(document: Any) -> tuple[list[Message], list[str]]:
    """``messages_to_dict`` output: ``[{"type": "human"|"ai"|"system"|"tool", "data": {...}}]``.

    Tool calls come from ``data.tool_calls`` (``{"id", "name", "args"}``),
    falling back to the older ``data.additional_kwargs.tool_calls`` (OpenAI
    shape). An AI message with tool calls and empty text gets ``null`` content.
    A tool message with ``status: "error"`` gets the ``[error]`` prefix.
    """
    items, prefix = _top_list(document, "messages", "messages_to_dict entries")
    messages: list[Message] = []
    origins: list[str] = []
    for i, item in enumerate(items):
        where = f"{prefix}[{i}]"
        messages.append(_langchain_message(item, where))
        origins.append(where)
    return messages, origins


def _langchain_message(item: Any, where: str) -> Message:
    """One ``{"type", "data"}`` entry as a provider-flat message."""
    if not isinstance(item, dict):
        raise _Problem(where, f"expected a message object, got {_json_type(item)}")
    for required in ("type", "data"):
        if required not in item:
            raise _Problem(where, f"missing {required!r}")
    kind, data = item["type"], item["data"]
    if not isinstance(data, dict):
        raise _Problem(f"{where}.data", f"expected an object, got {_json_type(data)}")
    if kind in ("chat", "ChatMessageChunk"):
        role = _role(data.get("role"), f"{where}.data", _CHAT_ROLES, _LANGCHAIN_CHAT_ROLES)
    elif isinstance(kind, str) and kind in _LANGCHAIN_ROLES:
        role = _LANGCHAIN_ROLES[kind]
    else:
        raise _Problem(where, f"unknown message type {kind!r} (expected human, ai, system or tool)")
    content = data.get("content", "")
    if isinstance(content, list):
        content = _langchain_parts(content, f"{where}.data.content")
    elif not isinstance(content, str):
        raise _Problem(
            f"{where}.data.content",
            f"expected a string or a list of content parts, got {_json_type(content)}",
        )
    message: Message = {"role": role, "content": content}
    if role == "assistant":
        raw_calls = data.get("tool_calls")
        at = f"{where}.data.tool_calls"
        if not raw_calls:
            extra = data.get("additional_kwargs")
            raw_calls = extra.get("tool_calls") if isinstance(extra, dict) else None
            at = f"{where}.data.additional_kwargs.tool_calls"
        calls = _tool_calls(raw_calls, at)
        if calls:
            message["tool_calls"] = calls
            if content == "":
                message["content"] = None
    elif role == "tool":
        if "tool_call_id" not in data:
            raise _Problem(f"{where}.data", "tool message without 'tool_call_id'")
        if data.get("status") == "error" and isinstance(content, str):
            message["content"] = ERROR_PREFIX + content
        message["tool_call_id"] = data["tool_call_id"]
    return message


def _langchain_parts(parts: list[Any], where: str) -> str:
    """LangChain content blocks: strings and text parts joined; tool_use blocks skipped.

    (``tool_use`` blocks repeat ``tool_calls``; other provider blocks become
    ``[type]`` since LangChain passes provider-specific blocks through.)
    """
    texts: list[str] = []
    for k, part in enumerate(parts):
        if isinstance(part, str):
            texts.append(part)
        elif isinstance(part, dict) and isinstance(part.get("type"), str):
            kind = part["type"]
            if kind == "text" and isinstance(part.get("text"), str):
                texts.append(part["text"])
            elif kind != "tool_use":
                texts.append(f"[{kind}]")
        else:
            raise _Problem(f"{where}[{k}]", "expected a string or a content block with 'type'")
    return "\n".join(texts)


# --------------------------------------------------------------------------- scenario


def _read_scenario(document: Any) -> tuple[list[Message], list[str]]:
    """A scenario file: its starting buffer, then every step's messages, in order."""
    if not isinstance(document, dict):
        raise _Problem("", f"expected a scenario object, got {_json_type(document)}")
    if "steps" not in document:
        raise _Problem("", "not a scenario (no 'steps')")
    try:
        scenario = Scenario.model_validate(document)
    except ValidationError as exc:
        raise _Problem("", _readable_errors(exc)[0]) from None
    messages: list[Message] = []
    origins: list[str] = []
    for i, entry in enumerate(scenario.buffer):
        where = f"buffer[{i}]"
        messages.append(_chat_message(entry, where))
        origins.append(where)
    for s, step in enumerate(scenario.steps):
        batch = step.append if isinstance(step.append, list) else [step.append]
        for k, entry in enumerate(batch):
            where = f"steps[{s}].append" + (f"[{k}]" if isinstance(step.append, list) else "")
            messages.append(_chat_message(entry, where))
            origins.append(where)
    return messages, origins


# --------------------------------------------------------------------------- JSONL

_JSON_FORMATS = ("openai-chat", "openai-responses", "anthropic", "langchain", "scenario")
_CONVERSATION_KEYS = ("messages", "input", "output", "steps")
_TOP_INDEX = re.compile(r"(^|\+)\[(\d+)\](\.?)")
_FIRST_INDEX = re.compile(r"\[(\d+)\]")


def _read_jsonl(text: str) -> tuple[list[Message], list[str]]:
    """One message or one conversation per line; blank lines skipped.

    A line holding a list, or an object with ``messages``/``input``/
    ``output``/``steps`` (and no ``role`` or ``type``), is a whole conversation, read in
    the first JSON format that fits; its origins read ``line 3: messages[1]``.
    Consecutive single-message lines are read together as one list (so
    Responses ``function_call`` lines still fold), in the first format that
    fits them all; their origins read ``line 3``.
    """
    lines: list[tuple[int, Any]] = []
    # split on "\n" only: str.splitlines would also split inside JSON strings at U+2028.
    for number, line in enumerate(text.split("\n"), start=1):
        if not line.strip():
            continue
        try:
            lines.append((number, loads_or_problem(line, column_only=True)))
        except ConversationFormatError as exc:
            raise _Problem(f"line {number}", str(exc)) from None
    messages: list[Message] = []
    origins: list[str] = []
    run: list[tuple[int, Any]] = []

    def flush() -> None:
        if run:
            numbers = [number for number, _ in run]
            got, where = _detect([value for _, value in run], _JSON_FORMATS[:4], numbers)
            messages.extend(got)
            origins.extend(where)
            run.clear()

    for number, value in lines:
        if _is_conversation(value):
            flush()
            try:
                got, where = _detect(value, _JSON_FORMATS, None)
            except _Problem as problem:
                inner = f": {problem.where}" if problem.where else ""
                raise _Problem(f"line {number}{inner}", problem.what) from None
            messages.extend(got)
            origins.extend(f"line {number}: {origin}" for origin in where)
        else:
            run.append((number, value))
    flush()
    return messages, origins


def _is_conversation(value: Any) -> bool:
    """Whether a JSONL line holds a whole conversation rather than one message."""
    if isinstance(value, list):
        return True
    # ``role`` or ``type`` marks one message or item (a function_call_output has ``output``).
    return (
        isinstance(value, dict)
        and "role" not in value
        and "type" not in value
        and any(key in value for key in _CONVERSATION_KEYS)
    )


def _detect(
    value: Any, formats: tuple[str, ...], numbers: list[int] | None
) -> tuple[list[Message], list[str]]:
    """Read ``value`` in the first format that fits; relocate ``[i]`` to line numbers.

    On failure, the problem of the format that read furthest (ties: the
    earlier format), tagged with that format's name.
    """
    failures: list[tuple[int, str, _Problem]] = []
    for fmt in formats:
        try:
            messages, origins = _READERS[fmt](value)
        except _Problem as problem:
            match = _FIRST_INDEX.search(problem.where)
            failures.append((int(match.group(1)) if match else -1, fmt, problem))
            continue
        if numbers is not None:
            origins = [_relocate(origin, numbers) for origin in origins]
        return messages, origins
    _, fmt, problem = max(failures, key=lambda failure: failure[0])
    where = problem.where
    if numbers is not None:
        where = _relocate(where, numbers) if where else f"line {numbers[0]}"
    raise _Problem(where, f"{problem.what} (read as {fmt})")


def _relocate(origin: str, numbers: list[int]) -> str:
    """``[3].content[1]`` -> ``line 7: content[1]`` for a run of single-message lines."""

    def swap(match: re.Match[str]) -> str:
        line = f"{match.group(1)}line {numbers[int(match.group(2))]}"
        return f"{line}: " if match.group(3) else line

    return _TOP_INDEX.sub(swap, origin)


_READERS: dict[str, Callable[[Any], tuple[list[Message], list[str]]]] = {
    "openai-chat": _read_openai_chat,
    "openai-responses": _read_openai_responses,
    "anthropic": _read_anthropic,
    "langchain": _read_langchain,
    "scenario": _read_scenario,
}
