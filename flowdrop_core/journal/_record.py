"""One journal record: what one append to a slot received, reported and wrote."""

from __future__ import annotations

import json
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from flowdrop_core.events import Event, EventKind

__all__ = ["CHECKPOINT_EVERY", "JournalRecord", "events_from_dicts"]

#: Every this many records of a slot (at most every N/2 for a journal of N), a record
#: carries the buffer before it (``base``), so a journal trimmed to its newest N records
#: still replays from a known buffer. Amortized cost: O(buffer / 64) per append.
CHECKPOINT_EVERY = 64


class JournalRecord(BaseModel):
    """One append as it happened (a flight-recorder entry).

    ``seq`` counts the slot's journal records from 1; ``revision_before`` is
    the revision the append read, ``revision`` the one it left (equal when it
    wrote nothing). ``base`` is the buffer before this append on checkpoint
    records (see :data:`CHECKPOINT_EVERY`), else ``None``. The report is
    the MEM-14 result (``count``, ``appended``, ``appended_any``) and
    ``serialized`` (MEM-12); ``events`` are the engine's events as dicts.

    ``action`` is ``"append"``, or ``"clear"`` for a slot emptied at the
    administrative tier (MEM-15: every change other than an append is
    recorded): ``removed`` entries went, ``by`` names who asked (the command
    or page), and the report fields are the empty buffer's.
    """

    model_config = ConfigDict(frozen=True)

    seq: int
    at: float
    scope: str
    scope_id: str
    key: str
    max_messages: int
    incoming: list[Any]
    context: dict[str, Any] | None = None
    count: int
    appended: int
    appended_any: bool
    serialized: bool = True
    revision_before: str | None = None
    revision: str | None = None
    events: list[dict[str, Any]] = []
    base: list[dict[str, Any]] | None = None
    action: Literal["append", "clear"] = "append"
    removed: int | None = None
    by: str | None = None

    @property
    def slot(self) -> tuple[str, str, str]:
        return (self.scope, self.scope_id, self.key)

    @property
    def report(self) -> dict[str, Any]:
        """The MEM-14 report, the fields a scenario's expect checks."""
        return {"count": self.count, "appended": self.appended, "appended_any": self.appended_any}

    def to_json(self) -> str:
        """Compact JSON text (how every backend stores a record); an append's carries no
        ``action``, ``removed`` or ``by`` (its text is what it was before clears were recorded)."""
        skip = {"action", "removed", "by"} if self.action == "append" else set()
        return json.dumps(
            self.model_dump(exclude=skip), ensure_ascii=False, separators=(",", ":"), default=repr
        )


def events_from_dicts(rows: list[dict[str, Any]]) -> tuple[Event, ...]:
    """The recorded events as :class:`Event` tuples again."""
    return tuple(
        Event(
            kind=EventKind(row["kind"]),
            rule=row["rule"],
            incoming_index=row.get("incoming_index"),
            position=row.get("position"),
            tool_call_id=row.get("tool_call_id"),
            entry=row.get("entry"),
            max_messages=row.get("max_messages"),
        )
        for row in rows
    )
