"""pydantic-ai message history: ``ModelMessagesTypeAdapter`` JSON.

A list of messages ``{"kind": "request" | "response", "parts": [...]}``
(``all_messages_json()``, ``to_jsonable_python(result.all_messages())``), or
an object with such a list under ``messages``. Each part names its kind in
``part_kind``: a request holds ``system-prompt``, ``user-prompt``,
``tool-return`` and ``retry-prompt`` parts (and maybe ``instructions``); a
response holds ``text``, ``tool-call``, ``thinking``, ``file`` and
``builtin-tool-call`` / ``builtin-tool-return`` parts and becomes one
assistant message. A tool return answers its call by ``tool_call_id``.
"""

from __future__ import annotations

from typing import Any

from flowdrop_core.importers._base import (
    ERROR_PREFIX,
    Message,
    Out,
    Problem,
    arguments_text,
    json_text,
    json_type,
    marker,
)
from flowdrop_core.importers._claims import Miss, Verdict, each

NAME = "pydantic-ai"
EXPECTS = "pydantic-ai messages [{'kind': 'request'|'response', 'parts': [{'part_kind', ...}]}]"

KINDS = frozenset({"request", "response"})
REQUEST_PARTS = frozenset({"system-prompt", "user-prompt", "tool-return", "retry-prompt"})
RESPONSE_PARTS = frozenset(
    {"text", "tool-call", "thinking", "file", "builtin-tool-call", "builtin-tool-return"}
)
#: Fields of a message that are not conversation content (left out on purpose).
METADATA = frozenset(
    {
        "kind",
        "parts",
        "instructions",
        "timestamp",
        "model_name",
        "usage",
        "provider_name",
        "provider_details",
        "provider_response_id",
        "provider_url",
        "finish_reason",
        "run_id",
        "metadata",
        "state",
        "conversation_id",
    }
)


def claims(document: Any) -> Verdict:
    """The signature: a non-empty list (or ``messages``) of ``kind`` + ``parts[].part_kind``."""
    messages = _messages_of(document)
    if messages is None:
        return Miss("", "expected a list of {'kind', 'parts'} messages")
    prefix = "messages" if isinstance(document, dict) and "messages" in document else ""
    return each(messages, prefix, _message_miss, "pydantic-ai messages", score=0)


def _message_miss(item: Any, where: str) -> Miss | None:
    if _is_message(item):
        return None
    return Miss(where, "not {'kind': 'request'|'response', 'parts': [{'part_kind'}]}")


def _messages_of(document: Any) -> list[Any] | None:
    if isinstance(document, dict) and isinstance(document.get("messages"), list):
        return list(document["messages"])
    if isinstance(document, dict) and _kind(document) in KINDS:
        return [document]
    if isinstance(document, list):
        return document
    return None


def _kind(message: dict[str, Any]) -> str | None:
    kind = message.get("kind")
    return kind if isinstance(kind, str) else None


def _is_message(value: Any) -> bool:
    return (
        isinstance(value, dict)
        and _kind(value) in KINDS
        and isinstance(value.get("parts"), list)
        and all(isinstance(p, dict) and isinstance(p.get("part_kind"), str) for p in value["parts"])
    )


def read(document: Any, out: Out) -> None:
    """Read a list of pydantic-ai messages (or one, or ``{"messages": [...]}``)."""
    messages = _messages_of(document)
    if not messages:
        raise Problem("", f"expected a list of pydantic-ai messages, got {json_type(document)}")
    prefix = "messages" if isinstance(document, dict) and "messages" in document else ""
    single = isinstance(document, dict) and "messages" not in document
    instructions: str | None = None
    for i, message in enumerate(messages):
        where = "" if single else f"{prefix}[{i}]"
        if not isinstance(message, dict):
            raise Problem(where, f"expected a message object, got {json_type(message)}")
        kind = _kind(message)
        if kind not in KINDS:
            raise Problem(
                where, f"'kind' must be 'request' or 'response', got {message.get('kind')!r}"
            )
        parts = message.get("parts")
        if not isinstance(parts, list):
            raise Problem(f"{where}.parts" if where else "parts", "missing 'parts' list")
        _foreign(message, where, out)
        if kind == "request":
            given = message.get("instructions")
            if isinstance(given, str) and given and given != instructions:
                at = f"{where}.instructions" if where else "instructions"
                out.add({"role": "system", "content": given}, at)
                instructions = given
            _request(parts, where, out)
        else:
            _response(parts, where, out)


def _foreign(message: dict[str, Any], where: str, out: Out) -> None:
    for key, value in message.items():
        if key not in METADATA and value not in (None, "", [], {}):
            out.note(
                f"{where}.{key}" if where else key,
                f"field {key!r}",
                f"{NAME} does not read it",
                value,
                unknown=True,
            )


def _part_at(where: str, k: int) -> str:
    return f"{where}.parts[{k}]" if where else f"parts[{k}]"


def _request(parts: list[Any], where: str, out: Out) -> None:
    """A request: each part is a message of its own (system, user, tool result)."""
    for k, part in enumerate(parts):
        at = _part_at(where, k)
        kind = part.get("part_kind") if isinstance(part, dict) else None
        if not isinstance(kind, str):
            raise Problem(at, "part without a string 'part_kind'")
        if kind == "system-prompt":
            out.add({"role": "system", "content": _text(part.get("content"), at, out)}, at)
        elif kind == "user-prompt":
            out.add({"role": "user", "content": _user_content(part.get("content"), at, out)}, at)
        elif kind == "tool-return":
            call_id = _call_id(part, at)
            content = part.get("content")
            text = content if isinstance(content, str) else json_text(content)
            out.add({"role": "tool", "content": text, "tool_call_id": call_id}, at)
        elif kind == "retry-prompt":
            content = part.get("content")
            text = content if isinstance(content, str) else json_text(content)
            if isinstance(part.get("tool_name"), str) and part.get("tool_call_id"):
                message: Message = {
                    "role": "tool",
                    "content": ERROR_PREFIX + text,
                    "tool_call_id": _call_id(part, at),
                }
            else:  # a retry without a tool is sent to the model as a user turn
                message = {"role": "user", "content": text}
            out.add(message, at)
        elif kind in RESPONSE_PARTS:
            raise Problem(at, f"a {kind!r} part belongs to a response, not a request")
        else:
            _unknown(part, kind, at, out)


def _response(parts: list[Any], where: str, out: Out) -> None:
    """A response: one assistant message (texts joined, calls in order)."""
    texts: list[str] = []
    calls: list[dict[str, Any]] = []
    for k, part in enumerate(parts):
        at = _part_at(where, k)
        kind = part.get("part_kind") if isinstance(part, dict) else None
        if not isinstance(kind, str):
            raise Problem(at, "part without a string 'part_kind'")
        if kind == "text":
            texts.append(_text(part.get("content"), at, out))
        elif kind == "tool-call":
            name = part.get("tool_name")
            if not isinstance(name, str):
                raise Problem(at, "tool-call part without a string 'tool_name'")
            calls.append(
                {
                    "id": _call_id(part, at),
                    "type": "function",
                    "function": {"name": name, "arguments": arguments_text(part.get("args"))},
                }
            )
        elif kind == "thinking":
            out.note(
                at,
                "thinking part",
                "model reasoning is not a conversation message",
                part.get("content", part),
            )
        elif kind == "file":
            content = part.get("content")
            media = content.get("media_type") if isinstance(content, dict) else None
            texts.append(marker("file", media))
        elif kind in ("builtin-tool-call", "builtin-tool-return"):
            body = part.get("args") if kind == "builtin-tool-call" else part.get("content")
            texts.append(marker(f"{kind} {part.get('tool_name')}", part.get("tool_call_id"), body))
        elif kind in REQUEST_PARTS:
            raise Problem(at, f"a {kind!r} part belongs to a request, not a response")
        else:
            _unknown(part, kind, at, out, texts)
    message: Message = {"role": "assistant", "content": "\n".join(texts) if texts else None}
    if calls:
        message["tool_calls"] = calls
    elif not texts:
        message["content"] = ""
    out.add(message, where or "")


def _call_id(part: dict[str, Any], at: str) -> Any:
    call_id = part.get("tool_call_id")
    if call_id is None:
        raise Problem(at, f"{part.get('part_kind')} part without 'tool_call_id'")
    return call_id


def _text(value: Any, at: str, out: Out) -> str:
    if isinstance(value, str):
        return value
    raise Problem(f"{at}.content", f"expected a string, got {json_type(value)}")


def _user_content(value: Any, at: str, out: Out) -> str:
    """A user prompt: a string, or a list of strings and media objects (shown as markers)."""
    if isinstance(value, str):
        return value
    if not isinstance(value, list):
        raise Problem(f"{at}.content", f"expected a string or a list, got {json_type(value)}")
    texts: list[str] = []
    for k, item in enumerate(value):
        if isinstance(item, str):
            texts.append(item)
        elif isinstance(item, dict) and isinstance(item.get("kind"), str):
            ident = item.get("url") or item.get("media_type") or item.get("identifier")
            texts.append(marker(item["kind"], ident))
        else:
            raise Problem(f"{at}.content[{k}]", f"expected text or a media object, got {item!r}")
    return "\n".join(texts)


def _unknown(
    part: dict[str, Any], kind: str, at: str, out: Out, texts: list[str] | None = None
) -> None:
    content = part.get("content")
    if texts is not None:
        texts.append(content if isinstance(content, str) else f"[{kind}]")
    out.note(
        at,
        f"unknown part kind {kind!r}",
        f"{NAME} has no such part kind",
        part,
        unknown=True,
    )
