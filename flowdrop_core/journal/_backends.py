"""The journal of any store that keeps one: a thin reader over the :class:`JournalStore` protocol.

Each backend owns its journal (a deque in memory, a table in SQLite and
Postgres, a stream in Redis) and writes a record in the same transaction or
script as the change it records (see :class:`~flowdrop_core.storage._base.JournalWrite`).
This module only reads those records back as :class:`JournalRecord` objects;
it knows no backend, so a new backend needs no change here.
"""

from __future__ import annotations

import json
import threading
import weakref
from typing import Any

from flowdrop_core.journal._record import JournalRecord
from flowdrop_core.storage import Slot, StorageError, Store
from flowdrop_core.storage._base import JournalStore

__all__ = ["Journal", "journal_for"]


def _parse(text: Any, where: str) -> JournalRecord:
    """One stored record; corrupt, or nested past what can be read, is an error naming it."""
    try:
        if isinstance(text, bytes):
            text = text.decode("utf-8")
        return JournalRecord.model_validate(json.loads(text))
    except RecursionError:
        raise StorageError(
            f"journal record {where} is corrupt (nested too deeply to be read)"
        ) from None
    except (ValueError, TypeError) as exc:
        raise StorageError(f"journal record {where} is corrupt ({exc})") from exc


class Journal:
    """The append journal of one store: last record number, records, journaled slots."""

    def __init__(self, store: JournalStore) -> None:
        self.store = store
        path = getattr(store, "path", None)
        self._where = f"in {path}" if path is not None else f"on {store!r}"

    def last_seq(self, slot: Slot) -> int:
        """The slot's newest record's ``seq`` (0: none yet)."""
        return self.store.journal_last(*slot)

    def read(self, slot: Slot) -> list[JournalRecord]:
        """The slot's kept records, oldest first; a corrupt one is an error naming it."""
        return [
            _parse(text, f"{seq} of {slot!r} {self._where}")
            for seq, text in self.store.journal_records(*slot)
        ]

    def read_since(self, slot: Slot, seq: int) -> list[JournalRecord]:
        """The slot's kept records numbered after ``seq`` (only those are parsed).

        A store with ``journal_since`` reads only those; any other's records
        are filtered by number before they are parsed.
        """
        since = getattr(self.store, "journal_since", None)
        rows = since(*slot, seq) if since is not None else self.store.journal_records(*slot)
        return [_parse(text, f"{n} of {slot!r} {self._where}") for n, text in rows if n > seq]

    def slots(self) -> list[Slot]:
        """Every slot with at least one record, sorted."""
        return sorted(self.store.journal_counts())

    def counts(self) -> dict[Slot, int]:
        """How many records each journaled slot keeps."""
        return self.store.journal_counts()

    def close(self) -> None:
        """Nothing to close: the journal reads through the store's own connections."""


_journals: weakref.WeakKeyDictionary[Any, Journal] = weakref.WeakKeyDictionary()
_guard = threading.Lock()


def journal_for(store: Store) -> Journal:
    """The journal of ``store`` (one per store object); a store without one is an error."""
    with _guard:
        journal = _journals.get(store)
        if journal is None:
            if not isinstance(store, JournalStore):
                raise TypeError(
                    f"{type(store).__name__} has no journal (a store keeps one by implementing "
                    "JournalStore: journal_last, journal_records, journal_counts, listing and "
                    "apply(..., journal=...))"
                )
            journal = _journals[store] = Journal(store)
        return journal
