"""Search a timeline: content, call ids and tool names of every step's incoming messages.

A person debugging a recording asks "where did call_Rf4m come in?" or "which
step sent get_weather?". :func:`search_timeline` answers with one hit per
matching field, in step order, each naming the step (1-based), the incoming
message's index in that step (0-based) and the field, with a short excerpt.
One pass over the incoming messages: O(messages) per search, no index kept.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from flowdrop_core.messages import read_call_function
from flowdrop_core.replay import Timeline

__all__ = ["SearchHit", "search_incoming", "search_timeline"]

Field = Literal["content", "call id", "tool name", "arguments", "result id"]
EXCERPT = 80


@dataclass(frozen=True)
class SearchHit:
    """One field of one incoming message that holds the query."""

    step: int
    message: int
    field: Field
    excerpt: str

    def row(self) -> dict[str, Any]:
        """A table row, with the numbering named."""
        return {
            "step": self.step,
            "incoming message": self.message,
            "field": self.field,
            "text": self.excerpt,
        }


def _field(message: Mapping[str, Any], name: str) -> Any:
    """A field at top level or under ``metadata`` (the stored row's place for it)."""
    if message.get(name) is not None:
        return message.get(name)
    meta = message.get("metadata")
    return meta.get(name) if isinstance(meta, Mapping) else None


def _texts(content: Any) -> Iterator[str]:
    """The text of a content value: a string, or the text parts of a list."""
    if isinstance(content, str):
        yield content
    elif isinstance(content, list):
        for part in content:
            if isinstance(part, str):
                yield part
            elif isinstance(part, Mapping):
                for key in ("text", "content"):
                    value = part.get(key)
                    if isinstance(value, str):
                        yield value


def _fields(message: Any) -> Iterator[tuple[Field, str]]:
    """Every searchable field of one message, both shapes (MEM-11)."""
    if not isinstance(message, Mapping):
        return
    for text in _texts(message.get("content")):
        yield "content", text
    result_id = _field(message, "tool_call_id")
    if isinstance(result_id, str | int) and not isinstance(result_id, bool):
        yield "result id", str(result_id)
    calls = _field(message, "tool_calls")
    if isinstance(calls, list):
        for call in calls:
            if not isinstance(call, Mapping):
                continue
            for key in ("tool_call_id", "id"):
                value = call.get(key)
                if isinstance(value, str | int) and not isinstance(value, bool):
                    yield "call id", str(value)
            name, arguments = read_call_function(call)
            if isinstance(name, str):
                yield "tool name", name
            if isinstance(arguments, str):
                yield "arguments", arguments


def _excerpt(text: str, at: int, length: int) -> str:
    """A one-line excerpt around the match."""
    start = max(0, at - (EXCERPT - length) // 2)
    piece = " ".join(text[start : start + EXCERPT].split())
    return ("…" if start else "") + piece + ("…" if start + EXCERPT < len(text) else "")


def search_incoming(
    steps: Iterable[tuple[int, Sequence[Any]]], query: str, limit: int = 500
) -> list[SearchHit]:
    """Hits for ``query`` (case-insensitive) among ``(step, incoming)`` pairs, at most ``limit``."""
    needle = query.strip().casefold()
    if not needle:
        return []
    hits: list[SearchHit] = []
    for step, incoming in steps:
        for k, message in enumerate(incoming):
            for field, text in _fields(message):
                at = text.casefold().find(needle)
                if at >= 0:
                    hits.append(SearchHit(step, k, field, _excerpt(text, at, len(needle))))
                    if len(hits) >= limit:
                        return hits
    return hits


def search_timeline(timeline: Timeline, query: str, limit: int = 500) -> list[SearchHit]:
    """Every field of every step's incoming messages that holds ``query``, in step order."""
    return search_incoming(((r.step, r.incoming) for r in timeline.steps), query, limit)
