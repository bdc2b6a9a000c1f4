"""Storage backends for buffers and memory values, keyed by ``(scope, scope_id, key)``.

One protocol, several backends (a small registry of modules):

- :mod:`~flowdrop_core.storage._base`: the :class:`Store` protocol, revisions,
  conditional writes (:class:`RevisionConflict`), deltas (:class:`Delta`,
  :class:`Op`) and errors. Standard library only, so a backend imports it
  without pulling another backend in.
- :mod:`~flowdrop_core.storage._delta`: the one function turning an append's
  events into a delta (:func:`delta_from_events`).
- :mod:`~flowdrop_core.storage._memory`: :class:`MemoryStore`, process-local,
  the default for tests and the playground.
- :mod:`~flowdrop_core.storage._sqlite`: :class:`SQLiteStore`, a real SQLite
  file in WAL mode with one row per entry, the embedded default for anything
  that must survive a restart.
- :mod:`~flowdrop_core.storage.redis_store`: :class:`RedisStore`, shared by
  processes; imported on first use (``flowdrop_core.storage.RedisStore``), so
  the ``redis`` package is an optional extra.
- :mod:`~flowdrop_core.storage.postgres`: :class:`PostgresStore`, one row per
  entry in Postgres; imported on first use, the ``postgres`` extra (psycopg 3).

Every backend also owns its append journal and its listing
(:class:`JournalStore`): a record is written with its change, in one step.

``lock()`` is the MEM-12 slot lock; every write can be conditional on the
revision it read (compare and set), which is what makes an unserialized
append safe: see :mod:`flowdrop_core.storage._base` and ``STORE-PROTOCOL`` in
the README.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from flowdrop_core.storage._base import (
    ANY,
    Delta,
    JournalConflict,
    JournalStore,
    JournalWrite,
    LiveStep,
    LiveStore,
    LiveValue,
    Op,
    RevisionConflict,
    Slot,
    Snapshot,
    StorageError,
    Store,
    StoreBusyError,
    apply_ops,
    check_ops,
    mask_url,
    new_revision,
    slot_label,
)
from flowdrop_core.storage._delta import delta_from_events
from flowdrop_core.storage._memory import MemoryStore
from flowdrop_core.storage._sqlite import DB_ENV, SQLiteStore, default_db_path

if TYPE_CHECKING:
    from flowdrop_core.storage.postgres import PostgresStore
    from flowdrop_core.storage.redis_store import RedisStore

__all__ = [
    "ANY",
    "DB_ENV",
    "Delta",
    "JournalConflict",
    "JournalStore",
    "JournalWrite",
    "LiveStep",
    "LiveStore",
    "LiveValue",
    "MemoryStore",
    "Op",
    "PostgresStore",
    "RedisStore",
    "RevisionConflict",
    "SQLiteStore",
    "Slot",
    "Snapshot",
    "StorageError",
    "Store",
    "StoreBusyError",
    "apply_ops",
    "check_ops",
    "default_db_path",
    "delta_from_events",
    "mask_url",
    "new_revision",
    "slot_label",
]


def __getattr__(name: str) -> Any:
    """``RedisStore`` and ``PostgresStore`` are imported on first use (optional extras)."""
    if name == "RedisStore":
        from flowdrop_core.storage.redis_store import RedisStore

        return RedisStore
    if name == "PostgresStore":
        from flowdrop_core.storage.postgres import PostgresStore

        return PostgresStore
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
