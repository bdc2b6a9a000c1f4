"""The one place where an append's events become a store :class:`~.base.Delta`.

The engine's events carry positions counted in the buffer as it stands when
each event happens (see :class:`~flowdrop_core.events.Event`), which is the
delta's own convention, so the translation is one pass over the events and
costs O(events). Swap this function (and only it) if the engine ever reports
its changes another way.
"""

from __future__ import annotations

from collections.abc import Iterable

from flowdrop_core.events import Event, EventKind
from flowdrop_core.storage.base import Delta, Op

__all__ = ["delta_from_events"]

_INSERTS = (EventKind.APPENDED, EventKind.PLACEHOLDER_INSERTED)


def delta_from_events(events: Iterable[Event], count: int) -> Delta:
    """The rows one append adds, replaces and removes, in order; ``count`` is the length after.

    Appended and inserted entries become ``insert`` ops, a replaced
    placeholder a ``replace`` op, an eviction a ``delete`` op; every other
    event (duplicates, pure reads, ...) changes nothing stored.
    """
    ops: list[Op] = []
    for ev in events:
        kind = ev.kind
        if kind in _INSERTS:
            ops.append(Op("insert", ev.position, ev.entry))  # type: ignore[arg-type]
        elif kind is EventKind.EVICTED:
            ops.append(Op("delete", ev.position, ev.entry))  # type: ignore[arg-type]
        elif kind is EventKind.PLACEHOLDER_REPLACED:
            ops.append(Op("replace", ev.position, ev.entry))  # type: ignore[arg-type]
    return Delta(tuple(ops), count)
