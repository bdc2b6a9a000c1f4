"""Redis: a blocking ``XREAD`` on the followed slots' journal streams.

Every journaled append adds its record to the slot's stream (``XADD``, in
the script of its change), so a blocking read on those streams returns as
soon as one lands: no busy poll and no server setting (keyspace
notifications are not needed); the user needs the ``XREAD`` command. The
read blocks at most ``interval``, so a write outside the journal (which
adds no record) and a slot's first record are still seen within it. On a
Redis Cluster, whose streams live on different nodes, or without the
``XREAD`` permission, the waiter sleeps ``interval`` instead.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

from redis.exceptions import RedisError, ResponseError

from flowdrop_core.storage import Slot

__all__ = ["StreamWaiter"]


class StreamWaiter:
    """``XREAD BLOCK interval`` on the followed streams, from the newest id each has seen."""

    def __init__(self, store: Any, interval: float) -> None:
        self.store = self.reader = store
        self.interval = interval
        self._ids: dict[str, bytes | str] = {}
        self._blocking = not store._is_cluster()
        self.how = (
            f"a blocking XREAD on the journal streams (at most {interval:g} s)"
            if self._blocking
            else f"a poll every {interval:g} s (a cluster's streams live on different nodes)"
        )

    def _key(self, slot: Slot) -> str:
        return str(self.store._journal_key(slot))

    def wait(self, slots: Sequence[Slot]) -> None:
        if not self._blocking or not slots:
            time.sleep(self.interval)
            return
        client = self.store.client
        streams: dict[str, bytes | str] = {}
        try:
            for slot in slots:
                key = self._key(slot)
                if key not in self._ids:
                    newest = client.xrevrange(key, count=1)
                    self._ids[key] = newest[0][0] if newest else "0-0"
                streams[key] = self._ids[key]
            got = client.xread(streams, block=max(1, int(self.interval * 1000)))
        except ResponseError as exc:  # no XREAD permission: fall back to the interval
            self._blocking = False
            self.how = f"a poll every {self.interval:g} s (XREAD refused: {exc})"
            time.sleep(self.interval)
            return
        except RedisError:
            time.sleep(self.interval)  # the follower's read names the failure
            return
        for key, entries in got or ():
            if entries:
                name = key.decode() if isinstance(key, bytes) else key
                self._ids[name] = entries[-1][0]

    def moved(self) -> bool:
        return True  # the follower's reads (a record number, a revision) are the check

    def close(self) -> None:
        """Nothing held beyond the store's own pool."""
