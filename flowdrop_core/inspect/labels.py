"""Readable labels: a step or a message in one line, a tool call as ``name(arguments)``.

The timeline's row label and the chat view's call lines come from here, so a
step reads ``assistant calls get_weather({"city": "Paris"})`` instead of
``assistant[calls 1]: null``, and an assistant turn with only calls shows
the calls instead of "(empty content)". Ids are read with the engine's own
readers (MEM-11), and an id the engine does not accept is named as such.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Mapping, Sequence
from typing import Any

from flowdrop_core._ids import usable_id
from flowdrop_core.messages import content_is_empty, read_call_function, read_call_id

__all__ = [
    "call_text",
    "entry_calls",
    "id_note",
    "message_label",
    "step_label",
]


def _one_line(text: str, width: int | None) -> str:
    """``text`` on one line, cut to ``width`` with ``…`` (``None``: whole, for a caller
    that clips with a note of what is left out, as the UI's tables do)."""
    flat = " ".join(text.split())
    return flat if width is None or len(flat) <= width else flat[: width - 1] + "…"


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, default=str, separators=(", ", ": "))


def _field(message: Mapping[str, Any], name: str) -> Any:
    """A field at top level or under ``metadata`` (the stored row's place for it)."""
    if message.get(name) is not None:
        return message.get(name)
    meta = message.get("metadata")
    return meta.get(name) if isinstance(meta, Mapping) else None


def id_note(value: Any) -> str:
    """An id as the engine reads it (MEM-11): the id, or the raw value and why it is none."""
    found = usable_id(value)
    if found is not None:
        return found
    if value is None:
        return "no id"
    return f"{_json(value)} (not an id, MEM-11)"


def call_text(call: Any, width: int | None = 200) -> str:
    """One tool call as ``name(arguments)``; arguments given as JSON text are shown as parsed."""
    if not isinstance(call, Mapping):
        return _one_line(_json(call), width)
    name, arguments = read_call_function(call)
    if isinstance(arguments, str):
        with contextlib.suppress(ValueError):  # else shown as the text it is
            arguments = json.loads(arguments)
    args = (
        "" if arguments is None else (arguments if isinstance(arguments, str) else _json(arguments))
    )
    label = name if isinstance(name, str) and name.strip() else "(unnamed call)"
    return _one_line(f"{label}({args})", width)


def entry_calls(entry: Any) -> list[str]:
    """The tool calls an entry declares, each as ``id: name(arguments)``, for the chat view."""
    if not isinstance(entry, Mapping):
        return []
    calls = _field(entry, "tool_calls")
    if not isinstance(calls, list):
        return []
    out = []
    for call in calls:
        if isinstance(call, Mapping):
            raw = call.get("tool_call_id", call.get("id"))
            cid = read_call_id(call) or id_note(raw)
        else:
            cid = "not a call object"
        out.append(f"{cid}: {call_text(call)}")
    return out


def message_label(message: Any, width: int | None = 80) -> str:
    """One message in one line: role, then calls, result id or content."""
    if not isinstance(message, Mapping):
        return _one_line(_json(message), width)
    role = message.get("role")
    role_text = role if isinstance(role, str) else _json(role)
    content = message.get("content")
    text = content if isinstance(content, str) else ("" if content is None else _json(content))
    calls = _field(message, "tool_calls")
    if isinstance(calls, list) and calls:
        head = f"{role_text} calls " + ", ".join(call_text(c, width) for c in calls)
        return _one_line(head + (f" · {text}" if text.strip() else ""), width)
    answered = _field(message, "tool_call_id")
    if role == "tool" or answered is not None:
        healed = " (placeholder)" if _field(message, "healed") else ""
        return _one_line(f"{role_text} result for {id_note(answered)}{healed}: {text}", width)
    if content_is_empty(content):
        return f"{role_text}: (empty)" + (" — a pure read (MEM-16)" if role == "user" else "")
    return _one_line(f"{role_text}: {text}", width)


def step_label(incoming: Sequence[Any], width: int | None = 80) -> str:
    """A step's incoming messages in one line (``(nothing)`` for an empty batch)."""
    if not incoming:
        return "(nothing)"
    if len(incoming) == 1:
        return message_label(incoming[0], width)
    first = message_label(incoming[0], width)
    return _one_line(f"{len(incoming)} messages: {first} …", width)
