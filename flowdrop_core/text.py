"""Text to message (MEM-16), and text shown as it is: controls that act become their escapes."""

from __future__ import annotations

import re
from typing import Any

from flowdrop_core._ids import usable_id
from flowdrop_core.messages import ROLES, content_is_empty

__all__ = ["text_to_message", "visible"]

#: Characters a terminal or a page would act on or hide rather than show: C0/C1
#: controls but the newline (ESC starts colour, cursor and title sequences), bidi overrides and
#: isolates (which reorder what is shown: ``Done \u202eevil\u202c`` reads "Done
#: live"), zero-width characters, and lone surrogates (undecodable bytes in a file
#: name), which no UTF-8 stream can encode.
_UNPRINTABLE = re.compile(
    "[\x00-\x09\x0b-\x1f\x7f-\x9f\u200b-\u200f\u202a-\u202e\u2060-\u2069\ufeff\ud800-\udfff]"
)


def visible(text: str, keep: str = "") -> str:
    r"""``text`` with each such character (see above) as its escape, the ones in ``keep`` left.

    ``\x1b``, ``\u202e``, ``\u200b``: a message or an id cannot recolour a
    terminal, reorder a line or hide a character, and what is shown is what
    the bytes hold. Newlines always stay; the inspector keeps tabs and
    carriage returns too (``keep="\t\r"``).
    """

    def escape(match: re.Match[str]) -> str:
        char = match.group()
        return char if char in keep else char.encode("unicode_escape").decode("ascii")

    return _UNPRINTABLE.sub(escape, text)


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
