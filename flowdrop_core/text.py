"""Text to message (MEM-16): how a node turns text plus a role into one message."""

from __future__ import annotations

from typing import Any

from flowdrop_core.ids import usable_id
from flowdrop_core.messages import ROLES, content_is_empty

__all__ = ["text_to_message"]


def text_to_message(
    text: str | None, role: str | None = "user", tool_call_id: Any = None
) -> dict[str, Any] | None:
    """Return one provider-flat message for ``text``, or ``None`` when there is no text.

    MEM-16: a role outside ``user/assistant/system/tool`` (or none) becomes
    ``user``; a tool call id is kept only on role ``tool``, trimmed, and
    dropped when blank (or otherwise not an id under MEM-11's rule, such as
    ``"0"`` or ``False``); empty content (``None`` or blank) yields no message.
    """
    if content_is_empty(text):
        return None
    role = role if role in ROLES else "user"
    message: dict[str, Any] = {"role": role, "content": text}
    if role == "tool":
        cid = usable_id(tool_call_id)  # trimmed; blank (and "0", MEM-11) is no id
        if cid is not None:
            message["tool_call_id"] = cid
    return message
