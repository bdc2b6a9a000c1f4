"""OpenAI Responses API items, including provider-side (hosted) tool items.

A list of items, or an object with ``input`` and/or ``output`` (input first);
a string ``instructions`` becomes a leading system message (a list of input
items is read first, like ``input``), a string ``input`` one user message. Client-side calls (``function_call``,
``custom_tool_call``, ``computer_call``, ``local_shell_call``, ...: anything
with a ``call_id``) become tool calls, consecutive ones folded into one
assistant message; their ``*_output`` items become tool results. Hosted tool
items the provider ran itself (web search, file search, code interpreter,
image generation, MCP calls) become a visible assistant marker, never an error.
"""

from __future__ import annotations

from typing import Any

from flowdrop_core.importers._base import (
    Message,
    Out,
    Problem,
    arguments_text,
    json_text,
    json_type,
    kind_of,
    marker,
    parts_text,
    role_of,
)
from flowdrop_core.importers._claims import Claim, Miss, Verdict, each

NAME = "openai-responses"
EXPECTS = (
    "a list of Responses items (type, role, content, call_id), or an object with 'input'/'output'"
)

ROLES = ("system", "user", "assistant")
ALIASES = {"developer": "system"}
TEXT_PARTS = {"input_text": "text", "output_text": "text", "text": "text", "refusal": "refusal"}
MEDIA_PARTS = frozenset({"input_image", "input_file", "input_audio"})
#: Fields of hosted tool items that are opaque to people; left out of the marker.
OPAQUE = frozenset({"type", "id", "encrypted_content", "result"})
#: Item types the provider runs itself (no client result follows).
HOSTED = frozenset(
    {
        "web_search_call",
        "file_search_call",
        "code_interpreter_call",
        "image_generation_call",
        "mcp_call",
        "mcp_list_tools",
        "mcp_approval_request",
        "mcp_approval_response",
        "tool_search_call",
        "tool_search_output",
    }
)
#: Client-side call types whose name is implied by the type.
CALL_NAMES = {"computer_call": "computer", "local_shell_call": "local_shell"}


def claims(document: Any) -> Verdict:
    """Responses items (each with a Responses ``type``: ``message``, ``reasoning``, a
    ``*_call`` or ``*_call_output``, a hosted tool item; or an easy input message with
    ``role`` and ``content``), bare or in a body's ``input`` / ``output`` lists."""
    if isinstance(document, list):
        return each(document, "", item_miss, "a list of items")
    if not isinstance(document, dict):
        return Miss("", f"expected a list of items or a body, got {json_type(document)}")
    if "input" not in document and "output" not in document:
        return Miss("", "no 'input' or 'output' list at the top level")
    verdict: Verdict = Claim("a request or response body")
    for key in ("input", "output"):
        value = document.get(key)
        if key == "input" and isinstance(value, str):
            continue
        if key in document:
            verdict = each(value, key, item_miss, "a body", score=2)
            if isinstance(verdict, Miss):
                return verdict
    return verdict


def is_item_type(kind: str) -> bool:
    """A Responses item type (what the reader reads, not a made-up one)."""
    return (
        kind in ("message", "reasoning")
        or kind in HOSTED
        or kind.endswith("_call")
        or kind.endswith("_call_output")
    )


def item_miss(item: Any, where: str) -> Miss | None:
    """``None`` when ``item`` looks like a Responses item."""
    if not isinstance(item, dict):
        return Miss(where, f"expected an item object, got {json_type(item)}")
    kind = item.get("type")
    if kind is None and "role" in item:
        return None if "content" in item else Miss(where, "a message without 'content'")
    if not isinstance(kind, str):
        return Miss(where, "no string 'type'")
    if not is_item_type(kind):
        return Miss(where, f"type {kind!r} is not a Responses item type")
    return None


def read(document: Any, out: Out) -> None:
    """Read a list of items, or a request/response object with ``input``/``output``."""
    sections: list[tuple[str, list[Any]]] = []
    if isinstance(document, list):
        sections.append(("", document))
    elif isinstance(document, dict):
        if "input" not in document and "output" not in document:
            raise Problem("", "no 'input' or 'output' list at the top level")
        instructions = document.get("instructions")
        if isinstance(instructions, str):
            if instructions:
                out.add({"role": "system", "content": instructions}, "instructions")
        elif isinstance(instructions, list):  # the API also takes a list of input items
            _read_items(instructions, "instructions", out)
        elif instructions is not None:
            raise Problem(
                "instructions",
                f"expected a string or a list of items, got {json_type(instructions)}",
            )
        for key in ("input", "output"):
            if key not in document:
                continue
            items = document[key]
            if isinstance(items, str) and key == "input":
                out.add({"role": "user", "content": items}, "input")
            elif isinstance(items, list):
                sections.append((key, items))
            else:
                raise Problem(key, f"expected a list of items, got {json_type(items)}")
    else:
        raise Problem(
            "", f"expected a list of items or an object with 'input', got {json_type(document)}"
        )
    for prefix, items in sections:
        _read_items(items, prefix, out)


def _read_items(items: list[Any], prefix: str, out: Out) -> None:
    folding: Message | None = None
    for i, item in enumerate(items):
        where = f"{prefix}[{i}]"
        if not isinstance(item, dict):
            raise Problem(where, f"expected an item object, got {json_type(item)}")
        kind = kind_of(item)
        if "type" in item and kind is None:
            raise Problem(where, f"item 'type' must be a string, got {json_type(item['type'])}")
        if kind is None and "role" in item:
            kind = "message"
        if kind is None:
            raise Problem(where, "missing 'type'")
        if _is_call(kind, item):
            call = _call(kind, item, where)
            if folding is None:
                folding = out.add({"role": "assistant", "content": None, "tool_calls": []}, where)
            else:
                out.origins[-1] += f"+{where}"
            folding["tool_calls"].append(call)
            continue
        folding = None
        if kind.endswith("_call_output") and "call_id" in item:
            out.add(_output(item, where, out), where)
        elif kind == "message":
            out.add(_message(item, where, out), where)
        elif kind == "reasoning":
            parts = item.get("summary")
            summary = (
                [s.get("text") for s in parts if isinstance(s, dict)]
                if isinstance(parts, list)
                else []
            )
            texts = [t for t in summary if isinstance(t, str)]
            out.note(
                where,
                "reasoning item",
                "model reasoning is not a conversation message",
                "\n".join(texts)
                if texts
                else {k: v for k, v in item.items() if k != "encrypted_content"},
            )
        elif kind in HOSTED or (kind.endswith("_call") and "call_id" not in item):
            body = {k: v for k, v in item.items() if k not in OPAQUE}
            out.add({"role": "assistant", "content": marker(kind, item.get("id"), body)}, where)
            if item.get("encrypted_content") or item.get("result"):
                out.note(
                    where,
                    f"{kind} opaque fields",
                    "encrypted or binary output is not shown in the marker",
                    {k: item[k] for k in ("encrypted_content", "result") if item.get(k)},
                )
        else:
            out.note(
                where,
                f"unknown item type {kind!r}",
                f"{NAME} has no such item type",
                item,
                unknown=True,
            )


def _is_call(kind: str, item: dict[str, Any]) -> bool:
    return kind == "function_call" or (
        kind.endswith("_call") and kind not in HOSTED and "call_id" in item
    )


def _message(item: dict[str, Any], where: str, out: Out) -> Message:
    """A ``message`` item (or an easy input message without ``type``)."""
    if "role" not in item:
        raise Problem(where, "missing 'role'")
    role = role_of(item["role"], where, ROLES, ALIASES)
    out.foreign(item, where, ("type", "role", "content", "id", "status"), NAME)
    content = item.get("content")
    if isinstance(content, list):
        content = parts_text(content, f"{where}.content", out, NAME, TEXT_PARTS, MEDIA_PARTS)
    elif not isinstance(content, str):
        raise Problem(
            f"{where}.content",
            f"expected a string or a list of content parts, got {json_type(content)}",
        )
    return {"role": role, "content": content}


def _call(kind: str, item: dict[str, Any], where: str) -> dict[str, Any]:
    """A client-side call item as an OpenAI Chat tool call (its ``call_id`` is the id)."""
    if "call_id" not in item:
        raise Problem(where, f"{kind} without 'call_id'")
    name = item.get("name", CALL_NAMES.get(kind, kind.removesuffix("_call")))
    if kind == "function_call" and "name" not in item:
        raise Problem(where, "function_call without 'name'")
    if "arguments" in item:
        arguments = item["arguments"]
    elif "input" in item:
        arguments = item["input"]
    else:
        arguments = item.get("action")
    return {
        "id": item["call_id"],
        "type": "function",
        "function": {"name": name, "arguments": arguments_text(arguments)},
    }


def _output(item: dict[str, Any], where: str, out: Out) -> Message:
    """A ``*_call_output`` item as a ``tool`` message."""
    if "output" not in item:
        raise Problem(where, f"{item['type']} without 'output'")
    output = item["output"]
    if isinstance(output, list):
        output = parts_text(output, f"{where}.output", out, NAME, TEXT_PARTS, MEDIA_PARTS)
    elif not isinstance(output, str):
        output = json_text(output)
    return {"role": "tool", "content": output, "tool_call_id": item["call_id"]}
