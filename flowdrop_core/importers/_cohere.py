"""Cohere v2 Chat (``POST /v2/chat``): request bodies, response objects and recordings of both.

A request is ``{"messages": [...]}`` with roles ``system``, ``user``,
``assistant`` and ``tool``; content is a string or a list of parts
(``text``, ``thinking``, ``image_url``, ``document``). An assistant message
may carry ``tool_plan`` (the text the model wrote before calling tools) and
``tool_calls`` (OpenAI shape); a ``tool`` message answers ``tool_call_id``
with a string or ``document`` parts. A response is ``{"id", "finish_reason",
"message": {"role": "assistant", "content", "tool_plan", "tool_calls",
"citations"}}``. A list of requests each followed by its response is a
recording: what the last call saw, then its reply. The tool plan is the
assistant message's text when it has no text of its own (else a note);
thinking and citations are notes.
"""

from __future__ import annotations

from typing import Any

from flowdrop_core.importers._base import (
    Message,
    Out,
    Problem,
    json_text,
    json_type,
    last_call,
    marker,
    openai_calls,
    role_of,
)
from flowdrop_core.importers._claims import Claim, Miss, Verdict

NAME = "cohere"
EXPECTS = (
    "Cohere v2 chat: a request {'messages'}, a response {'message', 'finish_reason'} "
    "(tool_plan, tool_calls), or a list of requests and responses"
)

ROLES = ("system", "user", "assistant", "tool")
KNOWN = ("role", "content", "tool_plan", "tool_calls", "tool_call_id", "citations")
COHERE_PARTS = frozenset({"thinking", "document"})


def _is_response(value: Any) -> bool:
    return (
        isinstance(value, dict)
        and isinstance(value.get("message"), dict)
        and "finish_reason" in value
        and "choices" not in value
    )


def _is_request(value: Any) -> bool:
    return isinstance(value, dict) and isinstance(value.get("messages"), list)


def _cohere_only(messages: list[Any]) -> bool:
    """A message only Cohere writes: ``tool_plan``, a ``document`` part, or a ``thinking``
    part without Anthropic's ``signature``."""
    for message in messages:
        if not isinstance(message, dict):
            continue
        if "tool_plan" in message:
            return True
        content = message.get("content")
        if isinstance(content, list) and any(
            isinstance(p, dict)
            and isinstance(p.get("type"), str)
            and p["type"] in COHERE_PARTS
            and "signature" not in p
            and "redacted" not in str(p.get("type"))
            for p in content
        ):
            return True
    return False


def claims(document: Any) -> Verdict:
    """The signature: a Cohere response, a recording holding one, or a request whose
    messages use a field or part only Cohere has."""
    if _is_response(document):
        return Claim("a response")
    if isinstance(document, list) and document:
        if all(_is_request(v) or _is_response(v) for v in document) and any(
            _is_response(v) for v in document
        ):
            return Claim("a recording")
        return Miss("", "not requests ('messages') and responses ('message', 'finish_reason')")
    if _is_request(document) and "system" in document:
        return Miss("system", "a top-level system prompt is Anthropic's layout, not Cohere's")
    if _is_request(document) and _cohere_only(document["messages"]):
        return Claim("a request")
    return Miss("", "no 'message' with 'finish_reason', and no tool_plan / thinking / document")


def read(document: Any, out: Out) -> None:
    """Read a request, a response, or a list of them (a recording)."""
    if not isinstance(claims(document), Claim):
        raise Problem(
            "",
            f"expected a Cohere v2 chat request, response or recording, got {json_type(document)}",
        )
    if isinstance(document, list):
        calls: list[tuple[str, Out]] = []
        for i, value in enumerate(document):
            if _is_request(value) or not calls:
                calls.append((f"call [{i}]", Out()))
            _exchange(value, f"[{i}].", calls[-1][1])
        last_call(calls, out, "an earlier call held it; the last call does not")
    else:
        _exchange(document, "", out)


def _exchange(value: dict[str, Any], prefix: str, out: Out) -> None:
    if _is_request(value):
        for i, message in enumerate(value["messages"]):
            where = f"{prefix}messages[{i}]"
            out.add(_message(message, where, out), where)
    if _is_response(value):
        where = f"{prefix}message"
        out.add(_message(value["message"], where, out), where)


def _message(message: Any, where: str, out: Out) -> Message:
    if not isinstance(message, dict):
        raise Problem(where, f"expected a message object, got {json_type(message)}")
    role = role_of(message.get("role"), where, ROLES, {})
    out.foreign(message, where, KNOWN, NAME)
    text = _content(message.get("content"), f"{where}.content", out)
    plan = message.get("tool_plan")
    if isinstance(plan, str) and plan:
        if text:
            out.note(f"{where}.tool_plan", "tool plan", "the message has text of its own", plan)
        else:
            text = plan
    result: Message = {"role": role, "content": text or None}
    calls = openai_calls(message.get("tool_calls"), f"{where}.tool_calls")
    if calls:
        if role != "assistant":
            raise Problem(f"{where}.tool_calls", f"tool calls on a {role} message")
        result["tool_calls"] = calls
    elif role != "tool" and result["content"] is None:
        result["content"] = ""
    if role == "tool":
        if "tool_call_id" not in message:
            raise Problem(where, "tool message without 'tool_call_id'")
        result["tool_call_id"] = message["tool_call_id"]
        result["content"] = text
    if message.get("citations"):
        out.note(
            f"{where}.citations",
            "citations",
            "sources of the text, not a message",
            message["citations"],
        )
    return result


def _content(content: Any, where: str, out: Out) -> str:
    """A string, or parts: text joined, documents as their data, images as markers."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        raise Problem(where, f"expected a string or a list of parts, got {json_type(content)}")
    texts: list[str] = []
    for k, part in enumerate(content):
        at = f"{where}[{k}]"
        kind = part.get("type") if isinstance(part, dict) else None
        if kind == "text" and isinstance(part.get("text"), str):
            texts.append(part["text"])
        elif kind == "thinking":
            out.note(
                at,
                "thinking part",
                "model reasoning is not a conversation message",
                part.get("thinking", part),
            )
        elif kind == "document":
            document = part.get("document")
            data = document.get("data") if isinstance(document, dict) else document
            texts.append(data if isinstance(data, str) else json_text(data))
        elif kind == "image_url":
            texts.append(marker("image_url"))
        else:
            text = part.get("text") if isinstance(part, dict) else None
            texts.append(text if isinstance(text, str) else f"[{kind}]")
            out.note(
                at, f"unknown part type {kind!r}", f"{NAME} has no such part", part, unknown=True
            )
    return "\n".join(texts)
