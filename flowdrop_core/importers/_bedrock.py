"""Amazon Bedrock Converse messages (request bodies and responses).

Messages are ``{"role": "user"|"assistant", "content": [blocks]}`` whose
blocks have one key each: ``text``, ``toolUse`` (``toolUseId``, ``name``,
``input``), ``toolResult`` (``toolUseId``, ``content`` of ``text`` /
``json`` blocks, ``status``), media (``image``, ``document``, ``video``),
``reasoningContent``. The top level is a request (``messages``, ``system``),
a response (``output.message``), or a bare list of messages.
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
    role_of,
)
from flowdrop_core.importers._claims import Claim, Miss, Verdict, each, key_miss

NAME = "bedrock"
EXPECTS = (
    "Bedrock Converse {'messages': [{'role', 'content': [{'text'|'toolUse'|'toolResult': ...}]}]} "
    "or a response with 'output.message'"
)

MEDIA = ("image", "document", "video")
QUIET = frozenset({"cachePoint"})


#: Block fields of Converse content (every block has one of them).
BLOCK_KEYS = frozenset(
    {"text", "toolUse", "toolResult", *MEDIA, "reasoningContent", *QUIET, "guardContent",
     "citationsContent"}
)  # fmt: skip


def claims(document: Any) -> Verdict:
    """Converse messages (``role`` user or assistant, ``content`` a list of untyped blocks),
    bare, in a request (``messages``) or in a response (``output.message``), with at least
    one block carrying ``text``, ``toolUse``, ``toolResult``, media or ``reasoningContent``."""
    if isinstance(document, list):
        messages, verdict = document, each(document, "", message_miss, "a list of messages")
    elif not isinstance(document, dict):
        return Miss("", f"expected a list of messages or a request, got {json_type(document)}")
    elif "messages" in document:
        messages = document["messages"]
        verdict = each(messages, "messages", message_miss, "a request", score=2)
        output = document.get("output")
        if isinstance(verdict, Claim) and isinstance(output, dict) and "message" in output:
            missed = message_miss(output["message"], "output.message")
            verdict = verdict if missed is None else Miss(missed.where, missed.what, 2)
            messages = [*messages, output["message"]]
    elif isinstance(document.get("output"), dict) and "message" in document["output"]:
        message = document["output"]["message"]
        missed = message_miss(message, "output.message")
        if missed is not None:
            return Miss(missed.where, missed.what, 2)
        messages, verdict = [message], Claim("a response")
    else:
        return Miss("", "no 'messages' or 'output.message' at the top level")
    if isinstance(verdict, Claim) and not any(
        BLOCK_KEYS.intersection(block) for message in messages for block in message["content"]
    ):
        return Miss("", f"no block carries any of {', '.join(sorted(BLOCK_KEYS))}", 1)
    return verdict


def message_miss(item: Any, where: str) -> Miss | None:
    """``None`` when ``item`` looks like a Converse message."""
    missed = key_miss(item, where, ("role", "content"), "a message object")
    if missed is not None:
        return missed
    if item["role"] not in ("user", "assistant"):
        return Miss(where, f"role {item['role']!r}: Converse messages are user or assistant")
    content = item["content"]
    if not isinstance(content, list):
        return Miss(f"{where}.content", "expected a list of content blocks")
    for k, block in enumerate(content):
        at = f"{where}.content[{k}]"
        if not isinstance(block, dict) or "type" in block:
            return Miss(at, "not an untyped Converse block")
    return None


def read(document: Any, out: Out) -> None:
    """Read a request, a response or a list of messages."""
    if isinstance(document, list):
        _messages(document, "", out)
        return
    if not isinstance(document, dict):
        raise Problem(
            "", f"expected a list of messages or a request object, got {json_type(document)}"
        )
    if "messages" not in document and not isinstance(document.get("output"), dict):
        raise Problem("", "no 'messages' or 'output.message' at the top level")
    if "system" in document:
        system = document["system"]
        if not isinstance(system, list):
            raise Problem("system", f"expected a list of system blocks, got {json_type(system)}")
        texts = []
        for k, block in enumerate(system):
            if not isinstance(block, dict) or not isinstance(block.get("text"), str):
                if isinstance(block, dict) and set(block) <= QUIET:
                    continue
                raise Problem(f"system[{k}]", "expected a {'text': ...} block")
            texts.append(block["text"])
        if texts:
            out.add({"role": "system", "content": "\n".join(texts)}, "system")
    if "messages" in document:
        if not isinstance(document["messages"], list):
            raise Problem("messages", f"expected a list, got {json_type(document['messages'])}")
        _messages(document["messages"], "messages", out)
    output = document.get("output")
    if isinstance(output, dict):
        if "message" not in output:
            raise Problem("output", "missing 'message'")
        _message(output["message"], "output.message", out)


def _messages(items: list[Any], prefix: str, out: Out) -> None:
    for i, item in enumerate(items):
        _message(item, f"{prefix}[{i}]", out)


def _message(item: Any, where: str, out: Out) -> None:
    if not isinstance(item, dict):
        raise Problem(where, f"expected a message object, got {json_type(item)}")
    if "role" not in item:
        raise Problem(where, "missing 'role'")
    role = role_of(item["role"], where, ("user", "assistant"), {})
    out.foreign(item, where, ("role", "content"), NAME)
    content = item.get("content")
    if not isinstance(content, list):
        raise Problem(
            f"{where}.content", f"expected a list of content blocks, got {json_type(content)}"
        )
    texts: list[str] = []
    calls: list[dict[str, Any]] = []
    results = 0
    for k, block in enumerate(content):
        at = f"{where}.content[{k}]"
        if not isinstance(block, dict):
            raise Problem(at, f"expected a content block object, got {json_type(block)}")
        if "type" in block:
            raise Problem(at, "a block with 'type' is not a Converse block")
        if isinstance(block.get("text"), str):
            texts.append(block["text"])
        elif role == "assistant" and _server_side(block):
            kind, body = next((k, v) for k, v in block.items() if k in ("toolUse", "toolResult"))
            texts.append(
                marker(
                    f"{kind} {body.get('type')}",
                    body.get("toolUseId"),
                    {k: v for k, v in body.items() if k not in ("toolUseId", "type")},
                )
            )
        elif isinstance(block.get("toolUse"), dict):
            use = block["toolUse"]
            if "toolUseId" not in use:
                raise Problem(f"{at}.toolUse", "toolUse without 'toolUseId'")
            calls.append(
                {
                    "id": use["toolUseId"],
                    "type": "function",
                    "function": {
                        "name": use.get("name"),
                        "arguments": arguments_text(use.get("input")),
                    },
                }
            )
        elif isinstance(block.get("toolResult"), dict):
            out.add(_result(block["toolResult"], f"{at}.toolResult", out), at)
            results += 1
        elif any(key in block for key in MEDIA):
            texts.append(f"[{next(key for key in MEDIA if key in block)}]")
        elif "reasoningContent" in block:
            reasoning = block["reasoningContent"]
            text = (
                reasoning.get("reasoningText", {}).get("text")
                if isinstance(reasoning, dict) and isinstance(reasoning.get("reasoningText"), dict)
                else None
            )
            out.note(
                at,
                "reasoningContent block",
                "model reasoning is not a conversation message",
                text if isinstance(text, str) else reasoning,
            )
        elif set(block) <= QUIET:
            continue
        else:
            out.note(
                at,
                f"unknown content block ({', '.join(map(str, block))})",
                f"{NAME} has no such block",
                block,
                unknown=True,
            )
            texts.append(f"[{next(iter(block), 'block')}]")
    if role == "user" and results and not texts:
        return
    message: Message = {"role": role, "content": "\n".join(texts) if texts or not calls else None}
    if calls:
        if role != "assistant":
            raise Problem(where, "toolUse in a user message; only the assistant calls tools")
        message["tool_calls"] = calls
    out.add(message, where)


def _server_side(block: dict[str, Any]) -> bool:
    """A ``toolUse``/``toolResult`` the provider ran itself (Nova grounding: ``type`` set,
    or a result inside the assistant's own message)."""
    if isinstance(block.get("toolResult"), dict):
        return True
    use = block.get("toolUse")
    return isinstance(use, dict) and isinstance(use.get("type"), str) and use["type"] != "tool_use"


def _result(result: dict[str, Any], where: str, out: Out) -> Message:
    """A ``toolResult`` block as a ``tool`` message (``json`` blocks as JSON text)."""
    if "toolUseId" not in result:
        raise Problem(where, "toolResult without 'toolUseId'")
    parts = result.get("content", [])
    if not isinstance(parts, list):
        raise Problem(f"{where}.content", f"expected a list, got {json_type(parts)}")
    texts: list[str] = []
    for k, part in enumerate(parts):
        at = f"{where}.content[{k}]"
        if isinstance(part, dict) and isinstance(part.get("text"), str):
            texts.append(part["text"])
        elif isinstance(part, dict) and "json" in part:
            texts.append(json_text(part["json"]))
        elif isinstance(part, dict) and any(key in part for key in MEDIA):
            texts.append(f"[{next(key for key in MEDIA if key in part)}]")
        else:
            out.note(
                at, "unknown tool result block", f"{NAME} has no such block", part, unknown=True
            )
    content = "\n".join(texts)
    if result.get("status") == "error":
        content = ERROR_PREFIX + content
    return {"role": "tool", "content": content, "tool_call_id": result["toolUseId"]}
