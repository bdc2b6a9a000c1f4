"""The one place where an append's events become a store :class:`~.base.Delta`.

The engine's events carry positions counted in the buffer as it stands when
each event happens (see :class:`~flowdrop_core.events.Event`), which is the
delta's own convention, so the translation is one pass over the events and
costs O(events). Swap this function (and only it) if the engine ever reports
its changes another way.
"""

from __future__ import annotations

from collections.abc import Iterable

from flowdrop_core.events import EFFECTS, ENTRY, KIND, POSITION, Event
from flowdrop_core.storage._base import Delta, Op

__all__ = ["delta_from_events"]

#: ``tuple.__new__``: builds an Op / Delta without the named tuple's Python-level
#: constructor (this runs once per append). Event fields are read by their
#: index (``KIND``, ``POSITION``, ``ENTRY``), so decision tuples read the same.
_new = tuple.__new__


def delta_from_events(events: Iterable[Event], count: int) -> Delta:
    """The rows one append adds, replaces and removes, in order; ``count`` is the length after.

    Each event becomes the store operation its kind's ``change`` names in
    :data:`~flowdrop_core.events.EFFECTS` (appended and inserted entries an
    ``insert``, a replaced placeholder a ``replace``, an eviction a
    ``delete``); every other event (duplicates, pure reads, ...) changes
    nothing stored.
    """
    table = EFFECTS
    ops = [
        _new(Op, (change, ev[POSITION], ev[ENTRY]))
        for ev in events
        if (change := table[ev[KIND]].change)
    ]
    return _new(Delta, (tuple(ops), count))
