"""Browse the store a runtime writes: its slots, a slot's buffer, its journal replayed.

The library behind the inspector's Store page and ``flowdrop-buffer store``.
:func:`open_browser` connects to a SQLite file, a Redis URL or a Postgres
URL (the client library of the one used is imported only then). The browser
itself knows no backend: listing and journal come from the store
(:class:`~flowdrop_core.storage._base.JournalStore`). A browser is
**read-only** unless opened with ``writable=True``: a SQLite file is then
opened read-only at the file level, and every write method raises
:class:`ReadOnlyError` before touching anything.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from flowdrop_core._errors import FlowdropError
from flowdrop_core.context import Scope
from flowdrop_core.conversation import ConversationBuffer, ScopedAppendResult
from flowdrop_core.journal import JournalRecord, journal_for
from flowdrop_core.journal.replay import JournalReplay, journal_scenario, replay_journal
from flowdrop_core.scenario import Scenario
from flowdrop_core.storage import Slot, SQLiteStore, StorageError, Store
from flowdrop_core.storage._base import mask_url
from flowdrop_core.storage.urls import plain_store_url

__all__ = [
    "POSTGRES_SCHEMES",
    "REDIS_SCHEMES",
    "ReadOnlyError",
    "SlotInfo",
    "StoreBrowser",
    "context_for_slot",
    "open_browser",
    "open_store",
]

#: URL schemes that name a Redis server; anything else is a SQLite file path.
REDIS_SCHEMES = ("redis://", "rediss://", "unix://")
#: URL schemes that name a Postgres server.
POSTGRES_SCHEMES = ("postgresql://", "postgres://")

#: The context field each scope's id comes from (``global`` has none).
_ID_FIELD: dict[str, str | None] = {
    "global": None,
    "workflow": "workflow_id",
    "pipeline": "pipeline_id",
    "execution": "execution_id",
    "session": "session_id",
    "user": "user_id",
}


class ReadOnlyError(FlowdropError, PermissionError):
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


def open_store(target: str, *, writable: bool = False) -> Store:
    """The store a target names: a Redis URL, a Postgres URL or an existing SQLite file."""
    target = target.strip()
    if not target:
        raise ValueError(
            "no store given: a SQLite file path, a Redis URL (redis://host:port/db) or a "
            "Postgres URL (postgresql://user@host/db)"
        )
    if target.startswith(REDIS_SCHEMES + POSTGRES_SCHEMES):
        # Where to connect, never how: no options from the URL, no control characters.
        target = plain_store_url(target)
    if target.startswith(REDIS_SCHEMES):
        try:
            from flowdrop_core.storage.redis_store import RedisStore  # the optional extra
        except ImportError as exc:
            raise StorageError(
                f"{mask_url(target)}: a Redis store needs the redis package, which is not "
                f"installed ({exc}); install the 'redis' extra"
            ) from None
        return RedisStore(target)
    if target.startswith(POSTGRES_SCHEMES):
        try:
            from flowdrop_core.storage.postgres import PostgresStore  # the optional extra
        except ImportError as exc:
            raise StorageError(
                f"{mask_url(target)}: a Postgres store needs the psycopg package, which is not "
                f"installed ({exc}); install the 'postgres' extra"
            ) from None
        return PostgresStore(target, create=writable)
    path = Path(target).expanduser()
    if not path.is_file():
        raise StorageError(f"no SQLite store at {target!r} (not a file)", path=path)
    return SQLiteStore(path, readonly=not writable)


def open_browser(target: str, *, writable: bool = False) -> StoreBrowser:
    """A browser over a Redis URL (``redis://``, ``rediss://``, ``unix://``), a Postgres URL
    (``postgresql://``) or a SQLite file.

    A SQLite file must exist (browsing never creates one); without
    ``writable`` it is opened read-only. A URL's password is never shown.
    """
    target = target.strip()
    if target.startswith(REDIS_SCHEMES + POSTGRES_SCHEMES):
        store = open_store(target, writable=writable)
        return StoreBrowser(store, writable=writable, target=mask_url(plain_store_url(target)))
    store = open_store(target, writable=writable)
    return StoreBrowser(store, writable=writable, target=os.fspath(Path(target).expanduser()))


class StoreBrowser:
    """Read a store's slots, buffers and journals; write only when ``writable``."""

    def __init__(self, store: Store, *, writable: bool = False, target: str = "") -> None:
        self.store = store
        self.writable = writable
        self.target = mask_url(target) if target else repr(store)
        self.journal = journal_for(store)

    @property
    def kind(self) -> str:
        """The backend's name: ``memory``, ``sqlite``, ``redis``, ``postgres``, ..."""
        return str(getattr(self.store, "kind", type(self.store).__name__))

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
        """Slot -> (count, last write) from the backend's own listing."""
        return dict(self.store.listing())  # type: ignore[attr-defined]

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
