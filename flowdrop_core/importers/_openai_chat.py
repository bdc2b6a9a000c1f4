"""OpenAI Chat Completions: request bodies, response objects and stored buffer rows.

Reads a JSON list of messages, an object with ``messages`` (a request body),
an object with ``choices`` (a response object: ``choices[0].message`` is the
reply; other choices are notes), both, or a list of request bodies each
followed by its response (a recording of API calls: what the last call saw,
then its reply). Messages may use the legacy
``function_call`` / ``role: "function"`` spelling, content parts of every
type, and the buffer's own row shape (``metadata.tool_calls``,
``metadata.tool_call_id``, ``metadata.healed``), as GR-MEM reads everywhere.
"""

from __future__ import annotations

from typing import Any

from flowdrop_core.importers._base import (
    Message,
    Out,
    PendingCalls,
    Problem,
    arguments_text,
    json_type,
    last_call,
    marker,
    object_content,
    openai_calls,
    parts_text,
    role_of,
)
from flowdrop_core.importers._claims import Claim, Miss, Verdict, each, key_miss

NAME = "openai-chat"
EXPECTS = (
    "a list of chat messages (role, content, tool_calls, tool_call_id), an object with "
    "'messages' (a request body) or 'choices' (a response object)"
)

ROLES = ("system", "user", "assistant", "tool", "function")
ALIASES = {"developer": "system"}
TEXT_PARTS = {"text": "text", "refusal": "refusal"}
MEDIA_PARTS = frozenset({"image_url", "input_audio", "file", "image", "audio"})
#: Reasoning parts some providers put in a Chat message's content (Mistral's ``thinking``).
LEFT_OUT_PARTS = {"thinking": "model reasoning is not a conversation message"}
#: Content blocks only Anthropic messages carry: a message holding one is not Chat's.
FOREIGN_BLOCKS = frozenset(
    {"tool_use", "tool_result", "redacted_thinking", "server_tool_use", "mcp_tool_use",
     "document", "container_upload"}
)  # fmt: skip
KNOWN = ("role", "content", "name", "tool_calls", "tool_call_id", "function_call", "metadata")
#: Where providers put an assistant message's reasoning (Groq, Ollama: ``reasoning``;
#: DeepSeek, vLLM, Qwen: ``reasoning_content``; some proxies: ``thinking``).
REASONING_KEYS = ("reasoning", "reasoning_content", "thinking")
KNOWN_ASSISTANT = (*KNOWN, "refusal", "audio", *REASONING_KEYS)


#: Keys of which a Chat message carries at least one besides ``role``.
MESSAGE_KEYS = ("content", "tool_calls", "tool_call_id", "function_call")


def claims(document: Any) -> Verdict:
    """A Chat document: a response with ``choices[].message``, a request with ``messages``,
    a list of messages or of request/response bodies, or one message; every message has a
    string ``role`` and ``content`` (or ``tool_calls`` / ``tool_call_id`` / ``function_call``)."""
    if isinstance(document, dict) and "choices" in document:
        choices = document["choices"]
        if not isinstance(choices, list) or not choices:
            return Miss("choices", "expected a non-empty list of choices")
        missed = key_miss(choices[0], "choices[0]", ("message",), "a choice object")
        if missed is not None:
            return Miss(missed.where, missed.what, 1)
        if "messages" in document:
            verdict = each(
                document["messages"],
                "messages",
                message_miss,
                "request and response",
                plain=plain_message,
            )
            return verdict if isinstance(verdict, Miss) else Claim("a request and its response")
        return Claim("a response object")
    if isinstance(document, dict) and "messages" in document:
        if "system" in document:
            return Miss("system", "a top-level system prompt is not OpenAI Chat's layout", 1)
        if "trajectory_format" in document:  # an agent's run: its reader also reads 'info'
            return Miss("trajectory_format", "an agent trajectory, not a request body", 1)
        return each(
            document["messages"],
            "messages",
            message_miss,
            "a request body",
            score=2,
            plain=plain_message,
        )
    if isinstance(document, dict) and "role" in document:
        missed = message_miss(document, "")
        return Claim("one message") if missed is None else missed
    if _is_exchanges(document):
        return each(document, "", _exchange_miss, "a list of requests and responses", score=2)
    if isinstance(document, list):
        return each(document, "", message_miss, "a list of messages", plain=plain_message)
    return Miss("", f"expected a list of messages or an object with 'messages' or 'choices', "
                f"got {json_type(document)}")  # fmt: skip


def message_miss(item: Any, where: str) -> Miss | None:
    """``None`` when ``item`` looks like a Chat message (string ``role``, a content key)."""
    missed = key_miss(item, where, ("role",), "a message object")
    if missed is not None:
        return missed
    if not isinstance(item["role"], str):
        return Miss(where, f"'role' is {json_type(item['role'])}, not a string")
    if not any(key in item for key in MESSAGE_KEYS):
        return Miss(where, "no 'content', 'tool_calls' or 'tool_call_id'")
    content = item.get("content")
    if isinstance(content, list):
        for k, part in enumerate(content):
            kind = part.get("type") if isinstance(part, dict) else None
            if isinstance(kind, str) and (kind in FOREIGN_BLOCKS or kind.endswith("_tool_result")):
                return Miss(f"{where}.content[{k}]", f"a {kind!r} block is Anthropic's, not Chat's")
            if isinstance(part, dict) and "type" not in part:
                return Miss(f"{where}.content[{k}]", "a content part without 'type'")
    return None


def plain_message(item: Any) -> bool:
    """True only of a message :func:`message_miss` passes: the commonest shape, tested fast.

    An object with a string ``role``, a content key and no list of parts
    (parts are looked at by :func:`message_miss`); anything else is for
    :func:`message_miss` to judge and locate.
    """
    return (
        type(item) is dict
        and type(item.get("role")) is str
        and not isinstance(item.get("content"), list)
        and (
            "content" in item
            or "tool_calls" in item
            or "tool_call_id" in item
            or "function_call" in item
        )
    )


def _is_exchanges(document: Any) -> bool:
    """A recording of API calls: a list with a request or response body and no message.

    The message test comes first: a list of messages answers it at its first item.
    """
    return (
        isinstance(document, list)
        and not any(isinstance(v, dict) and "role" in v for v in document)
        and any(_is_exchange(v) for v in document)
    )


def _is_error_body(value: Any) -> bool:
    """An API's error answer (``{"error": {...}}``), recorded among the exchanges."""
    return isinstance(value, dict) and "error" in value and "role" not in value


def _exchange_miss(item: Any, where: str) -> Miss | None:
    if _is_error_body(item):
        return None
    if not _is_exchange(item):
        return Miss(where, "neither a request ('messages'), a response ('choices') nor an "
                    "error body ('error')")  # fmt: skip
    if "messages" in item:
        verdict = each(item["messages"], f"{where}.messages", message_miss, "")
        return verdict if isinstance(verdict, Miss) else None
    return None


def read(document: Any, out: Out) -> None:
    """Read a request body, a response object, a list of messages, or both."""
    if isinstance(document, dict) and "system" in document and "messages" in document:
        raise Problem(
            "system", "a top-level system prompt is Anthropic's layout, not OpenAI Chat's"
        )
    pending = PendingCalls()
    if isinstance(document, dict) and "choices" in document:
        if "messages" in document:
            _read_list(document["messages"], "messages", out, pending)
        _read_choices(document["choices"], out, pending)
        return
    if _is_exchanges(document) and all(_is_exchange(v) or _is_error_body(v) for v in document):
        _read_exchanges(document, out)
    elif isinstance(document, list):
        _read_list(document, "", out, pending)
    elif isinstance(document, dict) and "role" in document and "messages" not in document:
        out.add(chat_message(document, "", out, pending), "")
    elif isinstance(document, dict):
        if "messages" not in document:
            raise Problem("", "no 'messages' or 'choices' at the top level")
        _read_list(document["messages"], "messages", out, pending)
    else:
        raise Problem(
            "",
            f"expected a list of messages or an object with 'messages', got {json_type(document)}",
        )


def _is_exchange(value: Any) -> bool:
    """A request body (``messages``) or a response object (``choices``), not a message."""
    return (
        isinstance(value, dict)
        and "role" not in value
        and ("messages" in value or "choices" in value)
    )


def _read_exchanges(items: list[Any], out: Out) -> None:
    """A recording of API calls: request bodies, each followed by its response.

    Each request repeats the conversation so far, so the conversation is what
    the last call saw, then its reply; what only an earlier call held is a note.
    """
    calls: list[tuple[str, Out]] = []
    for i, item in enumerate(items):
        if _is_error_body(item):
            out.note(
                f"[{i}]",
                "error response",
                "the API answered a request with an error, not a message",
                item["error"],
            )
            continue
        if "messages" in item or not calls:
            calls.append((f"call [{i}]", Out()))
        call = calls[-1][1]
        where = f"[{i}]"
        pending = PendingCalls()
        if "messages" in item:
            _read_list(item["messages"], f"{where}.messages", call, pending)
        if "choices" in item:
            _read_choices(item["choices"], call, pending, prefix=f"{where}.")
    last_call(calls, out, "an earlier call held it; the last call does not")


def _read_list(items: Any, prefix: str, out: Out, pending: PendingCalls) -> None:
    if not isinstance(items, list):
        raise Problem(prefix, f"expected a list, got {json_type(items)}")
    for i, item in enumerate(items):
        where = f"{prefix}[{i}]"
        out.add(chat_message(item, where, out, pending), where)


def _read_choices(choices: Any, out: Out, pending: PendingCalls, prefix: str = "") -> None:
    if not isinstance(choices, list):
        raise Problem(f"{prefix}choices", f"expected a list, got {json_type(choices)}")
    for k, choice in enumerate(choices):
        where = f"{prefix}choices[{k}]"
        if not isinstance(choice, dict) or not isinstance(choice.get("message"), dict):
            raise Problem(where, "expected a choice object with a 'message'")
        if k == 0:
            out.add(chat_message(choice["message"], f"{where}.message", out, pending), where)
        else:
            out.note(
                where,
                "another choice",
                "a response's alternative completions are not one conversation; "
                "choices[0] is imported",
                choice["message"],
            )


def chat_message(
    message: Any, where: str, out: Out, pending: PendingCalls | None = None
) -> Message:
    """One OpenAI Chat message (or stored buffer row) as a provider-flat message.

    Content is kept as given (``null`` stays ``null``); a list of parts
    becomes their text joined by newlines. A legacy ``function_call`` is a
    tool call whose id is its origin (the source has none); a ``function``
    message answers the oldest open call of its name.
    """
    pending = pending if pending is not None else PendingCalls()
    if type(message) is dict and message.keys() <= _PLAIN_KEYS:
        role = message.get("role")
        content = message.get("content")
        if type(role) is str and role in _PLAIN_ROLES and (content is None or type(content) is str):
            return _plain_message(message, role, content, where, pending)
    if not isinstance(message, dict):
        raise Problem(where, f"expected a message object, got {json_type(message)}")
    if "role" not in message:
        raise Problem(where, "missing 'role'")
    role = role_of(message["role"], where, ROLES, ALIASES)
    out.foreign(message, where, KNOWN_ASSISTANT if role == "assistant" else KNOWN, NAME)
    content = message.get("content")
    if isinstance(content, list):
        content = parts_text(
            content, f"{where}.content", out, NAME, TEXT_PARTS, MEDIA_PARTS, LEFT_OUT_PARTS
        )
    elif isinstance(content, dict):
        # Tracing integrations log a tool's structured output as the content itself.
        content = object_content(
            content, f"{where}.content", out, f"{NAME} content is text; shown as its JSON"
        )
    elif content is not None and not isinstance(content, str):
        raise Problem(
            f"{where}.content",
            f"expected a string, a list of content parts or null, got {json_type(content)}",
        )
    if role == "assistant":
        content = _assistant_extras(message, where, content)
        _reasoning_notes(message, where, out)
    metadata = message.get("metadata", {})
    if metadata is None:
        metadata = {}
    if not isinstance(metadata, dict):
        raise Problem(f"{where}.metadata", f"expected an object, got {json_type(metadata)}")
    if role == "function":
        return _function_result(message, where, content, out, pending)
    result: Message = {"role": role, "content": content}
    raw_calls = message["tool_calls"] if "tool_calls" in message else metadata.get("tool_calls")
    calls = openai_calls(raw_calls, f"{where}.tool_calls")
    legacy = message.get("function_call")
    if legacy is not None:
        calls.append(_legacy_call(legacy, f"{where}.function_call"))
        out.synthetic.add(f"{where}.function_call")
    if calls:
        _add_calls(result, calls, role, where, pending)
    if role == "tool":
        if "tool_call_id" in message:
            result["tool_call_id"] = message["tool_call_id"]
        elif "tool_call_id" in metadata:
            result["tool_call_id"] = metadata["tool_call_id"]
    if metadata.get("healed") is True:
        result["metadata"] = {"healed": True}
    return result


#: The keys of the commonest Chat message: nothing to note, no metadata, no legacy call.
_PLAIN_KEYS = frozenset({"role", "content", "tool_calls", "tool_call_id", "name"})
#: Its roles: no alias to map, no legacy ``function`` result to pair.
_PLAIN_ROLES = frozenset({"system", "user", "assistant", "tool"})


def _plain_message(
    message: dict[str, Any], role: str, content: str | None, where: str, pending: PendingCalls
) -> Message:
    """:func:`chat_message` of a message with only :data:`_PLAIN_KEYS`, a plain role and
    text (or null) content: the same result, without the checks that cannot apply to it
    (no key to note, no parts, no refusal, audio or reasoning, no metadata)."""
    result: Message = {"role": role, "content": content}
    if "tool_calls" in message:
        calls = openai_calls(message["tool_calls"], f"{where}.tool_calls")
        if calls:
            _add_calls(result, calls, role, where, pending)
    if role == "tool" and "tool_call_id" in message:
        result["tool_call_id"] = message["tool_call_id"]
    return result


def _add_calls(
    result: Message, calls: list[dict[str, Any]], role: str, where: str, pending: PendingCalls
) -> None:
    """Put a message's tool calls on ``result`` and open them; only assistant turns call tools."""
    if role != "assistant":
        raise Problem(where, f"'tool_calls' on a {role} message; only assistant turns call tools")
    result["tool_calls"] = calls
    for call in calls:
        if isinstance(call["id"], str):
            pending.declare(call["id"], call["function"]["name"])


def _assistant_extras(message: dict[str, Any], where: str, content: str | None) -> str | None:
    """A response message's ``refusal`` and ``audio`` transcript, appended to its content."""
    extra: list[str] = []
    refusal = message.get("refusal")
    if isinstance(refusal, str) and refusal:
        extra.append(refusal)
    audio = message.get("audio")
    if isinstance(audio, dict):
        transcript = audio.get("transcript")
        extra.append(
            marker("audio", audio.get("id"), transcript if isinstance(transcript, str) else None)
        )
    if not extra:
        return content
    return "\n".join([content, *extra] if content else extra)


def _reasoning_notes(message: dict[str, Any], where: str, out: Out) -> None:
    """An assistant message's reasoning is not conversation content: a note with its text."""
    for key in REASONING_KEYS:
        value = message.get(key)
        if value not in (None, "", [], {}):
            out.note(
                f"{where}.{key}" if where else key,
                "reasoning",
                "model reasoning is not a conversation message",
                value,
            )


def _legacy_call(call: Any, where: str) -> dict[str, Any]:
    """A legacy ``function_call`` (no id in the source): its origin becomes its id."""
    if not isinstance(call, dict):
        raise Problem(where, f"expected a function_call object, got {json_type(call)}")
    return {
        "id": where,
        "type": "function",
        "function": {"name": call.get("name"), "arguments": arguments_text(call.get("arguments"))},
    }


def _function_result(
    message: dict[str, Any], where: str, content: Any, out: Out, pending: PendingCalls
) -> Message:
    """A legacy ``role: "function"`` result, paired with the oldest open call of its name."""
    name = message.get("name")
    call_id = pending.answer(name if isinstance(name, str) else None)
    if call_id is None:
        out.note(
            where,
            "function result without a call",
            f"no earlier function_call named {name!r} is open; imported with no tool_call_id",
            name if isinstance(name, str) else "",
        )
    return {"role": "tool", "content": content, "tool_call_id": call_id}
