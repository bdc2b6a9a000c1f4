"""Text to message (MEM-16): how a node turns text plus a role into one message."""

from __future__ import annotations

from typing import Any

from flowdrop_core._ids import usable_id
from flowdrop_core.messages import ROLES, content_is_empty

__all__ = ["text_to_message"]


def text_to_message(
    text: str | None, role: Any = "user", tool_call_id: Any = None
) -> dict[str, Any] | None:
    """Return one provider-flat message for ``text``, or ``None`` when there is no text.

    MEM-16: a role outside ``user/assistant/system/tool`` (or none, or any
    value that is not a string: a list, an object, a number) becomes
    ``user``; a tool call id is kept only on role ``tool``, read by
    :func:`~flowdrop_core._ids.usable_id` (trimmed, canonical) and dropped when
    it is not an id (blank, ``"0"``, invisible-only, ``False``, a list ...);
    empty content (``None`` or blank) yields no message.

    Raises ``ValueError`` when ``text`` is neither a string nor ``None``: a
    number or an object is not text, and guessing how to print it would put
    words in the sender's mouth.
    """
    if text is not None and not isinstance(text, str):
        raise ValueError(f"text must be a string or null, got {_json_type(text)}")
    if content_is_empty(text):
        return None
    role = role if isinstance(role, str) and role in ROLES else "user"
    message: dict[str, Any] = {"role": role, "content": text}
    if role == "tool":
        cid = usable_id(tool_call_id)  # trimmed; blank (and "0", MEM-11) is no id
        if cid is not None:
            message["tool_call_id"] = cid
    return message


def _json_type(value: Any) -> str:
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, list | tuple):
        return "a list"
    if isinstance(value, dict):
        return "an object"
    return f"a value of type {type(value).__name__}"
