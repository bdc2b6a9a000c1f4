"""Shared pieces of every importer: notes, the reader's output, problems and small readers.

Every format is turned into provider-flat messages (OpenAI Chat shape)::

    {"role": ..., "content": str | None,
     "tool_calls": [{"id", "type": "function", "function": {"name", "arguments"}}],
     "tool_call_id": ...}

A reader fills an :class:`Out`: each message with its *origin* (where it came
from in the file) and an :class:`ImportNote` for everything of the source it
did not turn into a message part (nothing is lost silently).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from typing import Any

from flowdrop_core._errors import FlowdropError
from flowdrop_core.messages import read_call_function, read_call_id
from flowdrop_core.scenario import _json_type

__all__ = [
    "CONTENT_KEYS",
    "ERROR_PREFIX",
    "TOP_LEVEL",
    "ImportNote",
    "Message",
    "Out",
    "PendingCalls",
    "Problem",
    "arguments_text",
    "as_text",
    "join",
    "json_text",
    "json_type",
    "kind_of",
    "last_call",
    "marker",
    "openai_call",
    "openai_calls",
    "parts_text",
    "role_of",
]

Message = dict[str, Any]

#: Prefix marking a tool result the recording flagged as an error (``is_error``, ``status``).
ERROR_PREFIX = "[error] "

#: Keys that some format reads as conversation content. A reader that meets one it
#: does not read notes it (so detection prefers the format that reads it).
CONTENT_KEYS = frozenset(
    {
        "content",
        "parts",
        "text",
        "value",
        "tool_calls",
        "function_call",
        "tool_call_id",
        "additional_kwargs",
        "kwargs",
        "data",
        "message",
        "toolUse",
        "toolResult",
        "functionCall",
        "functionResponse",
        "function_response",
        "refusal",
        "audio",
        "arguments",
        "output",
        "response",
    }
)

json_type = _json_type

#: The origin of a message that is the whole document (one response object).
TOP_LEVEL = "(top level)"


@dataclass(frozen=True, slots=True)
class ImportNote:
    """Something of the source the import did not turn into a message, and why.

    ``where`` is its origin in the file (as for messages), ``what`` names it
    (``"reasoning item"``, ``"unknown content part type 'code'"``), ``why``
    says why it is not a message, and ``content`` is what was left out as text
    (its text, or its JSON), so it can still be read. ``unknown`` is true when
    the reader did not recognise it (an unknown part type, a field it does not
    read) rather than leaving it out on purpose (reasoning, a provider's
    alternative choice): detection prefers the format with fewer unknowns.
    """

    where: str
    what: str
    why: str
    content: str = ""
    unknown: bool = False

    def __str__(self) -> str:
        return f"{self.where or TOP_LEVEL}: {self.what}: {self.why}"

    def to_dict(self) -> dict[str, Any]:
        """The note as a JSON-ready dict (``where``, ``what``, ``why``, ``content``, ``unknown``)."""
        return {
            "where": self.where,
            "what": self.what,
            "why": self.why,
            "content": self.content,
            "unknown": self.unknown,
        }


class Problem(FlowdropError):
    """The first problem a reader hit: where in the file, and what."""

    def __init__(self, where: str, what: str) -> None:
        super().__init__(f"{where}: {what}" if where else what)
        self.where = where
        self.what = what


@dataclass
class Out:
    """What a reader produced: messages, their origins, and notes."""

    messages: list[Message] = field(default_factory=list)
    origins: list[str] = field(default_factory=list)
    notes: list[ImportNote] = field(default_factory=list)
    #: Call ids a reader made up (from origins) because the source has none.
    synthetic: set[str] = field(default_factory=set)

    def add(self, message: Message, where: str) -> Message:
        """Append a message; its origin is ``(top level)`` when it is the whole document."""
        self.messages.append(message)
        self.origins.append(where or TOP_LEVEL)
        return message

    def note(
        self, where: str, what: str, why: str, content: Any = "", *, unknown: bool = False
    ) -> None:
        self.notes.append(ImportNote(where, what, why, as_text(content), unknown))

    def foreign(self, obj: dict[str, Any], where: str, known: Iterable[str], fmt: str) -> None:
        """Note every content-bearing key of ``obj`` this format does not read."""
        known_keys = set(known)
        for key, value in obj.items():
            if key in CONTENT_KEYS and key not in known_keys and value not in (None, "", [], {}):
                self.note(
                    f"{where}.{key}" if where else key,
                    f"field {key!r}",
                    f"{fmt} does not read it",
                    value,
                    unknown=True,
                )

    def extend(self, other: Out, relocate: Any = None, *, origins: list[str] | None = None) -> None:
        """Append another reader's output, mapping its origins through ``relocate``.

        ``origins``: ``other``'s message origins already mapped by the caller (in
        one pass, cheaper than a call per origin); its notes are still mapped here.
        """
        move = relocate or (lambda origin: origin)
        self.synthetic |= other.synthetic
        self.messages.extend(other.messages)
        if origins is None:
            self.origins.extend(move(origin) for origin in other.origins)
        else:
            self.origins.extend(origins)
        self.notes.extend(replace(n, where=move(n.where)) for n in other.notes)


def as_text(value: Any) -> str:
    """A left-out value as text: strings as they are, anything else as JSON."""
    if isinstance(value, str):
        return value
    return json_text(value)


def json_text(value: Any) -> str:
    """Compact JSON text of a JSON value (``str`` of it if not serializable)."""
    try:
        return json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):
        return str(value)


def object_content(content: dict[str, Any], where: str, out: Out, why: str) -> str:
    """Content that is an object, kept visible as its JSON text with an unknown-content note."""
    out.note(where, "content that is an object", why, content, unknown=True)
    return json_text(content)


def join(where: str, child: str) -> str:
    """An origin inside ``where``: ``messages[2]`` + ``content[0]`` -> ``messages[2].content[0]``."""
    if not where:
        return child
    return f"{where}{child}" if child.startswith("[") else f"{where}.{child}"


def kind_of(obj: dict[str, Any], key: str = "type") -> str | None:
    """``obj[key]`` when it is a string, else ``None`` (a list or object is no type)."""
    value = obj.get(key)
    return value if isinstance(value, str) else None


def arguments_text(value: Any) -> str:
    """Tool-call arguments as the JSON text OpenAI uses ('{}' when absent)."""
    if value is None:
        return "{}"
    if isinstance(value, str):
        return value
    return json_text(value)


def marker(kind: str, ident: Any = None, body: Any = None) -> str:
    """Visible text for something that is not a message of its own: ``[kind id] {json}``."""
    head = f"[{kind} {ident}]" if isinstance(ident, str | int) and ident != "" else f"[{kind}]"
    if body in (None, "", {}, []):
        return head
    return f"{head} {as_text(body)}"


def openai_call(call: Any, where: str) -> dict[str, Any]:
    """One declared call in OpenAI shape, from OpenAI, buffer-row or LangChain spelling.

    The id is what the engine reads (:func:`~flowdrop_core.messages.read_call_id`,
    MEM-11: the first usable one of ``tool_call_id`` and ``id``, as a trimmed
    string); if neither is usable the raw value is kept (``id``, or
    ``tool_call_id`` when only it is given), so the inspector shows it.
    """
    if not isinstance(call, dict):
        raise Problem(where, f"expected a tool call object, got {json_type(call)}")
    name, arguments = read_call_function(call)
    call_id: Any = read_call_id(call)
    if call_id is None:
        call_id = call.get("id", call.get("tool_call_id"))
    return {
        "id": call_id,
        "type": "function",
        "function": {"name": name, "arguments": arguments_text(arguments)},
    }


def openai_calls(value: Any, where: str) -> list[dict[str, Any]]:
    """A ``tool_calls`` list (or absent/null) in OpenAI shape."""
    if value is None:
        return []
    if not isinstance(value, list):
        raise Problem(where, f"expected a list of tool calls, got {json_type(value)}")
    return [openai_call(call, f"{where}[{k}]") for k, call in enumerate(value)]


def role_of(value: Any, where: str, allowed: tuple[str, ...], aliases: dict[str, str]) -> str:
    """Check a role against a format's allowed roles, mapping aliases (``developer``)."""
    if isinstance(value, str) and value in aliases:
        return aliases[value]
    if isinstance(value, str) and value in allowed:
        return value
    shown = repr(value)
    raise Problem(where, f"unknown role {shown} (expected {' or '.join(allowed)})")


class PendingCalls:
    """Calls waiting for a result, for formats whose results name a call but carry no id.

    Legacy OpenAI ``function`` messages, ShareGPT observations and Gemini
    function responses without ``id`` answer the oldest open call of the same
    name (or, without a name, the oldest open call).
    """

    def __init__(self) -> None:
        self._open: list[tuple[str, Any]] = []

    def declare(self, call_id: str, name: Any) -> None:
        self._open.append((call_id, name))

    def answer(self, name: Any = None) -> str | None:
        for k, (call_id, called) in enumerate(self._open):
            if name is None or called == name:
                del self._open[k]
                return call_id
        return None


def parts_text(
    parts: list[Any],
    where: str,
    out: Out,
    fmt: str,
    text_keys: dict[str, str],
    media: frozenset[str] = frozenset(),
    left_out: dict[str, str] | None = None,
    *,
    strings: bool = False,
) -> str:
    """Join content parts: text-bearing parts give their text, media parts a ``[type]`` marker.

    A part in ``left_out`` (reasoning, say) is a note with the reason given. A
    part of an unknown type keeps its ``text`` if it has one, else shows as a
    ``[type]`` marker, and is always a note: never silently lost, never an
    empty message. ``strings``: bare strings are text parts too (LangChain).
    """
    texts: list[str] = []
    for k, part in enumerate(parts):
        at = f"{where}[{k}]"
        if strings and isinstance(part, str):
            texts.append(part)
            continue
        if not isinstance(part, dict):
            raise Problem(at, f"expected a content part object, got {json_type(part)}")
        kind = kind_of(part)
        if kind is None:
            raise Problem(at, "content part without a string 'type'")
        if kind in text_keys:
            value = part.get(text_keys[kind])
            if not isinstance(value, str):
                raise Problem(at, f"{kind} part without a string {text_keys[kind]!r}")
            texts.append(value)
        elif kind in media:
            texts.append(f"[{kind}]")
        elif left_out and kind in left_out:
            out.note(at, f"{kind} part", left_out[kind], _left_out_text(part, kind))
        else:
            text = part.get("text")
            texts.append(text if isinstance(text, str) else f"[{kind}]")
            out.note(
                at,
                f"unknown content part type {kind!r}",
                f"{fmt} has no such part type; "
                + ("its text is kept" if isinstance(text, str) else "shown as a marker"),
                part,
                unknown=True,
            )
    return "\n".join(texts)


def _left_out_text(part: dict[str, Any], kind: str) -> Any:
    """What a left-out part's note holds: its text when its ``kind`` value is a list of
    text chunks (Mistral's ``ThinkChunk``: ``{"type": "thinking", "thinking": [{"type":
    "text", "text": ...}]}``), the chunks' texts joined; else the whole part."""
    chunks = part.get(kind)
    if (
        isinstance(chunks, list)
        and chunks
        and all(
            isinstance(c, dict) and c.get("type") == "text" and isinstance(c.get("text"), str)
            for c in chunks
        )
    ):
        return "\n".join(c["text"] for c in chunks)
    return part


def last_call(calls: list[tuple[str, Out]], out: Out, why: str) -> None:
    """A trace's conversation: what its last model call saw (input then output).

    Every message an earlier call saw or produced that the last one does not
    hold is a note (so nothing of the trace is lost), as are earlier notes
    about content the last call's notes do not already cover.
    """
    if not calls:
        raise Problem("", "no model call with messages in the trace")
    *earlier, (_, final) = calls
    out.extend(final)
    seen = {_same(m, final.synthetic) for m in final.messages}
    # A call the response gave no id (Gemini) or an empty one is the same call when the
    # next request sends it back with the id the client made up (pydantic-ai's pyd_ai_...).
    idless = {_without_ids(m) for m in final.messages}
    noted = {(n.what, n.content) for n in final.notes}
    for label, call in earlier:
        for message, origin in zip(call.messages, call.origins, strict=True):
            key = _same(message, call.synthetic)
            if key in seen:
                continue
            seen.add(key)
            if _has_no_ids(message, call.synthetic) and _without_ids(message) in idless:
                continue
            out.note(origin, f"message of {label}", why, message)
        for note in call.notes:
            if (note.what, note.content) not in noted:
                noted.add((note.what, note.content))
                out.notes.append(note)


def _has_no_ids(message: Message, synthetic: set[str]) -> bool:
    """Whether every call id of a message (its calls', or the one it answers) is missing,
    empty or made up by a reader, and it has at least one."""
    ids = [c.get("id") for c in message.get("tool_calls") or ()]
    if message.get("role") == "tool":
        ids.append(message.get("tool_call_id"))
    return bool(ids) and all(i in (None, "") or _made_up(i, synthetic) for i in ids)


def _without_ids(message: Message) -> str:
    """A message as compared when one side's call ids were made up: without any call id."""
    copy = dict(message)
    copy["content"] = copy.get("content") or None
    copy.pop("tool_call_id", None)
    if copy.get("tool_calls"):
        copy["tool_calls"] = [{**c, "id": None} for c in copy["tool_calls"]]
    return json_text(copy)


def message_key(message: Message, synthetic: set[str]) -> str:
    """A message as compared across a trace's calls (see :func:`_same`)."""
    return _same(message, synthetic)


def _made_up(call_id: Any, synthetic: set[str]) -> bool:
    """Whether a call id is one a reader made up (an id that is a list or object never is)."""
    return isinstance(call_id, str) and call_id in synthetic


def _same(message: Message, synthetic: set[str]) -> str:
    """A message as compared across a trace's calls: made-up call ids do not count.

    Each call of a trace is read on its own (maybe by different readers), so a
    call the source gave no id gets a different made-up id in each, and an
    empty text may be ``""`` in one and ``null`` in another; the same message
    must still match.
    """
    copy = dict(message)
    copy["content"] = copy.get("content") or None  # readers differ: "" or null for no text
    if _made_up(copy.get("tool_call_id"), synthetic):
        copy["tool_call_id"] = None
    if copy.get("tool_calls"):
        copy["tool_calls"] = [
            {**c, "id": None} if _made_up(c.get("id"), synthetic) else c for c in copy["tool_calls"]
        ]
    return json_text(copy)
