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

_APPENDED = EventKind.APPENDED
_INSERTED = EventKind.PLACEHOLDER_INSERTED
_EVICTED = EventKind.EVICTED
_REPLACED = EventKind.PLACEHOLDER_REPLACED
#: ``tuple.__new__``: builds an Op / Delta without the named tuple's Python-level
#: constructor (this runs once per append). Event fields are read by index:
#: kind 0, position 3, entry 5 (see :class:`~flowdrop_core.events.Event`).
_new = tuple.__new__


def delta_from_events(events: Iterable[Event], count: int) -> Delta:
    """The rows one append adds, replaces and removes, in order; ``count`` is the length after.

    Appended and inserted entries become ``insert`` ops, a replaced
    placeholder a ``replace`` op, an eviction a ``delete`` op; every other
    event (duplicates, pure reads, ...) changes nothing stored.
    """
    ops: list[Op] = []
    for ev in events:
        kind = ev[0]
        if kind is _APPENDED or kind is _INSERTED:
            ops.append(_new(Op, ("insert", ev[3], ev[5])))
        elif kind is _EVICTED:
            ops.append(_new(Op, ("delete", ev[3], ev[5])))
        elif kind is _REPLACED:
            ops.append(_new(Op, ("replace", ev[3], ev[5])))
    return _new(Delta, (tuple(ops), count))
