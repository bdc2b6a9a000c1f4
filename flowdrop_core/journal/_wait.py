"""How a follower waits for a store to change: one small protocol, one module per backend.

A :class:`Waiter` returns from :meth:`Waiter.wait` when the store may have
changed, or after at most ``interval`` seconds, so the follower re-reads
the journal by its record numbers (it never trusts the waiter to say
*what* changed). Nothing here writes, and no waiter adds any work to a
writer: each reads a signal the backend keeps anyway.

- SQLite (:mod:`._wait_sqlite`): the file's and its ``-wal``'s size and
  modification time (a ``stat``), checked every ``interval``;
- Redis (:mod:`._wait_redis`): a blocking ``XREAD`` on the followed slots'
  journal streams (needs only the ``XREAD`` command; no server setting);
- Postgres (:mod:`._wait_postgres`): a bounded poll of the cluster's
  transaction horizon (``pg_current_snapshot()``'s ``xmax``, one
  cheap statement every ``interval``), which moves at every commit that
  wrote anything;
- any other store: the interval itself (:class:`SleepWaiter`).

:func:`flowdrop_core.journal.follow.waiter_for` picks one by the store's ``kind``.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any, Protocol

from flowdrop_core.storage import Slot

__all__ = ["RECHECK", "SignalWaiter", "SleepWaiter", "Waiter"]

#: However quiet the signal, a follower re-reads this often (a safety net, seconds).
RECHECK = 2.0


class Waiter(Protocol):
    """Blocks until the followed slots may have changed, or ``interval`` passed."""

    #: How this waiter learns of a change, in a few words (for ``--follow``'s first line).
    how: str
    #: The store the follower reads through (the one given, or the waiter's own fresh view).
    reader: Any

    def wait(self, slots: Sequence[Slot]) -> None:
        """Return when the store may have changed (or after the waiter's bound)."""
        ...

    def moved(self) -> bool:
        """Without waiting: whether the store may have changed since the last call."""
        ...

    def close(self) -> None:
        """Release what the waiter holds (nothing is written)."""
        ...


class SleepWaiter:
    """A store with no cheaper signal: wake every ``interval``."""

    def __init__(self, store: Any, interval: float) -> None:
        self.reader = store
        self.interval = interval
        self.how = f"a poll every {interval:g} s"

    def wait(self, slots: Sequence[Slot]) -> None:
        time.sleep(self.interval)

    def moved(self) -> bool:
        return True

    def close(self) -> None:
        """Nothing held."""


class SignalWaiter:
    """Wake when ``signal()`` changes (checked every ``interval``), or after :data:`RECHECK`."""

    how = ""

    def __init__(self, store: Any, interval: float) -> None:
        self.reader = store
        self.interval = interval
        self._last: Any = self.signal()
        self._checked = time.monotonic()

    def changed(self) -> None:
        """Called when the signal moved, before the follower reads (nothing by default)."""

    def signal(self) -> Any:
        raise NotImplementedError

    def wait(self, slots: Sequence[Slot]) -> None:
        deadline = time.monotonic() + max(RECHECK, self.interval)
        while time.monotonic() < deadline:
            time.sleep(self.interval)
            if self.moved():
                return

    def moved(self) -> bool:
        now = self.signal()
        quiet = time.monotonic() - self._checked < max(RECHECK, self.interval)
        if now == self._last and quiet:
            return False
        self._last, self._checked = now, time.monotonic()
        self.changed()
        return True

    def close(self) -> None:
        """Nothing held."""
