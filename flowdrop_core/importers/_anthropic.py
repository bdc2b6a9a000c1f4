"""Anthropic Messages, including provider-side (server tool) blocks.

An object with ``messages`` (and an optional ``system``), a bare list of
messages, or one response object (``{"type": "message", "role":
"assistant", "content": [...]}``). Assistant ``text`` blocks are the content
and ``tool_use`` blocks the tool calls; a user message's ``tool_result``
blocks become one ``tool`` message each, then its text one user message.
Server tool blocks (``server_tool_use``, ``web_search_tool_result``,
``code_execution_tool_result``, MCP blocks, ...) become visible markers in
the assistant's content; thinking blocks are notes.
"""

from __future__ import annotations

from typing import Any

from flowdrop_core.importers._base import (
    ERROR_PREFIX,
    Message,
    Out,
    Problem,
    arguments_text,
    join,
    json_type,
    kind_of,
    marker,
    parts_text,
    role_of,
)
from flowdrop_core.importers._claims import Claim, Miss, Verdict, each, key_miss

NAME = "anthropic"
EXPECTS = (
    "an object with 'messages' (role user/assistant, content blocks with 'type') and "
    "optional 'system', or one response object"
)

MEDIA = frozenset({"image", "document"})
THINKING = {
    "thinking": "model reasoning is not a conversation message",
    "redacted_thinking": "encrypted model reasoning is not a conversation message",
}
#: Server tool calls the provider runs itself: shown as markers, never fatal.
SERVER_CALLS = frozenset({"server_tool_use", "mcp_tool_use"})
#: Fields of server tool results that are opaque to people; left out of the marker.
OPAQUE = frozenset({"encrypted_content", "encrypted_index", "signature"})
KNOWN = ("role", "content", "id", "type", "model", "stop_reason", "stop_sequence", "usage")


def claims(document: Any) -> Verdict:
    """An Anthropic document: one response message (``type: message``), a request with
    ``messages``, or a list of messages; every message has ``role`` user or assistant and
    ``content``, a string or a list of blocks each with a string ``type``."""
    if isinstance(document, dict) and document.get("type") == "message" and "role" in document:
        missed = message_miss(document, "")
        return Claim("a response message") if missed is None else missed
    if isinstance(document, dict) and "messages" in document:
        return each(document["messages"], "messages", message_miss, "a request body", score=2)
    if isinstance(document, list):
        return each(document, "", message_miss, "a list of messages")
    return Miss("", f"expected a list of messages or an object with 'messages', "
                f"got {json_type(document)}")  # fmt: skip


def message_miss(item: Any, where: str) -> Miss | None:
    """``None`` when ``item`` looks like an Anthropic message."""
    missed = key_miss(item, where, ("role", "content"), "a message object")
    if missed is not None:
        return missed
    if item["role"] not in ("user", "assistant"):
        return Miss(where, f"role {item['role']!r}: Anthropic messages are user or assistant")
    content = item["content"]
    if isinstance(content, str):
        return None
    if not isinstance(content, list):
        return Miss(join(where, "content"), "expected a string or a list of blocks")
    for k, block in enumerate(content):
        if not isinstance(block, dict) or not isinstance(block.get("type"), str):
            return Miss(join(where, f"content[{k}]"), "a block without a string 'type'")
    return None


def read(document: Any, out: Out) -> None:
    """Read a request body, a list of messages or one response message."""
    if isinstance(document, dict) and document.get("type") == "message" and "role" in document:
        read_message(document, "", out)
        return
    if isinstance(document, dict) and "system" in document:
        system = document["system"]
        if isinstance(system, list):
            system = parts_text(system, "system", out, NAME, {"text": "text"})
        elif not isinstance(system, str):
            raise Problem(
                "system", f"expected a string or a list of text blocks, got {json_type(system)}"
            )
        if system:
            out.add({"role": "system", "content": system}, "system")
    if isinstance(document, list):
        items, prefix = document, ""
    elif isinstance(document, dict) and "messages" in document:
        items, prefix = document["messages"], "messages"
        if not isinstance(items, list):
            raise Problem("messages", f"expected a list, got {json_type(items)}")
    elif isinstance(document, dict):
        raise Problem("", "no 'messages' list at the top level")
    else:
        raise Problem(
            "",
            f"expected a list of messages or an object with 'messages', got {json_type(document)}",
        )
    for i, item in enumerate(items):
        read_message(item, f"{prefix}[{i}]", out)


def read_message(item: Any, where: str, out: Out) -> None:
    """One Anthropic message: one assistant message, or a user's results then its text."""
    if not isinstance(item, dict):
        raise Problem(where, f"expected a message object, got {json_type(item)}")
    if "role" not in item:
        raise Problem(where, "missing 'role'")
    role = role_of(item["role"], where, ("user", "assistant"), {})
    if "content" not in item:
        raise Problem(where, "missing 'content'")
    out.foreign(item, where, KNOWN, NAME)
    content = item["content"]
    if isinstance(content, str):
        out.add({"role": role, "content": content}, where)
        return
    if not isinstance(content, list):
        raise Problem(
            join(where, "content"),
            f"expected a string or a list of content blocks, got {json_type(content)}",
        )
    if role == "assistant":
        out.add(assistant(content, where, out), where)
    else:
        user(content, where, out)


def _block_kind(block: Any, where: str) -> str:
    if not isinstance(block, dict):
        raise Problem(where, f"expected a content block object, got {json_type(block)}")
    kind = kind_of(block)
    if kind is None:
        raise Problem(where, "content block without a string 'type'")
    return kind


def _text(block: dict[str, Any], where: str) -> str:
    text = block.get("text")
    if not isinstance(text, str):
        raise Problem(where, "text block without a string 'text'")
    return text


def _server_marker(kind: str, block: dict[str, Any], where: str, out: Out) -> str:
    """A server tool block as visible text; opaque fields are a note."""
    ident = block.get("id", block.get("tool_use_id"))
    body = {k: v for k, v in block.items() if k not in ("type", "id", "tool_use_id")}
    if kind in SERVER_CALLS:
        name = block.get("name")
        body = block.get("input", {})
        kind = f"{kind} {name}" if isinstance(name, str) else kind
    hidden = _strip_opaque(body)
    if hidden:
        out.note(
            where, f"{kind} opaque fields", "encrypted content is not shown in the marker", hidden
        )
    return marker(kind, ident, body)


def _strip_opaque(value: Any) -> list[Any]:
    """Remove opaque fields in place (recursively); return what was removed."""
    removed: list[Any] = []
    if isinstance(value, dict):
        for key in [k for k in value if k in OPAQUE]:
            removed.append(value.pop(key))
        for inner in value.values():
            removed.extend(_strip_opaque(inner))
    elif isinstance(value, list):
        for inner in value:
            removed.extend(_strip_opaque(inner))
    return removed


def _other_block(kind: str, block: dict[str, Any], at: str, out: Out) -> str | None:
    """Blocks other than text/tool_use/tool_result: text for the message, or ``None``."""
    if kind in MEDIA:
        return f"[{kind}]"
    if kind in THINKING:
        text = block.get("thinking")
        out.note(at, f"{kind} block", THINKING[kind], text if isinstance(text, str) else block)
        return None
    if kind in SERVER_CALLS or kind.endswith("_tool_result") or kind == "container_upload":
        return _server_marker(kind, dict(block), at, out)
    text = block.get("text")
    out.note(
        at,
        f"unknown content block type {kind!r}",
        f"{NAME} has no such block type; "
        + ("its text is kept" if isinstance(text, str) else "shown as a marker"),
        block,
        unknown=True,
    )
    return text if isinstance(text, str) else f"[{kind}]"


def assistant(blocks: list[Any], where: str, out: Out) -> Message:
    """An assistant message from its content blocks."""
    texts: list[str] = []
    calls: list[dict[str, Any]] = []
    for k, block in enumerate(blocks):
        at = join(where, f"content[{k}]")
        kind = _block_kind(block, at)
        if kind == "text":
            texts.append(_text(block, at))
        elif kind == "tool_use":
            for required in ("id", "name"):
                if required not in block:
                    raise Problem(at, f"tool_use block without {required!r}")
            calls.append(
                {
                    "id": block["id"],
                    "type": "function",
                    "function": {
                        "name": block["name"],
                        "arguments": arguments_text(block.get("input", {})),
                    },
                }
            )
        elif kind == "tool_result":
            raise Problem(at, "tool_result block in an assistant message")
        else:
            text = _other_block(kind, block, at, out)
            if text is not None:
                texts.append(text)
    message: Message = {
        "role": "assistant",
        "content": "\n".join(texts) if texts or not calls else None,
    }
    if calls:
        message["tool_calls"] = calls
    return message


def user(blocks: list[Any], where: str, out: Out) -> None:
    """A user message's blocks: one tool message per tool_result, then the text as a user turn."""
    texts: list[str] = []
    results = 0
    for k, block in enumerate(blocks):
        at = join(where, f"content[{k}]")
        kind = _block_kind(block, at)
        if kind == "tool_result":
            if "tool_use_id" not in block:
                raise Problem(at, "tool_result block without 'tool_use_id'")
            content = block.get("content", "")
            if isinstance(content, list):
                content = parts_text(content, f"{at}.content", out, NAME, {"text": "text"}, MEDIA)
            elif not isinstance(content, str):
                raise Problem(
                    f"{at}.content",
                    f"expected a string or a list of blocks, got {json_type(content)}",
                )
            if block.get("is_error") is True:
                content = ERROR_PREFIX + content
            out.add({"role": "tool", "content": content, "tool_call_id": block["tool_use_id"]}, at)
            results += 1
        elif kind == "text":
            texts.append(_text(block, at))
        elif kind == "tool_use":
            raise Problem(at, "tool_use block in a user message")
        else:
            text = _other_block(kind, block, at, out)
            if text is not None:
                texts.append(text)
    if texts or not results:
        out.add({"role": "user", "content": "\n".join(texts)}, where)
