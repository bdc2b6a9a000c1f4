"""Where each store keeps its journal: a deque (memory), a table (SQLite), a stream (Redis).

Every backend keeps the newest ``limit`` records per slot and answers three
questions: the slot's last ``seq``, its records in order, and which slots
have a journal. Records are written by :class:`~flowdrop_core.conversation.ConversationBuffer`
under the slot lock (MEM-12), so their order is the slot's write order.
"""

from __future__ import annotations

import json
import sqlite3
import threading
import weakref
from collections import deque
from typing import Any, Protocol

from redis.exceptions import RedisError

from flowdrop_core.journal.record import JournalRecord
from flowdrop_core.storage import MemoryStore, Slot, SQLiteStore, StorageError, Store
from flowdrop_core.storage.redis_store import RedisStore, slot_keys

__all__ = ["Journal", "MemoryJournal", "RedisJournal", "SQLiteJournal", "journal_for"]


class Journal(Protocol):
    """The journal of one store."""

    def last_seq(self, slot: Slot) -> int:
        """The slot's newest record's ``seq`` (0: none yet)."""
        ...

    def add(self, record: JournalRecord, limit: int) -> None:
        """Append ``record`` and keep only the slot's newest ``limit`` records."""
        ...

    def read(self, slot: Slot) -> list[JournalRecord]:
        """The slot's kept records, oldest first."""
        ...

    def slots(self) -> list[Slot]:
        """Every slot with at least one record, sorted."""
        ...

    def counts(self) -> dict[Slot, int]:
        """How many records each journaled slot keeps."""
        ...


def _parse(text: Any, where: str) -> JournalRecord:
    try:
        if isinstance(text, bytes):
            text = text.decode("utf-8")
        return JournalRecord.model_validate(json.loads(text))
    except (ValueError, TypeError) as exc:
        raise StorageError(f"journal record {where} is corrupt ({exc})") from exc


class MemoryJournal:
    """A bounded deque of records per slot, living as long as its :class:`MemoryStore`."""

    def __init__(self) -> None:
        self._records: dict[Slot, deque[JournalRecord]] = {}
        self._guard = threading.Lock()

    def last_seq(self, slot: Slot) -> int:
        records = self._records.get(slot)
        return records[-1].seq if records else 0

    def add(self, record: JournalRecord, limit: int) -> None:
        with self._guard:
            records = self._records.get(record.slot)
            if records is None or records.maxlen != limit:
                records = self._records[record.slot] = deque(records or (), maxlen=limit)
            records.append(record)

    def read(self, slot: Slot) -> list[JournalRecord]:
        with self._guard:
            return list(self._records.get(slot, ()))

    def slots(self) -> list[Slot]:
        with self._guard:
            return sorted(s for s, r in self._records.items() if r)

    def counts(self) -> dict[Slot, int]:
        """How many records each journaled slot keeps."""
        with self._guard:
            return {s: len(r) for s, r in self._records.items() if r}


_JOURNAL_SCHEMA = """
CREATE TABLE IF NOT EXISTS journal (
    scope    TEXT NOT NULL,
    scope_id TEXT NOT NULL,
    key      TEXT NOT NULL,
    seq      INTEGER NOT NULL,
    at       REAL NOT NULL,
    record   TEXT NOT NULL,
    PRIMARY KEY (scope, scope_id, key, seq)
) WITHOUT ROWID
"""


#: An in-memory database with an empty journal table: what a read-only file without one reads.
_EMPTY = sqlite3.connect(":memory:", check_same_thread=False, isolation_level=None)
_EMPTY.execute(_JOURNAL_SCHEMA)


class SQLiteJournal:
    """A ``journal`` table in the store's own SQLite file; one short transaction per record.

    Over a read-only store (``SQLiteStore(readonly=True)``, the inspector's
    default) it opens the file read-only and never creates the table: a file
    without one simply has an empty journal.
    """

    def __init__(self, store: SQLiteStore) -> None:
        self.path = store.path
        self.readonly = bool(getattr(store, "readonly", False))
        self._store = store
        self._local = threading.local()
        self._ready = False

    def _conn(self) -> sqlite3.Connection:
        conn = getattr(self._local, "conn", None)
        if conn is None:
            if self.readonly:
                # The store's own read-only connection: it creates nothing beside the file.
                return self._readonly_conn()
            else:
                conn = sqlite3.connect(self.path, timeout=30.0, isolation_level=None)
            self._local.conn = conn
        if not self._ready:
            if self.readonly:
                found = conn.execute(
                    "SELECT 1 FROM sqlite_master WHERE type='table' AND name='journal'"
                ).fetchone()
                if not found:
                    return _EMPTY
            else:
                conn.execute(_JOURNAL_SCHEMA)
            self._ready = True
        return conn

    def _readonly_conn(self) -> sqlite3.Connection:
        """The read-only store's connection, or an empty journal when the file has none."""
        conn = self._store._conn()
        found = conn.execute(
            "SELECT 1 FROM sqlite_master WHERE type='table' AND name='journal'"
        ).fetchone()
        return conn if found else _EMPTY

    def close(self) -> None:
        """Close this thread's connection (the store's own are closed by the store)."""
        conn = getattr(self._local, "conn", None)
        if conn is not None:
            conn.close()
            self._local.conn = None
            self._ready = False

    def counts(self) -> dict[Slot, int]:
        """How many records each journaled slot keeps."""
        try:
            rows = self._conn().execute(
                "SELECT scope, scope_id, key, count(*) FROM journal GROUP BY 1, 2, 3"
            )
            return {(a, b, c): n for a, b, c, n in rows}
        except sqlite3.Error as exc:
            raise self._error("list the journal", None, exc) from exc

    def _error(self, what: str, slot: Slot | None, exc: Exception) -> StorageError:
        if slot is None:
            return StorageError(f"cannot {what} ({exc})", path=self.path)
        return StorageError.for_slot(f"cannot {what} ({exc})", slot, self.path)

    def last_seq(self, slot: Slot) -> int:
        try:
            row = (
                self._conn()
                .execute(
                    "SELECT max(seq) FROM journal WHERE scope=? AND scope_id=? AND key=?", slot
                )
                .fetchone()
            )
        except sqlite3.Error as exc:
            raise self._error("read the journal", slot, exc) from exc
        return int(row[0] or 0)

    def add(self, record: JournalRecord, limit: int) -> None:
        slot = record.slot
        conn = self._conn()
        try:
            conn.execute("BEGIN IMMEDIATE")
            try:
                conn.execute(
                    "INSERT INTO journal (scope, scope_id, key, seq, at, record) "
                    "VALUES (?, ?, ?, ?, ?, ?)",
                    (*slot, record.seq, record.at, record.to_json()),
                )
                conn.execute(
                    "DELETE FROM journal WHERE scope=? AND scope_id=? AND key=? AND seq<=?",
                    (*slot, record.seq - limit),
                )
                conn.execute("COMMIT")
            except BaseException:
                if conn.in_transaction:
                    conn.execute("ROLLBACK")
                raise
        except sqlite3.Error as exc:
            raise self._error("write the journal", slot, exc) from exc

    def read(self, slot: Slot) -> list[JournalRecord]:
        try:
            rows = (
                self._conn()
                .execute(
                    "SELECT seq, record FROM journal WHERE scope=? AND scope_id=? AND key=? "
                    "ORDER BY seq",
                    slot,
                )
                .fetchall()
            )
        except sqlite3.Error as exc:
            raise self._error("read the journal", slot, exc) from exc
        return [_parse(text, f"{seq} of {slot!r} in {self.path}") for seq, text in rows]

    def slots(self) -> list[Slot]:
        try:
            rows = self._conn().execute(
                "SELECT DISTINCT scope, scope_id, key FROM journal ORDER BY 1, 2, 3"
            )
            return [tuple(r) for r in rows]  # type: ignore[misc]
        except sqlite3.Error as exc:
            raise self._error("list the journal", None, exc) from exc


class RedisJournal:
    """A Redis stream per slot (``…:journal``), trimmed to the newest ``limit`` entries.

    ``<namespace>:journals`` is the set of slots that have one.
    """

    def __init__(self, store: RedisStore) -> None:
        self.store = store
        self.index_key = f"{store.namespace}:journals"

    def _key(self, slot: Slot) -> str:
        return slot_keys(slot, self.store.namespace)[2]

    def last_seq(self, slot: Slot) -> int:
        try:
            rows = self.store.client.xrevrange(self._key(slot), count=1)
        except RedisError as exc:
            raise self.store._error("read the journal", slot, exc) from exc
        if not rows:
            return 0
        return _parse(rows[0][1][b"r"], f"{rows[0][0]!r} of {slot!r}").seq

    def add(self, record: JournalRecord, limit: int) -> None:
        slot = record.slot
        try:
            pipe = self.store.client.pipeline(transaction=True)
            pipe.xadd(self._key(slot), {"r": record.to_json()}, maxlen=limit, approximate=False)
            pipe.sadd(self.index_key, json.dumps(list(slot), ensure_ascii=False))
            pipe.execute()
        except RedisError as exc:
            raise self.store._error("write the journal", slot, exc) from exc

    def read(self, slot: Slot) -> list[JournalRecord]:
        try:
            rows = self.store.client.xrange(self._key(slot))
        except RedisError as exc:
            raise self.store._error("read the journal", slot, exc) from exc
        return [_parse(fields[b"r"], f"{rid!r} of {slot!r}") for rid, fields in rows]

    def slots(self) -> list[Slot]:
        try:
            members = self.store.client.smembers(self.index_key)
        except RedisError as exc:
            raise self.store._error("list the journals", None, exc) from exc
        return sorted(tuple(json.loads(m)) for m in members)  # type: ignore[misc]

    def counts(self) -> dict[Slot, int]:
        """How many records each journaled slot keeps (one XLEN per slot, pipelined)."""
        slots = self.slots()
        try:
            pipe = self.store.client.pipeline(transaction=False)
            for slot in slots:
                pipe.xlen(self._key(slot))
            return {s: int(n) for s, n in zip(slots, pipe.execute(), strict=True) if n}
        except RedisError as exc:
            raise self.store._error("list the journals", None, exc) from exc


_journals: weakref.WeakKeyDictionary[Any, Journal] = weakref.WeakKeyDictionary()
_guard = threading.Lock()

#: The registry: which journal class serves which store class.
_KINDS: list[tuple[type, Any]] = [
    (MemoryStore, lambda store: MemoryJournal()),
    (SQLiteStore, SQLiteJournal),
    (RedisStore, RedisJournal),
]


def journal_for(store: Store) -> Journal:
    """The journal of ``store`` (one per store object); a store without one is an error."""
    with _guard:
        journal = _journals.get(store)
        if journal is None:
            make = next((m for kind, m in _KINDS if isinstance(store, kind)), None)
            if make is None:
                raise TypeError(
                    f"{type(store).__name__} has no journal (memory, SQLite and Redis stores do)"
                )
            journal = _journals[store] = make(store)
        return journal
