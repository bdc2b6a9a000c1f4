"""Browse the store a runtime writes: its slots, a slot's buffer, its journal replayed.

The library behind the inspector's Store page and ``flowdrop-buffer store``.
:func:`open_browser` connects to a SQLite file or a Redis URL. A browser is
**read-only** unless opened with ``writable=True``: a SQLite file is then
opened read-only at the file level, and every write method raises
:class:`ReadOnlyError` before touching anything.
"""

from __future__ import annotations

import os
import sqlite3
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from flowdrop_core.context import Scope
from flowdrop_core.conversation import ConversationBuffer, ScopedAppendResult
from flowdrop_core.journal import JournalRecord, journal_for
from flowdrop_core.journal.replay import JournalReplay, journal_scenario, replay_journal
from flowdrop_core.scenario import Scenario
from flowdrop_core.storage import MemoryStore, Slot, SQLiteStore, StorageError, Store
from flowdrop_core.storage.redis_store import RedisStore
from flowdrop_core.storage.urls import mask_url, plain_redis_url

__all__ = [
    "REDIS_SCHEMES",
    "ReadOnlyError",
    "SlotInfo",
    "StoreBrowser",
    "context_for_slot",
    "open_browser",
]

#: URL schemes that name a Redis server; anything else is a SQLite file path.
REDIS_SCHEMES = ("redis://", "rediss://", "unix://")

#: The context field each scope's id comes from (``global`` has none).
_ID_FIELD: dict[str, str | None] = {
    "global": None,
    "workflow": "workflow_id",
    "pipeline": "pipeline_id",
    "execution": "execution_id",
    "session": "session_id",
    "user": "user_id",
}


class ReadOnlyError(PermissionError):
    """A write through a read-only browser; nothing was written."""


@dataclass(frozen=True, slots=True)
class SlotInfo:
    """One slot as the Store page lists it."""

    scope: str
    scope_id: str
    key: str
    count: int | None  # entries of a buffer; None for a plain value or an emptied slot
    last_write: float | None  # seconds since the epoch; None when the backend keeps no time
    journal: int  # records the journal keeps for the slot

    @property
    def slot(self) -> Slot:
        return (self.scope, self.scope_id, self.key)


def context_for_slot(scope: str, scope_id: str) -> dict[str, Any]:
    """An execution context that resolves ``scope`` to ``scope_id`` (for a write to the slot)."""
    field = _ID_FIELD.get(str(Scope(scope)))
    return {} if field is None or scope_id == "" else {field: scope_id}


def open_browser(target: str, *, writable: bool = False) -> StoreBrowser:
    """A browser over a Redis URL (``redis://``, ``rediss://``, ``unix://``) or a SQLite file.

    A SQLite file must exist (browsing never creates one); without
    ``writable`` it is opened read-only. A Redis URL keeps only where it points
    (:func:`~flowdrop_core.storage.urls.plain_redis_url`: no connection options,
    no control characters); the browser's :attr:`StoreBrowser.target` shows it
    with the password masked.
    """
    target = target.strip()
    if not target:
        raise ValueError("no store given: a SQLite file path or a Redis URL (redis://host:port/db)")
    if target.startswith(REDIS_SCHEMES):
        url = plain_redis_url(target)
        return StoreBrowser(RedisStore(url), writable=writable, target=mask_url(url))
    path = Path(target).expanduser()
    if not path.is_file():
        raise StorageError(f"no SQLite store at {target!r} (not a file)", path=path)
    return StoreBrowser(
        SQLiteStore(path, readonly=not writable), writable=writable, target=os.fspath(path)
    )


class StoreBrowser:
    """Read a store's slots, buffers and journals; write only when ``writable``."""

    def __init__(self, store: Store, *, writable: bool = False, target: str = "") -> None:
        self.store = store
        self.writable = writable
        self.target = mask_url(target) if target else repr(store)
        self.journal = journal_for(store)

    @property
    def kind(self) -> str:
        """``redis``, ``sqlite`` or ``memory``."""
        if isinstance(self.store, RedisStore):
            return "redis"
        return "sqlite" if isinstance(self.store, SQLiteStore) else "memory"

    # -- reading -------------------------------------------------------------------------------

    def slots(self, text: str = "") -> list[SlotInfo]:
        """Every slot with a value or a journal, sorted; ``text`` keeps those whose scope,
        scope id or key contains it (case-insensitive)."""
        journals = self.journal.counts()
        rows = self._slot_rows()
        for slot in journals:
            rows.setdefault(slot, (None, None))
        needle = text.strip().casefold()
        out = [
            SlotInfo(*slot, count, at, journals.get(slot, 0))
            for slot, (count, at) in sorted(rows.items())
            if not needle or any(needle in part.casefold() for part in slot)
        ]
        return out

    def _slot_rows(self) -> dict[Slot, tuple[int | None, float | None]]:
        """Slot -> (count, last write) from the backend's own index."""
        store = self.store
        if isinstance(store, RedisStore):
            times = store.slot_times()
            counts = store.counts([slot for slot, _ in times])
            return {slot: (n, at) for (slot, at), n in zip(times, counts, strict=True)}
        if isinstance(store, SQLiteStore):
            return _sqlite_slot_rows(store)
        if isinstance(store, MemoryStore):
            rows: dict[Slot, tuple[int | None, float | None]] = {}
            for slot in store.slots():
                value, _ = store.get(*slot)
                rows[slot] = (len(value) if isinstance(value, list) else None, None)
            return rows
        return {slot: (None, None) for slot in getattr(store, "slots", list)()}

    def buffer(self, slot: Slot) -> Any:
        """The slot's value (a buffer is a list of entries); ``[]`` for an empty slot."""
        value, found = self.store.get(*slot)
        return value if found else []

    def records(self, slot: Slot) -> list[JournalRecord]:
        """The slot's journal, oldest first."""
        return self.journal.read(slot)

    def scenario(self, slot: Slot, name: str = "journal") -> tuple[Scenario, list[str]]:
        """The slot's journal as a scenario file ``check`` accepts, with the notes."""
        return journal_scenario(self.records(slot), name)

    def replay(self, slot: Slot, name: str = "journal") -> JournalReplay:
        """The slot's journal replayed into a timeline and checked against its records."""
        return replay_journal(self.records(slot), name)

    # -- writing (needs writable) -----------------------------------------------------------------

    def _check_writable(self, what: str, slot: Slot) -> None:
        if not self.writable:
            raise ReadOnlyError(
                f"{what} refused: {self.target} is open read-only; nothing was written to slot "
                f"{slot!r} (open it writable to change it)"
            )

    def append(
        self, slot: Slot, messages: Any, *, max_messages: int = 0, journal: int = 0
    ) -> ScopedAppendResult:
        """Append to the slot through a :class:`ConversationBuffer` (every rule applies)."""
        self._check_writable("append", slot)
        scope, scope_id, key = slot
        buf = ConversationBuffer(
            scope=scope, key=key, max_messages=max_messages, store=self.store, journal=journal
        )
        return buf.append(messages, context_for_slot(scope, scope_id))

    def clear(self, slot: Slot) -> bool:
        """Empty the slot (its journal stays); return whether it held a value."""
        self._check_writable("clear", slot)
        return self.store.delete(*slot)


#: Bounds on listing a store's slots: a hostile or huge file cannot hold the page.
MAX_SLOTS = 10_000
READ_SECONDS = 5.0


def _sqlite_slot_rows(store: SQLiteStore) -> dict[Slot, tuple[int | None, float | None]]:
    """The SQLite store's ``slot`` table (count and last write), bounded in rows and time.

    Read through the store's own read-only connection (which creates nothing beside
    the file). Only a real table is read, never a view of that name (a recursive
    view would run forever); past :data:`READ_SECONDS` the read is interrupted.
    """
    path = store.path
    try:
        conn = store._conn()
        kind = conn.execute("SELECT type FROM sqlite_master WHERE name='slot'").fetchone()
        if kind is None:
            raise StorageError("not a FlowDrop store: it has no 'slot' table", path=path)
        if kind[0] != "table":
            raise StorageError(
                f"not a FlowDrop store: 'slot' is a {kind[0]}, not a table", path=path
            )
        deadline = time.monotonic() + READ_SECONDS
        conn.set_progress_handler(lambda: int(time.monotonic() > deadline), 10_000)
        try:
            rows = conn.execute(
                "SELECT scope, scope_id, key, count, updated_at FROM slot LIMIT ?", (MAX_SLOTS + 1,)
            ).fetchall()
        finally:
            conn.set_progress_handler(None, 0)
    except sqlite3.OperationalError as exc:
        if "interrupted" in str(exc):
            raise StorageError(
                f"listing the slots took over {READ_SECONDS:g} s and was stopped", path=path
            ) from exc
        raise StorageError(f"cannot list the slots ({exc})", path=path) from exc
    except sqlite3.Error as exc:
        raise StorageError(f"cannot list the slots ({exc})", path=path) from exc
    if len(rows) > MAX_SLOTS:
        raise StorageError(
            f"the store holds more than {MAX_SLOTS:,} slots; this browser lists at most that many",
            path=path,
        )
    out: dict[Slot, tuple[int | None, float | None]] = {}
    for n, (a, b, c, count, at) in enumerate(rows):
        if not all(isinstance(v, str) for v in (a, b, c)):
            raise StorageError(
                f"bad stored entry: slot row {n + 1} has a scope, scope id or key that is not "
                f"text ({a!r}, {b!r}, {c!r})",
                path=path,
            )
        if count is not None and not isinstance(count, int):
            raise StorageError.for_slot(
                f"bad stored entry: count {count!r} is not a number", (a, b, c), path
            )
        if at is not None and not isinstance(at, int | float):
            raise StorageError.for_slot(
                f"bad stored entry: last write {at!r} is not a time", (a, b, c), path
            )
        out[(a, b, c)] = (count, at)
    return out
