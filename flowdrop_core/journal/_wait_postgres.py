"""Postgres: a bounded poll of the transaction horizon, no ``LISTEN``/``NOTIFY``.

``pg_snapshot_xmax(pg_current_snapshot())`` moves past every transaction
that wrote anything when it ends, and reading it is one statement that
takes no lock and assigns no transaction id. A ``NOTIFY`` from the writers
would need a trigger (a schema change a read-only follower may not make)
and serializes every notifying commit on a global lock; the poll costs the
writers nothing.
"""

from __future__ import annotations

from typing import Any

from flowdrop_core.journal._wait import SignalWaiter

__all__ = ["HorizonWaiter"]

_HORIZON = "SELECT pg_snapshot_xmax(pg_current_snapshot())::text"


class HorizonWaiter(SignalWaiter):
    """Wake when the cluster's horizon moved (one statement every ``interval``)."""

    def __init__(self, store: Any, interval: float) -> None:
        self.store = store
        super().__init__(store, interval)
        self.how = f"a poll of the transaction horizon every {interval:g} s"

    def signal(self) -> Any:
        rows = self.store._query("read the transaction horizon", None, _HORIZON, ())
        return rows[0][0] if rows else None
