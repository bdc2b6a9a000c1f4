"""Events: one per decision the append engine makes, each citing its rule.

Events are the engine's explanation of a step. They carry enough to tell a
person why something happened (``reason``) and enough to rebuild the buffer
after a step from the buffer before it (:func:`apply_events`), without
re-running any rule. They are named tuples rather than pydantic models
because the engine creates one or two per appended message on its hot path,
where a tuple costs a fraction of a model.
"""

from __future__ import annotations

from collections.abc import Iterable
from enum import StrEnum
from typing import Any, NamedTuple

__all__ = ["Event", "EventKind", "apply_events"]


class EventKind(StrEnum):
    """What the engine decided about one message or one buffer entry."""

    APPENDED = "appended"
    DUPLICATE_RESULT = "duplicate_result"
    DUPLICATE_TURN = "duplicate_turn"
    PLACEHOLDER_REPLACED = "placeholder_replaced"
    PLACEHOLDER_INSERTED = "placeholder_inserted"
    EVICTED = "evicted"
    PURE_READ = "pure_read"
    IDLESS_RESULT = "idless_result"
    REFUSED = "refused"
    UNSERIALIZED = "unserialized"


#: How each kind changes the buffer when replayed by :func:`apply_events`.
_INSERT = frozenset({EventKind.APPENDED, EventKind.PLACEHOLDER_INSERTED})


class Event(NamedTuple):
    """One decision of an append.

    ``incoming_index`` is the index, in the call's incoming batch, of the
    message the decision concerns (``None`` for evictions and for an empty
    batch). ``position`` is the buffer position touched, counted in the buffer
    as it stands at the moment of the event, so applying a step's events in
    order to the buffer before the step yields the buffer after it. For a
    duplicate it is the position of the entry already holding the id.
    ``entry`` is the entry written (appended, inserted, replacement) or
    removed (evicted). ``max_messages`` is set on evictions.
    """

    kind: EventKind
    rule: str
    incoming_index: int | None = None
    position: int | None = None
    tool_call_id: str | None = None
    entry: dict[str, Any] | None = None
    max_messages: int | None = None

    @property
    def counts(self) -> int:
        """How much this event adds to ``appended`` (MEM-14): 1 for an appended message."""
        return 1 if self.kind is EventKind.APPENDED else 0

    @property
    def reason(self) -> str:
        """A one-sentence, human-readable explanation citing the rule."""
        cid = f" {self.tool_call_id!r}" if self.tool_call_id else ""
        where = (
            f" at buffer position {self.position} (0-based)" if self.position is not None else ""
        )
        match self.kind:
            case EventKind.APPENDED:
                role = (self.entry or {}).get("role", "message")
                return f"{self.rule}: new {role} entry appended{where}; counts 1 toward appended."
            case EventKind.DUPLICATE_RESULT:
                return (
                    f"{self.rule}: tool result for call{cid} dropped as a duplicate; "
                    f"the call is already answered{where}. Counts 0."
                )
            case EventKind.DUPLICATE_TURN:
                return (
                    f"{self.rule}: assistant turn dropped as a duplicate; every call it "
                    f"declares is already declared (first{where}). Counts 0."
                )
            case EventKind.PLACEHOLDER_REPLACED:
                return (
                    f"{self.rule}: real result for call{cid} replaced the healed placeholder "
                    f"in place{where}. Counts 0: no new entry."
                )
            case EventKind.PLACEHOLDER_INSERTED:
                return (
                    f"{self.rule}: call{cid} had no result before a user turn; a healed "
                    f"placeholder was inserted{where}, after its declaring turn. "
                    "Not an incoming message: counts 0."
                )
            case EventKind.EVICTED:
                return (
                    f"{self.rule}: window of {self.max_messages} evicted the oldest entry{where}. "
                    "Eviction never lowers appended."
                )
            case EventKind.PURE_READ:
                if self.incoming_index is None:
                    return f"{self.rule}: empty batch; nothing appended."
                return (
                    f"{self.rule}: user message with empty content is a pure read, not a turn: "
                    "nothing appended, nothing healed."
                )
            case EventKind.IDLESS_RESULT:
                return (
                    f"{self.rule}: tool result has no usable tool_call_id, so it cannot be "
                    "deduplicated; it was appended anyway (warning)."
                )
            case EventKind.REFUSED:
                return (
                    f"{self.rule}: identity scope refused (no usable id); storage was not "
                    "touched and the buffer reads empty. Counts 0."
                )
            case EventKind.UNSERIALIZED:
                return (
                    f"{self.rule}: the slot lock was not acquired within the bound; the append "
                    "ran unserialized rather than fail or drop the turn (warning)."
                )
        return f"{self.rule}: {self.kind}"  # pragma: no cover - every kind is matched above

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form, with the reason spelled out."""
        return {
            "kind": str(self.kind),
            "rule": self.rule,
            "incoming_index": self.incoming_index,
            "position": self.position,
            "tool_call_id": self.tool_call_id,
            "entry": self.entry,
            "max_messages": self.max_messages,
            "reason": self.reason,
        }


def apply_events(
    entries: Iterable[dict[str, Any]], events: Iterable[Event]
) -> list[dict[str, Any]]:
    """Rebuild the buffer after a step from the buffer before it and the step's events.

    Only the four kinds that change the buffer act: appended and placeholder
    inserted insert ``entry`` at ``position``; placeholder replaced sets it;
    evicted removes ``position``. Nothing is re-derived, so this is how the
    inspector travels through a timeline without storing every buffer.
    """
    out = list(entries)
    for ev in events:
        kind = ev.kind
        if kind in _INSERT:
            out.insert(ev.position, ev.entry)  # type: ignore[arg-type]
        elif kind is EventKind.PLACEHOLDER_REPLACED:
            out[ev.position] = ev.entry  # type: ignore[index]
        elif kind is EventKind.EVICTED:
            del out[ev.position]  # type: ignore[arg-type]
    return out
