"""Browse the store a runtime writes: its slots, a slot's buffer, its journal replayed.

The library behind the inspector's Store page and ``flowdrop-buffer store``.
:func:`open_browser` connects to a SQLite file, a Redis URL or a Postgres
URL (the client library of the one used is imported only then). The browser
itself knows no backend: listing and journal come from the store
(:class:`~flowdrop_core.storage._base.JournalStore`). A browser is opened
at a tier (:mod:`flowdrop_core.tiers`): ``view`` (the default) only reads,
and a SQLite file is then opened read-only at the file level; ``drive``
(``writable=True``) may also append (MEM-9); ``admin``, asked for
explicitly, may also clear a slot (MEM-15), and the clear is recorded in
the slot's journal. A call above the tier raises
:class:`~flowdrop_core.tiers.TierDenied` before touching anything.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from flowdrop_core._errors import FlowdropError
from flowdrop_core.context import Scope
from flowdrop_core.conversation import ConversationBuffer, ScopedAppendResult
from flowdrop_core.journal import JournalRecord, journal_for
from flowdrop_core.journal.replay import JournalReplay, journal_scenario, replay_journal
from flowdrop_core.scenario import Scenario
from flowdrop_core.storage import RevisionConflict, Slot, SQLiteStore, StorageError, Store
from flowdrop_core.storage._base import Delta, JournalWrite, Op, mask_url, new_revision
from flowdrop_core.storage.urls import plain_store_url
from flowdrop_core.tiers import Tier, as_tier, require_tier

__all__ = [
    "POSTGRES_SCHEMES",
    "REDIS_SCHEMES",
    "Cleared",
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


@dataclass(frozen=True, slots=True)
class Cleared:
    """What a clear did (MEM-15): whether the slot held a value, what went, its record."""

    slot: Slot
    found: bool
    removed: int | None  # entries removed; None for a plain value (not a buffer)
    record: int | None  # the journal record of the clear; None when nothing was recorded

    def __str__(self) -> str:
        if not self.found:
            return "the slot was already empty; nothing was changed"
        if self.removed is None:
            return "cleared a plain value (not a buffer): it has no journal, nothing was recorded"
        if self.record is None:
            return "the buffer was already empty; nothing was changed"
        return f"cleared {self.removed} entries; recorded as journal record {self.record}"


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


def open_browser(
    target: str, *, writable: bool = False, tier: Tier | str | None = None
) -> StoreBrowser:
    """A browser over a Redis URL (``redis://``, ``rediss://``, ``unix://``), a Postgres URL
    (``postgresql://``) or a SQLite file.

    A SQLite file must exist (browsing never creates one); at the view tier
    (neither ``writable`` nor a ``tier`` above view) it is opened read-only.
    ``tier`` (``view``, ``drive``, ``admin``) wins over ``writable``, which
    means ``drive``. A URL's password is never shown.
    """
    have = _browser_tier(writable, tier)
    writes = have >= Tier.DRIVE
    target = target.strip()
    if target.startswith(REDIS_SCHEMES + POSTGRES_SCHEMES):
        store = open_store(target, writable=writes)
        return StoreBrowser(store, tier=have, target=mask_url(plain_store_url(target)))
    store = open_store(target, writable=writes)
    return StoreBrowser(store, tier=have, target=os.fspath(Path(target).expanduser()))


def _browser_tier(writable: bool, tier: Tier | str | None) -> Tier:
    if tier is not None:
        return as_tier(tier)
    return Tier.DRIVE if writable else Tier.VIEW


class StoreBrowser:
    """Read a store's slots, buffers and journals; append at the drive tier, clear at admin.

    The tier is fixed when the browser is made (``tier``, or ``writable`` for
    ``drive``); no attribute or option raises it afterwards (MEM-15).
    """

    def __init__(
        self,
        store: Store,
        *,
        writable: bool = False,
        target: str = "",
        tier: Tier | str | None = None,
    ) -> None:
        self.store = store
        self._tier = _browser_tier(writable, tier)
        self.target = mask_url(target) if target else repr(store)
        self.journal = journal_for(store)

    @property
    def tier(self) -> Tier:
        """What this browser may do: view, drive (append) or admin (clear)."""
        return self._tier

    @property
    def writable(self) -> bool:
        """Whether it may write at all (the drive tier or above)."""
        return self._tier >= Tier.DRIVE

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

    # -- writing (the drive tier appends, the admin tier clears) -----------------------------

    def append(
        self, slot: Slot, messages: Any, *, max_messages: int = 0, journal: int = 0
    ) -> ScopedAppendResult:
        """Append to the slot through a :class:`ConversationBuffer` (every rule applies).

        The drive tier's act (MEM-9): below it :class:`TierDenied` is raised
        before any storage access.
        """
        require_tier(self._tier, Tier.DRIVE, f"an append to slot {slot!r}")
        scope, scope_id, key = slot
        buf = ConversationBuffer(
            scope=scope, key=key, max_messages=max_messages, store=self.store, journal=journal
        )
        return buf.append(messages, context_for_slot(scope, scope_id))

    def clear(self, slot: Slot, *, by: str = "", timeout: float = 5.0) -> Cleared:
        """Empty the slot: an administrative act (MEM-15), recorded in the slot's journal.

        Below the admin tier :class:`TierDenied` is raised before any storage
        access. A buffer's entries are removed in one conditional write that
        also adds a ``clear`` journal record (who asked: ``by``; how many went),
        keeping every earlier record; the slot is left holding an empty buffer.
        A plain value (not a buffer) has no journal: it is deleted and the
        result says nothing was recorded. A writer that changed the slot
        meanwhile makes it an error and nothing is cleared.
        """
        require_tier(self._tier, Tier.ADMIN, f"clearing slot {slot!r}")
        with self.store.lock(*slot, timeout):
            value, found, revision = self.store.read(*slot)
            if not found:
                return Cleared(slot, found=False, removed=0, record=None)
            if not isinstance(value, list):
                self.store.delete(*slot, expected=revision, timeout=timeout)
                return Cleared(slot, found=True, removed=None, record=None)
            if not value:
                return Cleared(slot, found=True, removed=0, record=None)
            seq = self.journal.last_seq(slot) + 1
            after = new_revision()
            now = time.time()
            record = JournalRecord(
                seq=seq,
                at=now,
                scope=slot[0],
                scope_id=slot[1],
                key=slot[2],
                max_messages=0,
                incoming=[],
                count=0,
                appended=0,
                appended_any=False,
                revision_before=revision,
                revision=after,
                action="clear",
                removed=len(value),
                by=by or None,
            )
            ops = tuple(Op("delete", k, value[k]) for k in range(len(value) - 1, -1, -1))
            try:
                self.store.apply(
                    *slot,
                    Delta(ops, 0),
                    expected=revision,
                    timeout=timeout,
                    # limit = seq: the clear trims none of the records before it
                    journal=JournalWrite(seq, record.to_json(), seq, now, after),
                )
            except RevisionConflict:
                raise StorageError.for_slot(
                    "another writer changed the slot during the clear; nothing was cleared", slot
                ) from None
            return Cleared(slot, found=True, removed=len(value), record=seq)
