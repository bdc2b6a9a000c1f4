"""PostgresStore: buffers in Postgres, one row per entry, every write conditional on the revision.

The store a team that outgrew SQLite usually already runs. It follows the
:class:`~flowdrop_core.storage.Store` protocol of the other backends and keeps
the append journal (:class:`~flowdrop_core.storage._base.JournalStore`).
psycopg 3 is an optional extra (``pip install flowdrop-buffer-inspector[postgres]``),
imported only when this module is.

Layout, in the schema ``schema`` (default ``flowdrop``; :meth:`PostgresStore.create_tables`,
also run automatically the first time a writable store connects):

- ``slot``: one row per non-empty slot: its parts (``bytea``, so NUL and any
  unicode are kept exactly), revision, entry count (``NULL`` for a plain
  value), plain value JSON and last write time;
- ``entry``: one row per buffer entry keyed by ``(slot id, ord)``, ``ord`` a
  gapped key as in SQLite (appends step by 2**20, an insertion takes the
  midpoint, a used-up gap shifts the rows after it once);
- ``journal``: one row per append record, ``(scope, scope_id, key, seq)``.

Every write is one transaction: the slot's row is locked (``FOR UPDATE``),
its revision compared with the one the writer read (MEM-12 compare and set,
then ``UPDATE ... WHERE rev = <read>``), the delta's rows written and, for a
journaled append, its record inserted, or nothing at all. ``lock_timeout``
bounds every wait for a row lock (:class:`StoreBusyError` past it).

MEM-12's slot lock is a session advisory lock (``pg_advisory_lock``) keyed
by a 64-bit digest of the slot, waited for at most the lock timeout; past
it the append runs unserialized with the warning and the event, exactly as
on the other stores. The server releases a dead client's locks when its
connection closes, so a killed writer never leaves a slot locked.

A connection failure is a :class:`StorageError` naming the slot and the
server (never the password); the broken connection is dropped and the next
call reconnects, so the caller works again once the server is back.

A server that stops answering (frozen, or a host whose kernel still
acknowledges every packet) is noticed by the client: every call has a
deadline, ``io_timeout`` past the lock wait it asked the server for, and a
watchdog thread shuts the connection's socket down when it passes, so the
blocked call fails at once with a :class:`StorageError` saying so.

At ``serializable`` isolation (a server, database or role default) a
serialization failure or a deadlock rolls the transaction back whole: it is
a :class:`RevisionConflict`, retried like any other (a read is retried in
place).
"""

from __future__ import annotations

import asyncio
import contextvars
import hashlib
import json
import logging
import math
import os
import random
import re
import socket
import threading
import time
import weakref
from collections.abc import AsyncGenerator, AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager, contextmanager, suppress
from typing import Any

import psycopg
from psycopg import errors as pg_errors

from flowdrop_core.storage._base import (
    ANY,
    Delta,
    Expected,
    JournalWrite,
    LockUnavailable,
    RevisionConflict,
    Slot,
    SlotLocks,
    Snapshot,
    StorageError,
    StoreBusyError,
    acquire_within,
    awrite_landed,
    check_journal_seq,
    check_ops,
    check_timeout,
    conflict_check,
    decode_entries,
    decode_json,
    encode_json,
    fork_generation,
    mask_url,
    new_revision,
    slot_label,
    time_problem,
    write_landed,
)
from flowdrop_core.storage._ordered_rows import (
    COUNT,
    GAP,
    ONE,
    OrderedRows,
    RowSQL,
    SQLSteps,
    arun_sql,
    initial_rows,
    journal_row_steps,
    run_sql,
)

__all__ = ["POSTGRES_ENV", "PostgresStore"]

_log = logging.getLogger("flowdrop_core")

#: Environment variable naming the Postgres URL when none is passed.
POSTGRES_ENV = "FLOWDROP_POSTGRES_URL"

_VERSION = 1
_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,62}")
#: Advisory lock key serializing the first-use migration of every FlowDrop schema.
_MIGRATION_LOCK = 0x466C6F7744726F70  # "FlowDrop"

_SCHEMA = (
    "CREATE SCHEMA IF NOT EXISTS {s}",
    """
    CREATE TABLE IF NOT EXISTS {s}.slot (
        id         BIGSERIAL PRIMARY KEY,
        scope      BYTEA NOT NULL,
        scope_id   BYTEA NOT NULL,
        key        BYTEA NOT NULL,
        rev        TEXT NOT NULL,
        count      BIGINT,
        value      TEXT,
        updated_at DOUBLE PRECISION NOT NULL,
        UNIQUE (scope, scope_id, key)
    )
    """,
    """
    CREATE TABLE IF NOT EXISTS {s}.entry (
        slot BIGINT NOT NULL REFERENCES {s}.slot (id) ON DELETE CASCADE,
        ord  BIGINT NOT NULL,
        body TEXT NOT NULL,
        PRIMARY KEY (slot, ord)
    )
    """,
    """
    CREATE TABLE IF NOT EXISTS {s}.journal (
        scope    BYTEA NOT NULL,
        scope_id BYTEA NOT NULL,
        key      BYTEA NOT NULL,
        seq      BIGINT NOT NULL,
        at       DOUBLE PRECISION NOT NULL,
        record   TEXT NOT NULL,
        PRIMARY KEY (scope, scope_id, key, seq)
    )
    """,
    "CREATE TABLE IF NOT EXISTS {s}.layout (version INTEGER NOT NULL)",
)


def _b(slot: Slot) -> tuple[bytes, bytes, bytes]:
    """The slot's parts as the exact UTF-8 bytes stored (NUL included)."""
    try:
        return tuple(part.encode("utf-8") for part in slot)  # type: ignore[return-value]
    except UnicodeEncodeError as exc:
        raise StorageError.for_slot(
            f"a slot part holds a lone surrogate ({exc}), which cannot be stored as UTF-8", slot
        ) from None


def _slot_of(row: tuple[Any, ...]) -> Slot:
    scope, scope_id, key = (bytes(part).decode("utf-8") for part in row[:3])
    return (scope, scope_id, key)


def _lock_key(schema: str, slot: Slot) -> int:
    """A signed 64-bit advisory lock key for the slot (a digest of schema and parts)."""
    digest = hashlib.sha256(json.dumps([schema, *slot]).encode("utf-8")).digest()
    return int.from_bytes(digest[:8], "big", signed=True)


def _ms(timeout: float) -> str:
    """A Postgres ``lock_timeout`` value for a positive timeout (at least 1 ms)."""
    return f"{max(1, math.ceil(timeout * 1000))}ms"


#: What a transaction rolled back whole by the server for a concurrent one raises: at
#: ``serializable`` (or ``repeatable read``) isolation a serialization failure, and a
#: deadlock. Nothing was written, so it is a revision conflict: the writer re-reads.
_RETRYABLE = (pg_errors.SerializationFailure, pg_errors.DeadlockDetected)

#: A wait for a row lock that ran out (``lock_timeout``, or the statement cancelled): busy.
_BUSY = (pg_errors.LockNotAvailable, pg_errors.QueryCanceled)
#: A write transaction the server rolled back whole for another writer: a conflict.
_CONFLICT = (pg_errors.UniqueViolation, *_RETRYABLE)
#: The slot's revision could not be read after a failed write.
_UNREAD = object()

#: How often a read that hit a serialization failure is tried in place before it is an error.
_TRIES = 5

#: How often a write with no condition (``expected=ANY``) that the server rolled back for a
#: concurrent transaction is tried in place (with a short random pause) before it is an
#: error. Every such rollback means another transaction committed, so this is progress.
_WRITE_TRIES = 100


def _again(expected: Any, conflict: RevisionConflict, attempt: int) -> bool:
    """Whether a write with no condition that the server rolled back is tried again in place.

    A caller that passed a revision re-reads on a conflict (MEM-12); one that
    passed ``ANY`` asked for no condition, so a serialization failure (or a
    race to create the slot's row) is not its to handle: the write is simply
    tried again.
    """
    if not (
        expected is ANY
        and isinstance(conflict.__cause__, (*_RETRYABLE, pg_errors.UniqueViolation))
        and attempt + 1 < _WRITE_TRIES
    ):
        return False
    time.sleep(random.uniform(0, min(0.05, 0.001 * 2**attempt)))
    return True


class _Call:
    """One bounded call: its connection, its deadline, whether the watchdog cut it."""

    __slots__ = ("conn", "deadline", "fired")

    def __init__(self, conn: Any, deadline: float) -> None:
        self.conn = conn
        self.deadline = deadline
        self.fired = False


class _Watchdog:
    """Cuts off a call that outlived its deadline: shuts down its connection's socket.

    A frozen server never answers, and its host's kernel still acknowledges
    every packet, so neither libpq nor TCP ever notices: the call would wait
    forever. One daemon thread per process checks the running calls every
    :data:`_TICK` seconds while there are any (it sleeps otherwise); past a
    call's deadline it shuts the socket down (``SHUT_RDWR`` on a duplicate of
    the descriptor), which makes the blocked libpq call fail at once. Starting
    and ending a call is two dict operations.
    """

    _TICK = 0.05

    def __init__(self) -> None:
        self._calls: dict[int, _Call] = {}
        self._busy = threading.Event()
        self._pid = -1
        self._guard = threading.Lock()

    def start(self, conn: Any, seconds: float) -> _Call:
        if self._pid != os.getpid():
            self._spawn()
        call = _Call(conn, time.monotonic() + seconds)
        self._calls[id(call)] = call
        if not self._busy.is_set():
            self._busy.set()
        return call

    def end(self, call: _Call) -> None:
        self._calls.pop(id(call), None)

    def _spawn(self) -> None:
        with self._guard:
            if self._pid == os.getpid():
                return
            self._calls = {}
            self._busy = threading.Event()
            threading.Thread(target=self._watch, name="flowdrop-pg-watchdog", daemon=True).start()
            self._pid = os.getpid()

    def _watch(self) -> None:
        calls, busy = self._calls, self._busy
        while True:
            busy.wait()
            time.sleep(self._TICK)
            now = time.monotonic()
            for call in list(calls.values()):
                # still running (not ended since the snapshot): cut its connection
                if now >= call.deadline and not call.fired and calls.get(id(call)) is call:
                    call.fired = True
                    _cut(call.conn)
            if not calls:
                busy.clear()
                if calls:  # a call started meanwhile
                    busy.set()


def _cut(conn: Any) -> None:
    """Shut the connection's socket down, so a call blocked on it fails now."""
    try:
        fd = conn.pgconn.socket
        dup = socket.socket(fileno=os.dup(fd))
    except (psycopg.Error, OSError, ValueError):
        return
    with suppress(OSError):
        dup.shutdown(socket.SHUT_RDWR)
    dup.close()


_WATCHDOG = _Watchdog()

#: States of MEM-12's lock taken with the append's write (``PostgresStore.write_lock``): not
#: taken (the write takes it for its transaction), to be taken before the next write (a
#: write conflicted: racing writers queue), taken for the session, or not obtainable.
_LAZY, _WANTED, _TAKEN, _UNAVAILABLE = range(4)


class _WriteLock:
    """MEM-12's advisory lock of one ``write_lock`` block: slot, key, deadline and state."""

    __slots__ = ("deadline", "key", "slot", "state", "wait")

    def __init__(self, slot: Slot, key: int, wait: float) -> None:
        self.slot, self.key, self.wait = slot, key, wait
        self.deadline = time.monotonic() + wait
        self.state = _LAZY


#: The ``write_lock`` block the current thread is in (its write takes the lock).
_WRITE_LOCK: contextvars.ContextVar[_WriteLock | None] = contextvars.ContextVar(
    "flowdrop_postgres_write_lock", default=None
)


class _Held(Exception):
    """Inside a write: the slot's advisory lock is held by another session (rolled back)."""


#: The usual append in one statement (one round trip, its own transaction): the slot's
#: advisory lock when asked for (``lock``), its row locked, and only when the revision,
#: the count and the journal's last record are what the writer read: the ``evict`` first
#: rows deleted, ``bodies`` appended after the last, the journal record added and trimmed,
#: the slot's revision moved on. The answer: lock taken, revision, count, journal's last,
#: rows of the slot updated (0: nothing was written). Data-modifying CTEs run once, on one
#: snapshot; the row lock makes the snapshot's entries and journal the slot's current ones.
_TAIL = """
WITH l AS MATERIALIZED (
    SELECT CASE WHEN %(lock)s::bigint IS NULL THEN true
           ELSE pg_try_advisory_xact_lock(%(lock)s::bigint) END AS got
), s AS MATERIALIZED (
    SELECT id, rev, count FROM {slot}
    WHERE scope = %(scope)s AND scope_id = %(scope_id)s AND key = %(key)s
      AND (SELECT got FROM l)
    FOR UPDATE
), j AS MATERIALIZED (
    SELECT COALESCE(max(seq), 0) AS last FROM {journal}
    WHERE %(seq)s::bigint IS NOT NULL AND EXISTS (SELECT 1 FROM s)
      AND scope = %(scope)s AND scope_id = %(scope_id)s AND key = %(key)s
), ok AS MATERIALIZED (
    SELECT s.id FROM s, j
    WHERE s.rev = %(expected)s AND s.count = %(before)s
      AND (%(seq)s::bigint IS NULL OR j.last = %(seq)s::bigint - 1)
), evicted AS (
    DELETE FROM {entry} WHERE slot IN (SELECT id FROM ok) AND ord IN (
        SELECT ord FROM {entry} WHERE slot IN (SELECT id FROM ok)
        ORDER BY ord LIMIT %(evict)s)
), added AS (
    INSERT INTO {entry} (slot, ord, body)
    SELECT ok.id,
           COALESCE((SELECT max(ord) FROM {entry} WHERE slot = ok.id), -{gap}) + {gap} * b.n,
           b.body
    FROM ok, unnest(%(bodies)b::text[]) WITH ORDINALITY AS b(body, n)
), recorded AS (
    INSERT INTO {journal} (scope, scope_id, key, seq, at, record)
    SELECT %(scope)s, %(scope_id)s, %(key)s, %(seq)s::bigint, %(at)s, %(record)s::text
    FROM ok WHERE %(seq)s::bigint IS NOT NULL
), trimmed AS (
    DELETE FROM {journal}
    WHERE %(seq)s::bigint IS NOT NULL AND EXISTS (SELECT 1 FROM ok)
      AND scope = %(scope)s AND scope_id = %(scope_id)s AND key = %(key)s
      AND seq <= %(trim)s::bigint
), moved AS (
    UPDATE {slot} SET rev = %(token)s, count = %(count)s, updated_at = %(now)s
    WHERE id IN (SELECT id FROM ok) RETURNING 1
)
SELECT l.got, s.rev, s.count, j.last, (SELECT count(*) FROM moved)
FROM l LEFT JOIN s ON true LEFT JOIN j ON true
"""


def _tail_shape(delta: Delta) -> tuple[int, int, list[int]] | None:
    """The usual append's shape, else None: ``(evicted, count before, inserting ops)``.

    That is: entries appended at the end and first entries deleted (the
    window evicting), in any order, never deleting an entry this change adds.
    """
    running = None  # the count as the ops go, once the first insert fixed it
    deletes_before = 0
    evicted = 0
    inserts: list[int] = []
    for k, (kind, position, _) in enumerate(delta.ops):
        if kind == "delete" and position == 0:
            evicted += 1
            if running is None:
                deletes_before += 1
            else:
                running -= 1
        elif kind == "insert" and (running is None or position == running):
            running = position + 1
            inserts.append(k)
        else:
            return None
    if running is None or running != delta.count:
        return None
    before = delta.ops[inserts[0]][1] + deletes_before
    if evicted > before:  # an entry of this change evicted at once: the general path
        return None
    return evicted, before, inserts


#: Connections a store opens at most per process when the caller passes no pool of its own.
DEFAULT_POOL_SIZE = 8


def _autocommit(conn: Any) -> bool:
    """Put a caller's idle connection in autocommit (every call is one statement or one
    explicit transaction); return whether it was not, so it is given back as it came."""
    if conn.autocommit:
        return False
    conn.autocommit = True
    return True


class _OwnPool:
    """The connections a store opens itself: at most ``size``, reused, a broken one replaced.

    A caller waits, at most the time it is given, for a connection another
    thread gives back; past it :meth:`acquire` returns None.
    """

    def __init__(self, size: int, connect: Callable[[], Any]) -> None:
        self.size = size
        self._connect = connect
        self._idle: list[Any] = []
        self._open: list[Any] = []
        self._opening = 0
        self._cond = threading.Condition()

    def acquire(self, timeout: float) -> Any:
        deadline = time.monotonic() + timeout
        with self._cond:
            while True:
                if self._idle:
                    return self._idle.pop()
                if len(self._open) + self._opening < self.size:
                    self._opening += 1
                    break
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    return None
                self._cond.wait(remaining)
        try:
            conn = self._connect()
        except BaseException:
            with self._cond:
                self._opening -= 1
                self._cond.notify()
            raise
        with self._cond:
            self._opening -= 1
            self._open.append(conn)
        return conn

    def release(self, conn: Any, broken: bool) -> None:
        if broken or conn.closed or conn.broken:
            with suppress(psycopg.Error):  # closing a dead connection
                conn.close()
            with self._cond:
                if conn in self._open:
                    self._open.remove(conn)
                self._cond.notify()
            return
        with self._cond:
            if conn in self._open:  # not closed by close() meanwhile
                self._idle.append(conn)
            self._cond.notify()

    def close_idle(self) -> None:
        """Close the connections no call holds (the next sync call opens one again)."""
        with self._cond:
            idle, self._idle = self._idle, []
            for conn in idle:
                self._open.remove(conn)
            self._cond.notify_all()
        for conn in idle:
            with suppress(psycopg.Error):
                conn.close()

    def close(self) -> None:
        with self._cond:
            conns, self._open, self._idle = self._open, [], []
            self._cond.notify_all()
        for conn in conns:
            with suppress(psycopg.Error):
                conn.close()


class _CallerPool:
    """The caller's ``psycopg_pool.ConnectionPool`` (anything with ``getconn``/``putconn``)."""

    def __init__(self, pool: Any) -> None:
        self.pool = pool
        self.size = int(getattr(pool, "max_size", DEFAULT_POOL_SIZE))
        self._switched: weakref.WeakSet[Any] = weakref.WeakSet()

    def acquire(self, timeout: float) -> Any:
        try:
            conn = self.pool.getconn(timeout=timeout)
        except Exception as exc:
            if type(exc).__name__ == "PoolTimeout":
                return None
            raise
        if _autocommit(conn):
            self._switched.add(conn)
        return conn

    def release(self, conn: Any, broken: bool) -> None:
        if conn in self._switched:
            self._switched.discard(conn)
            if not (conn.closed or conn.broken):
                with suppress(psycopg.Error):
                    conn.autocommit = False
        self.pool.putconn(conn)  # the pool checks and replaces a broken connection

    def close(self) -> None:
        """The pool stays the caller's: nothing is closed."""


class _CallerConnection:
    """The caller's one connection, used by one call at a time and never closed by the store."""

    size = 1

    def __init__(self, conn: Any) -> None:
        self.conn = conn
        self._lock = threading.Lock()
        self._switched = False

    def acquire(self, timeout: float) -> Any:
        if not self._lock.acquire(timeout=timeout):
            return None
        self._switched = _autocommit(self.conn)
        return self.conn

    def release(self, conn: Any, broken: bool) -> None:
        if self._switched and not (conn.closed or conn.broken):
            with suppress(psycopg.Error):
                conn.autocommit = False
        self._lock.release()

    def close(self) -> None:
        """The connection stays the caller's: nothing is closed."""


class _AsyncPool:
    """One event loop's own async connections: at most ``size``, reused, given in turn.

    Tasks wait for a connection in a FIFO queue (an ``asyncio.Semaphore`` of
    ``size``), at most the time they are given; a broken one is closed and
    replaced on the next acquire.
    """

    def __init__(self, size: int, connect: Callable[[], Any]) -> None:
        self.size = size
        self._connect = connect
        self._idle: list[Any] = []
        self._open: list[Any] = []
        self._turns = asyncio.Semaphore(size)

    async def acquire(self, timeout: float) -> Any:
        """A connection, or None when none came free within ``timeout``."""
        if not await acquire_within(self._turns, timeout):  # type: ignore[arg-type]
            return None
        try:
            while self._idle:
                conn = self._idle.pop()
                if not (conn.closed or conn.broken):
                    return conn
                self._open.remove(conn)
            conn = await self._connect()
        except BaseException:
            self._turns.release()
            raise
        self._open.append(conn)
        return conn

    async def release(self, conn: Any, broken: bool) -> None:
        try:
            if broken or conn.closed or conn.broken:
                if conn in self._open:
                    self._open.remove(conn)
                with suppress(psycopg.Error):
                    await conn.close()
            elif conn in self._open:  # not closed by close_now() meanwhile
                self._idle.append(conn)
        finally:
            self._turns.release()

    def close_now(self) -> None:
        """Close every connection without awaiting (also after the loop itself closed)."""
        conns, self._open, self._idle = self._open, [], []
        for conn in conns:
            with suppress(Exception):
                conn.pgconn.finish()


class _AsyncSide:
    """A store's async connections and per-slot task locks, for one event loop.

    Its connections close as the loop ends: a loop's ``shutdown_asyncgens``
    (the end of ``asyncio.run``) closes every async generator started on it,
    and :meth:`_close_with_loop` is started when the side is made, so its
    ``finally`` runs on the loop while it still runs. ``ended`` is called
    then, to drop the side from the store.
    """

    def __init__(
        self, size: int, connect: Callable[[], Any], ended: Callable[[_AsyncSide], None]
    ) -> None:
        self.generation = fork_generation()
        self.loop = asyncio.get_running_loop()
        self.pool = _AsyncPool(size, connect)
        self.locks = SlotLocks(asyncio.Lock)
        self.ready_guard = asyncio.Lock()
        self.closed = False
        self._ended = ended
        self._closer = self._close_with_loop()
        first: Any = self._closer.__anext__()
        with suppress(StopIteration):  # runs to its yield: now an async generator of the loop
            first.send(None)

    async def _close_with_loop(self) -> AsyncGenerator[None, None]:
        try:
            yield
        finally:
            if not self.closed:
                self._ended(self)
                await self.aclose()

    async def aclose(self) -> None:
        """Close the side's connections, awaiting each."""
        self.closed = True
        conns, self.pool._open, self.pool._idle = self.pool._open, [], []
        for conn in conns:
            with suppress(psycopg.Error):
                await conn.close()

    def forget(self, close: bool) -> None:
        """End the side without its loop: its sockets closed now (``close``) or just dropped
        (a parent process's, after a fork: closing them would end the parent's sessions)."""
        self.closed = True
        if close:
            self.pool.close_now()
        ending: Any = self._closer.aclose()
        with suppress(StopIteration, RuntimeError):
            ending.send(None)


class _ALease:
    """The connection one task's call holds, shared by the calls nested in it (an append's
    lock, reads and write), so a task never holds two."""

    __slots__ = ("conn", "side", "store")

    def __init__(self, store: PostgresStore, side: _AsyncSide) -> None:
        self.store, self.side = store, side
        self.conn: Any = None


#: The lease of the current task's outermost call (see ``PostgresStore._alease``).
_ALEASE: contextvars.ContextVar[_ALease | None] = contextvars.ContextVar(
    "flowdrop_postgres_async_lease", default=None
)


def _fire(call: _Call) -> None:
    """An async call outlived its deadline: cut its connection (see :class:`_Watchdog`)."""
    call.fired = True
    _cut(call.conn)


class PostgresStore:
    """A Postgres-backed store: ``PostgresStore(dsn)``, else ``$FLOWDROP_POSTGRES_URL``.

    ``dsn`` is a libpq URL or key/value string. ``schema`` holds the tables
    (created on first use unless ``create=False``, then a missing table reads
    as an empty store and a write is an error). ``busy_timeout`` is the
    default bound on waiting for a row lock; a write's ``timeout`` overrides
    it. ``connect_timeout`` bounds connecting. ``io_timeout`` bounds waiting
    for the server's answer, on top of any lock wait a call asks the server
    for: a frozen server is a :class:`StorageError` after that long (see the
    module docstring).

    Connections: the store opens at most ``pool_size`` (default
    :data:`DEFAULT_POOL_SIZE`) per process and reuses them, however many
    threads or tasks append; a call holds one from its start to its end (an
    append from the MEM-12 lock to its write, on the same connection) and a
    call finding none free waits for one, at most ``busy_timeout`` (the lock,
    at most its own timeout). Or pass the caller's own: ``pool`` (a
    ``psycopg_pool.ConnectionPool``, its ``max_size`` the bound) or
    ``connection`` (one psycopg connection, one call at a time); neither is
    ever closed by the store, and an idle connection not in autocommit is put
    in it for the call and given back as it came. The async API
    (``ConversationBuffer.aappend``) runs one worker per connection
    (``async_workers``). The store's own connections never cross a fork.
    """

    kind = "postgres"

    def __init__(
        self,
        dsn: str | None = None,
        *,
        schema: str = "flowdrop",
        create: bool = True,
        busy_timeout: float = 30.0,
        connect_timeout: float = 5.0,
        io_timeout: float = 10.0,
        pool_size: int = DEFAULT_POOL_SIZE,
        pool: Any = None,
        connection: Any = None,
    ) -> None:
        if not (type(pool_size) is int and pool_size > 0):
            raise ValueError(f"pool_size must be a whole number >= 1, got {pool_size!r}")
        if pool is not None and connection is not None:
            raise ValueError("pass a pool or a connection, not both")
        self.pool_size = pool_size
        self._given = pool if pool is not None else connection
        if dsn is None and pool is not None:
            dsn = str(getattr(pool, "conninfo", "") or "")
        if dsn is None and connection is not None:
            dsn = connection.info.dsn
        dsn = dsn if dsn is not None else os.environ.get(POSTGRES_ENV, "").strip()
        if not dsn and self._given is None:
            raise ValueError(
                f"PostgresStore needs a URL (postgresql://user@host:port/db) or ${POSTGRES_ENV}"
            )
        if not isinstance(schema, str) or not _IDENT.fullmatch(schema):
            raise ValueError(f"schema must be a plain SQL identifier, got {schema!r}")
        self.dsn = dsn
        self.schema = schema
        self.create = create
        self.busy_timeout = check_timeout(busy_timeout)
        self.connect_timeout = max(1, math.ceil(connect_timeout))
        if not io_timeout > 0:
            raise ValueError(f"io_timeout must be > 0 seconds, got {io_timeout!r}")
        self.io_timeout = float(io_timeout)
        try:
            info = psycopg.conninfo.conninfo_to_dict(dsn)
        except psycopg.ProgrammingError as exc:
            raise StorageError(f"not a usable Postgres URL {mask_url(dsn)!r} ({exc})") from None
        host = str(info.get("host") or "localhost")
        self.server = f"{host}:{info.get('port') or 5432}/{info.get('dbname') or ''}"
        q = f'"{schema}"'
        self._t = {name: f"{q}.{name}" for name in ("slot", "entry", "journal", "layout")}
        self._schema_sql = [statement.format(s=q) for statement in _SCHEMA]
        self._rows = RowSQL.build(self._t["entry"], self._t["journal"], "%s")
        where = "WHERE scope = %s AND scope_id = %s AND key = %s"
        self._sql_rev = f"SELECT rev FROM {self._t['slot']} {where}"
        self._sql_read = (
            f"SELECT s.rev, s.count, s.value, (SELECT array_agg(e.body ORDER BY e.ord) "
            f"FROM {self._t['entry']} e WHERE e.slot = s.id) FROM {self._t['slot']} s "
            "WHERE s.scope = %s AND s.scope_id = %s AND s.key = %s"
        )
        self._sql_meta = f"SELECT id, rev, count FROM {self._t['slot']} {where} FOR UPDATE"
        self._sql_tail = _TAIL.format(
            slot=self._t["slot"], entry=self._t["entry"], journal=self._t["journal"], gap=GAP
        )
        self._sql_meta_locking = (
            "SELECT l.got, s.id, s.rev, s.count FROM (SELECT pg_try_advisory_xact_lock(%s) AS got) l "
            f"LEFT JOIN LATERAL (SELECT id, rev, count FROM {self._t['slot']} {where} FOR UPDATE) s "
            "ON true"
        )
        self._ready = False
        self._ready_guard = threading.Lock()
        self._given_pool: _CallerPool | _CallerConnection | None = None
        if pool is not None:
            self._given_pool = _CallerPool(pool)
        elif connection is not None:
            self._given_pool = _CallerConnection(connection)
        self._after_fork()

    @property
    def async_workers(self) -> int:
        """How many calls the async API runs at once: one per connection the pool may hold."""
        return self._pool.size

    def __repr__(self) -> str:
        return f"PostgresStore({self.server!r}, schema={self.schema!r})"

    @property
    def display_url(self) -> str:
        """The URL with any password masked (what every message shows)."""
        return mask_url(self.dsn) if self.dsn else f"postgresql://{self.server}"

    # -- connections ---------------------------------------------------------------------------

    def _after_fork(self) -> None:
        self._pid = fork_generation()
        self._local = threading.local()
        self._pool: _OwnPool | _CallerPool | _CallerConnection = (
            self._given_pool
            if self._given_pool is not None
            else _OwnPool(self.pool_size, self._connect)
        )
        #: Each own connection's session ``lock_timeout`` as last set (a caller's is set
        #: every time: its other users may change it).
        self._lock_timeouts: weakref.WeakKeyDictionary[Any, str] = weakref.WeakKeyDictionary()
        self._locks = SlotLocks()
        #: Each event loop's async connections and task locks (see :meth:`_aside`); a
        #: parent's, after a fork, are dropped unclosed (their sockets are the parent's).
        self._asides: dict[Any, _AsyncSide] = {}
        self._asides_guard = threading.Lock()

    def _connect(self) -> Any:
        return psycopg.connect(self.dsn, autocommit=True, connect_timeout=self.connect_timeout)

    @contextmanager
    def _lease(self) -> Iterator[None]:
        """Hold one pool connection for this thread until the outermost lease ends.

        :meth:`_conn` takes it on first use; nested calls (an append's lock,
        read and write) share it, so a thread never holds two.
        """
        if self._pid != fork_generation():
            self._after_fork()
        local = self._local
        depth = getattr(local, "depth", 0)
        local.depth = depth + 1
        try:
            yield
        finally:
            local.depth = depth
            if depth == 0:
                conn = getattr(local, "conn", None)
                if conn is not None:
                    local.conn = None
                    self._pool.release(conn, conn.closed or conn.broken)

    def _conn(self, slot: Slot | None, what: str, wait: float | None = None) -> Any:
        """The connection this thread's lease holds (taken from the pool, waiting at most
        ``wait``, default ``busy_timeout``; reconnecting after a failure); creates the
        tables once. Only called inside :meth:`_lease`."""
        if self._pid != fork_generation():
            self._after_fork()
        conn = getattr(self._local, "conn", None)
        if conn is not None and (conn.closed or conn.broken):
            self._drop(conn)
            conn = None
        if conn is None:
            wait = self.busy_timeout if wait is None else wait
            try:
                conn = self._pool.acquire(wait)
            except psycopg.Error as exc:
                raise self._error(what, slot, exc) from None
            if conn is None:
                raise self._exhausted(what, slot, wait, self._pool.size)
            self._local.conn = conn
        if not self._ready:
            try:
                with self._bounded(conn, self.busy_timeout, what, slot):
                    self._prepare(conn)
            except psycopg.Error as exc:
                self._forget(conn)
                raise self._error(what, slot, exc) from None
        return conn

    def _exhausted(self, what: str, slot: Slot | None, wait: float, size: int) -> StorageError:
        """No pool connection came free within ``wait``: busy for a write, else an error."""
        message = (
            f"cannot {what} on Postgres {self.server}: all {size} connections "
            f"of the pool stayed in use for {wait:.3g} s"
            + ("; nothing was written" if what.startswith("write") else "")
        )
        if what.startswith("write") and slot is not None:
            return StoreBusyError.for_slot(message, slot)
        return StorageError(message) if slot is None else StorageError.for_slot(message, slot)

    @contextmanager
    def _bounded(self, conn: Any, wait: float, what: str, slot: Slot | None) -> Iterator[None]:
        """A call on ``conn`` given ``wait`` (a lock wait it asked for) plus ``io_timeout``.

        Past that the watchdog cuts the connection (:class:`_Watchdog`) and the
        call's failure becomes a :class:`StorageError` saying the server did not
        answer; the connection is dropped, the next call reconnects.
        """
        call = _WATCHDOG.start(conn, wait + self.io_timeout)
        try:
            yield
        except (psycopg.Error, StorageError) as exc:
            if not call.fired:
                raise
            self._drop(conn)
            raise self._no_answer(what, slot, wait, exc) from exc
        finally:
            _WATCHDOG.end(call)

    def _no_answer(
        self, what: str, slot: Slot | None, wait: float, exc: BaseException
    ) -> StorageError:
        """A call the watchdog cut: the server did not answer in time."""
        reason = (
            f"NoAnswer: no answer within {wait + self.io_timeout:.3g} s, the server is frozen, "
            f"overloaded or unreachable (client-side timeout: io_timeout={self.io_timeout:g} s"
            + (f" after a lock wait of {wait:g} s" if wait else "")
            + ")"
        )
        if what.startswith("write"):
            reason += (
                "; the commit was sent and its outcome is unknown (the transaction is whole or "
                "absent)"
                if "outcome is unknown" in str(exc)
                else "; nothing was written"
            )
        message = f"cannot {what} on Postgres {self.server} ({reason})"
        return StorageError(message) if slot is None else StorageError.for_slot(message, slot)

    def _lock_timeout(self, conn: Any, value: str) -> None:
        """Set the session's ``lock_timeout`` (one round trip, only when it changes)."""
        if self._given_pool is not None or self._lock_timeouts.get(conn) != value:
            conn.execute(f"SET lock_timeout = '{value}'")
            if self._given_pool is None:
                self._lock_timeouts[conn] = value

    def _drop(self, conn: Any) -> None:
        """Give a failed connection back as broken (an own one is closed and replaced)."""
        if getattr(self._local, "conn", None) is conn:
            self._local.conn = None
            self._pool.release(conn, True)

    def _forget(self, conn: Any) -> None:
        """Drop ``conn`` if it is broken (the next call reconnects)."""
        if conn.closed or conn.broken:
            self._drop(conn)

    def close(self) -> None:
        """Close every connection this store opened (a caller's pool or connection stays open)."""
        self._pool.close()  # a lease still running gives its closed connection back as broken
        with self._asides_guard:
            sides, self._asides = list(self._asides.values()), {}
        for side in sides:
            side.forget(close=True)

    def __enter__(self) -> PostgresStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _error(
        self, what: str, slot: Slot | None, exc: BaseException, *, unknown: bool = False
    ) -> StorageError:
        """A driver failure as a :class:`StorageError` naming the server and the slot."""
        reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        reason = f"{type(exc).__name__}: {reason}"
        if isinstance(exc, pg_errors.ConnectionTimeout):
            reason += (
                f", no connection within connect_timeout={self.connect_timeout} s (2 s at "
                "least): the server is down, frozen or unreachable"
            )
        if what.startswith("write"):
            reason += (
                "; the commit was sent and its outcome is unknown (the transaction is whole or "
                "absent)"
                if unknown
                else "; nothing was written"
            )
        message = f"cannot {what} on Postgres {self.server} ({reason})"
        return StorageError(message) if slot is None else StorageError.for_slot(message, slot)

    # -- layout --------------------------------------------------------------------------------

    def _prepare(self, conn: Any) -> None:
        """First use: create the tables (one process migrates, the others wait), or check them."""
        with self._ready_guard:
            if self._ready:
                return
            row = conn.execute("SELECT to_regclass(%s)", (f'"{self.schema}".layout',)).fetchone()
            if row[0] is None:
                if not self.create:
                    return  # read-only browsing of a database without our tables: empty
                self._create(conn)
            version = conn.execute(f"SELECT max(version) FROM {self._t['layout']}").fetchone()[0]
            if version is not None and version > _VERSION:
                raise StorageError(
                    f"the schema {self.schema!r} has layout version {version}, this version "
                    f"reads {_VERSION}; upgrade FlowDrop"
                )
            self._ready = True

    def _create(self, conn: Any) -> None:
        with conn.transaction():
            conn.execute("SELECT pg_advisory_xact_lock(%s)", (_MIGRATION_LOCK,))
            for statement in self._schema_sql:
                conn.execute(statement)
            if conn.execute(f"SELECT 1 FROM {self._t['layout']}").fetchone() is None:
                conn.execute(f"INSERT INTO {self._t['layout']} (version) VALUES (%s)", (_VERSION,))

    def create_tables(self) -> None:
        """Create the schema and tables now (idempotent; first use does it too)."""
        with self._lease():
            conn = self._conn(None, "create the tables")
            try:
                with self._bounded(conn, self.busy_timeout, "create the tables", None):
                    self._create(conn)
            except psycopg.Error as exc:
                self._forget(conn)
                raise self._error("create the tables", None, exc) from None
        self._ready = True

    def _tables_exist(self) -> bool:
        return self._ready

    # -- reading -------------------------------------------------------------------------------

    def _query(self, what: str, slot: Slot | None, sql: str, args: tuple[Any, ...]) -> list[Any]:
        """One statement's rows; a serialization failure is tried again (a read writes nothing)."""
        with self._lease():
            return self._query_leased(what, slot, sql, args)

    def _query_leased(
        self, what: str, slot: Slot | None, sql: str, args: tuple[Any, ...]
    ) -> list[Any]:
        for attempt in range(_TRIES):
            conn = self._conn(slot, what)
            if not self._ready:
                return []
            try:
                with self._bounded(conn, 0.0, what, slot):
                    return conn.execute(sql, args).fetchall()
            except _RETRYABLE as exc:
                if attempt + 1 < _TRIES:
                    continue
                raise self._error(what, slot, exc) from None
            except psycopg.Error as exc:
                self._forget(conn)
                raise self._error(what, slot, exc) from None
        raise AssertionError("unreachable")  # pragma: no cover

    def read(self, scope: str, scope_id: str, key: str) -> Snapshot:
        """The value (a buffer as a list) and its revision, from one statement (one snapshot)."""
        slot = (str(scope), scope_id, key)
        return self._snapshot(slot, self._query("read the slot", slot, self._sql_read, _b(slot)))

    def _snapshot(self, slot: Slot, rows: list[Any]) -> Snapshot:
        """:meth:`read`'s answer from its statement's rows."""
        if not rows:
            return Snapshot(None, False, None)
        rev, count, value, bodies = rows[0]
        if count is None:
            return Snapshot(decode_json(value, slot), True, rev)
        bodies = bodies or []
        if len(bodies) != count:
            raise StorageError.for_slot(
                f"the slot says {count} entries, its rows are {len(bodies)} on Postgres "
                f"{self.server}; nothing was read",
                slot,
            )
        return Snapshot(decode_entries(bodies, slot), True, rev)

    def get(self, scope: str, scope_id: str, key: str, default: Any = None) -> tuple[Any, bool]:
        """Return ``(value, found)``."""
        snap = self.read(scope, scope_id, key)
        return (snap.value, True) if snap.found else (default, False)

    def revision(self, scope: str, scope_id: str, key: str) -> str | None:
        """The slot's revision (one indexed lookup); ``None`` when empty."""
        slot = (str(scope), scope_id, key)
        rows = self._query("read the slot's revision", slot, self._sql_rev, _b(slot))
        return rows[0][0] if rows else None

    def slots(self) -> list[Slot]:
        """Every non-empty slot, sorted."""
        return sorted(self.listing())

    def listing(self) -> dict[Slot, tuple[int | None, float | None]]:
        """Every non-empty slot with its entry count and last write time."""
        rows = self._query(
            "list the slots",
            None,
            f"SELECT scope, scope_id, key, count, updated_at FROM {self._t['slot']}",
            (),
        )
        out: dict[Slot, tuple[int | None, float | None]] = {}
        for row in rows:
            slot = _slot_of(row)
            problem = time_problem(row[4])
            if problem is not None:
                raise StorageError.for_slot(f"bad stored entry: {problem}", slot)
            out[slot] = (row[3], row[4])
        return out

    # -- writing -------------------------------------------------------------------------------

    @contextmanager
    def _transaction(
        self, slot: Slot, timeout: float | None, expected: Any, single: bool = False
    ) -> Iterator[Any]:
        """One transaction waiting at most ``timeout`` for row locks; errors name the slot.

        ``single``: the block runs one statement, which is its own transaction
        (autocommit): no ``BEGIN`` and ``COMMIT`` round trips.
        """
        with self._lease(), self._transaction_leased(slot, timeout, expected, single) as conn:
            yield conn

    @contextmanager
    def _transaction_leased(
        self, slot: Slot, timeout: float | None, expected: Any, single: bool = False
    ) -> Iterator[Any]:
        conn = self._conn(slot, "write the slot")
        if not self._ready:
            raise StorageError.for_slot(
                f"the schema {self.schema!r} has no FlowDrop tables (opened with create=False); "
                "nothing was written",
                slot,
            )
        wait = self.busy_timeout if timeout is None else check_timeout(timeout)
        committing = False
        with self._bounded(conn, wait, "write the slot", slot):
            try:
                # lock_timeout 0 means "wait forever" to Postgres: never pass 0.
                self._lock_timeout(conn, _ms(wait))
                if single:  # the statement commits itself: its lost reply is an unknown outcome
                    committing = True
                    yield conn
                else:
                    tx = conn.transaction()
                    tx.__enter__()
                    try:
                        yield conn
                    except BaseException as exc:
                        tx.__exit__(type(exc), exc, exc.__traceback__)
                        raise
                    committing = True
                    tx.__exit__(None, None, None)
            except psycopg.Error as exc:
                # a commit sent on a connection that then broke may have landed; an error
                # the server answered with (the connection still up) rolled it back
                unknown = committing and (conn.closed or conn.broken)
                now: Any = None
                if isinstance(exc, _BUSY):
                    try:  # progress: the slot moved away from the revision this writer read
                        now = self.revision(*slot)
                    except StorageError:
                        now = _UNREAD
                else:
                    self._forget(conn)
                    if isinstance(exc, _CONFLICT):
                        now = self.revision(*slot)
                raise self._write_failed(exc, slot, wait, expected, now, unknown) from exc

    def _write_failed(
        self, exc: BaseException, slot: Slot, wait: float, expected: Any, now: Any, unknown: bool
    ) -> StorageError:
        """What a write transaction that failed with ``exc`` raises; nothing was written
        unless ``unknown``. ``now``: the slot's revision read after a lock wait that ran out
        (:data:`_UNREAD` when it could not be read) or a conflict."""
        if isinstance(exc, _BUSY):
            busy = StoreBusyError.for_slot(
                f"a row lock of the slot was not obtained within {wait:.3g} s; nothing was written",
                slot,
            )
            busy.progressed = now is not _UNREAD and now != (None if expected is ANY else expected)
            return busy
        if isinstance(exc, pg_errors.UniqueViolation):
            # Two writers raced to create the slot's row or the same journal record: the
            # transaction was rolled back whole, so this is a conflict, nothing written.
            return RevisionConflict(slot, "(racing writer)", now)
        if isinstance(exc, _RETRYABLE):
            # Serializable isolation (or a deadlock): the server rolled the transaction
            # back whole for a concurrent one, even at commit: a conflict, nothing written.
            return RevisionConflict(slot, f"(concurrent transaction: {type(exc).__name__})", now)
        return self._error("write the slot", slot, exc, unknown=unknown)

    def _meta(self, conn: Any, slot: Slot) -> tuple[Any, ...] | None:
        """``(id, rev, count)`` of the slot's row, locked for this transaction; None when empty."""
        return conn.execute(self._sql_meta, _b(slot)).fetchone()  # type: ignore[no-any-return]

    def set(
        self,
        scope: str,
        scope_id: str,
        key: str,
        value: Any,
        *,
        expected: Expected = ANY,
        timeout: float | None = None,
    ) -> str:
        """Replace the slot's whole value (a list as rows); return the new revision."""
        slot = (str(scope), scope_id, key)
        is_buffer = isinstance(value, list | tuple)
        if is_buffer:
            rows = [encode_json(e, slot, f"entry {n}") for n, e in enumerate(value)]
        else:
            text = encode_json(value, slot, "value")
        token = new_revision()
        for attempt in range(_WRITE_TRIES):
            try:
                with self._transaction(slot, timeout, expected) as conn:
                    row = self._meta(conn, slot)
                    conflict_check(slot, expected, None if row is None else row[1])
                    if row is not None:
                        conn.execute(f"DELETE FROM {self._t['slot']} WHERE id = %s", (row[0],))
                    sid = conn.execute(
                        f"INSERT INTO {self._t['slot']} (scope, scope_id, key, rev, count, "
                        "value, updated_at) VALUES (%s, %s, %s, %s, %s, %s, %s) RETURNING id",
                        (
                            *_b(slot),
                            token,
                            len(rows) if is_buffer else None,
                            None if is_buffer else text,
                            time.time(),
                        ),
                    ).fetchone()[0]
                    if is_buffer and rows:
                        with conn.cursor() as cur:
                            cur.executemany(self._rows.insert, list(initial_rows(sid, rows)))
                return token
            except RevisionConflict as exc:
                if not _again(expected, exc, attempt):
                    raise
        raise AssertionError("unreachable")  # pragma: no cover

    def apply(
        self,
        scope: str,
        scope_id: str,
        key: str,
        delta: Delta,
        *,
        expected: str | None,
        timeout: float | None = None,
        journal: JournalWrite | None = None,
    ) -> str:
        """Write only the rows ``delta`` changes, if the slot is at ``expected``.

        One transaction: the row lock, the revision check, the journal's
        record number, the rows, ``UPDATE ... WHERE rev = <expected>`` and
        the record, so both land or neither does.
        """
        slot, bodies, token = self._apply_args(scope, scope_id, key, delta, journal)
        try:
            return self._apply(slot, delta, bodies, expected, token, timeout, journal)
        except StorageError as exc:
            # A commit whose reply was lost: ask whether it landed, so a stored turn is
            # reported as stored and a retry never duplicates it.
            if not (self._unknown(exc, delta) and write_landed(self, slot, token, journal)):
                raise
            _log.warning(
                "the commit reply of a write to slot %s was lost; it landed", slot_label(*slot)
            )
            return token

    @staticmethod
    def _unknown(exc: StorageError, delta: Delta) -> bool:
        """Whether a failed write's commit was sent with no answer (it may have landed)."""
        return "outcome is unknown" in str(exc) and bool(delta.ops)

    @staticmethod
    def _apply_args(
        scope: str, scope_id: str, key: str, delta: Delta, journal: JournalWrite | None
    ) -> tuple[Slot, list[str | None], str]:
        """:meth:`apply`'s slot, rows as JSON text (refused before any I/O) and new revision."""
        slot = (str(scope), scope_id, key)
        bodies = [
            None
            if entry is None or kind == "delete"
            else encode_json(entry, slot, f"entry at {pos}")
            for kind, pos, entry in delta.ops
        ]
        token = new_revision() if journal is None or journal.revision is None else journal.revision
        return slot, bodies, token

    def _apply(
        self,
        slot: Slot,
        delta: Delta,
        bodies: list[str | None],
        expected: str | None,
        token: str,
        timeout: float | None,
        journal: JournalWrite | None,
    ) -> str:
        """:meth:`apply`'s transaction (under a ``write_lock``, the lock taken in it)."""
        held = _WRITE_LOCK.get()
        if held is None or held.slot != slot or held.state == _UNAVAILABLE:
            return self._apply_once(slot, delta, bodies, expected, token, timeout, journal, None)
        if held.state == _WANTED:
            self._take(held)
        try:
            done = self._apply_once(slot, delta, bodies, expected, token, timeout, journal, held)
        except _Held:  # another writer holds the lock: wait for it, then write under it
            self._take(held)
            return self._apply_once(slot, delta, bodies, expected, token, timeout, journal, held)
        except RevisionConflict:
            if held.state == _LAZY:  # racing writers: take the lock before the next try
                held.state = _WANTED
            raise
        return done

    def _apply_once(
        self,
        slot: Slot,
        delta: Delta,
        bodies: list[str | None],
        expected: str | None,
        token: str,
        timeout: float | None,
        journal: JournalWrite | None,
        held: _WriteLock | None,
    ) -> str:
        lock_key = held.key if held is not None and held.state == _LAZY else None
        steps, single = self._write_steps(slot, delta, bodies, expected, token, journal, lock_key)
        with self._transaction(slot, timeout, expected, single) as conn:
            return run_sql(conn, steps)  # type: ignore[no-any-return]

    def _write_steps(
        self,
        slot: Slot,
        delta: Delta,
        bodies: list[str | None],
        expected: str | None,
        token: str,
        journal: JournalWrite | None,
        lock_key: int | None,
    ) -> tuple[SQLSteps, bool]:
        """The write's statements, and whether they are one statement (its own transaction).

        The usual append (entries evicted from the front, then appended at the
        end, on a slot that exists) is one statement (:meth:`_tail_steps`):
        one round trip instead of five. Any other change is a transaction of
        several (:meth:`_apply_steps`).
        """
        tail = None if expected is None else _tail_shape(delta)
        if tail is None:
            return self._apply_steps(slot, delta, bodies, expected, token, journal, lock_key), False
        evicted, before, inserts = tail
        added = [bodies[k] for k in inserts]
        return (
            self._tail_steps(
                slot, delta, added, evicted, before, expected, token, journal, lock_key
            ),
            True,
        )

    def _tail_steps(
        self,
        slot: Slot,
        delta: Delta,
        added: list[str | None],
        evicted: int,
        before: int,
        expected: str | None,
        token: str,
        journal: JournalWrite | None,
        lock_key: int | None,
    ) -> SQLSteps:
        """The usual append as one statement (:data:`_TAIL`), then :meth:`_apply_steps`' checks.

        The statement writes only when every check would pass (the slot's
        lock free or not asked for, its revision ``expected``, its count the
        one the change was made on, the journal's last record the one before
        ``journal``'s); otherwise it writes nothing and its answer names the
        check that failed, raised here in :meth:`_apply_steps`' order.
        """
        parts = _b(slot)
        got, rev, count, last, updated = yield (
            ONE,
            self._sql_tail,
            {
                "lock": lock_key,
                "scope": parts[0],
                "scope_id": parts[1],
                "key": parts[2],
                "expected": expected,
                "before": before,
                "evict": evicted,
                "bodies": added,
                "seq": None if journal is None else journal.seq,
                "at": None if journal is None else journal.at,
                "record": None if journal is None else journal.text,
                "trim": None if journal is None else journal.seq - journal.limit,
                "token": token,
                "count": delta.count,
                "now": time.time(),
            },
        )
        if not got:
            raise _Held
        conflict_check(slot, expected, rev)
        if journal is not None:
            check_journal_seq(slot, journal, int(last or 0), None)
        if count is None:
            raise StorageError.for_slot(
                "stored value is not a conversation buffer (a plain value); nothing was written",
                slot,
            )
        try:
            check_ops(count, delta)
        except ValueError as exc:
            raise StorageError.for_slot(
                f"cannot apply the change ({exc}); nothing was written", slot
            ) from exc
        if updated != 1:  # pragma: no cover - every check passed, so the statement wrote
            raise RevisionConflict(slot, expected, rev)
        return token

    def _apply_steps(
        self,
        slot: Slot,
        delta: Delta,
        bodies: list[str | None],
        expected: str | None,
        token: str,
        journal: JournalWrite | None,
        lock_key: int | None,
    ) -> SQLSteps:
        """The write transaction's statements, as steps a sync or an async connection runs.

        With ``lock_key`` the slot row is read with the slot's advisory lock
        for this transaction, in one statement: :class:`_Held` (the
        transaction then rolls back) when another session holds it; the lock
        ends with the transaction, so a write that found it free ran as if
        under it (MEM-12).
        """
        parts = _b(slot)
        if lock_key is None:
            row = yield (ONE, self._sql_meta, parts)
        else:
            got, *found = yield (ONE, self._sql_meta_locking, (lock_key, *parts))
            if not got:
                raise _Held
            row = None if found[0] is None else tuple(found)
        conflict_check(slot, expected, None if row is None else row[1])
        if journal is not None:
            yield from journal_row_steps(self._rows, parts, slot, journal, None)
            if not delta.ops:  # an append that changed nothing: only its record
                return expected
        now = time.time()
        if row is None:
            got = yield (
                ONE,
                f"INSERT INTO {self._t['slot']} (scope, scope_id, key, rev, count, value, "
                "updated_at) VALUES (%s, %s, %s, %s, 0, NULL, %s) "
                "ON CONFLICT (scope, scope_id, key) DO NOTHING RETURNING id",
                (*parts, token, now),
            )
            if got is None:  # another writer created the slot meanwhile
                current = yield (ONE, self._sql_rev, parts)
                raise RevisionConflict(slot, expected, None if current is None else current[0])
            sid, count = got[0], 0
        else:
            sid, _, count = row
            if count is None:
                raise StorageError.for_slot(
                    "stored value is not a conversation buffer (a plain value); "
                    "nothing was written",
                    slot,
                )
        try:
            check_ops(count, delta)
        except ValueError as exc:
            raise StorageError.for_slot(
                f"cannot apply the change ({exc}); nothing was written", slot
            ) from exc
        yield from OrderedRows(None, self._rows, sid, count).steps(delta, bodies)
        done = yield (
            COUNT,
            f"UPDATE {self._t['slot']} SET rev = %s, count = %s, updated_at = %s "
            "WHERE id = %s AND rev = %s",
            (token, delta.count, now, sid, token if row is None else expected),
        )
        if done != 1:  # pragma: no cover - the row is locked: cannot happen
            current = yield (ONE, self._sql_rev, parts)
            raise RevisionConflict(slot, expected, None if current is None else current[0])
        return token

    def _take(self, held: _WriteLock) -> None:
        """Take the slot's advisory lock for the session (until the ``write_lock`` ends)."""
        if self._advisory(held.slot, held.key, held.deadline, held.wait):
            held.state = _TAKEN
            return
        held.state = _UNAVAILABLE
        raise LockUnavailable.for_slot(
            "the slot's lock is held by another writer past the lock timeout; nothing was written",
            held.slot,
        )

    def delete(
        self,
        scope: str,
        scope_id: str,
        key: str,
        *,
        expected: Expected = ANY,
        timeout: float | None = None,
    ) -> bool:
        """Empty the slot (its journal is kept); return whether it held a value."""
        slot = (str(scope), scope_id, key)
        for attempt in range(_WRITE_TRIES):
            try:
                with self._transaction(slot, timeout, expected) as conn:
                    row = self._meta(conn, slot)
                    conflict_check(slot, expected, None if row is None else row[1])
                    if row is None:
                        return False
                    conn.execute(f"DELETE FROM {self._t['slot']} WHERE id = %s", (row[0],))
                    return True
            except RevisionConflict as exc:
                if not _again(expected, exc, attempt):
                    raise
        raise AssertionError("unreachable")  # pragma: no cover

    # -- journal -------------------------------------------------------------------------------

    def journal_last(self, scope: str, scope_id: str, key: str) -> int:
        """The slot's newest record number (0: none)."""
        slot = (str(scope), scope_id, key)
        rows = self._query(
            "read the journal",
            slot,
            self._rows.journal_last,
            _b(slot),
        )
        return int(rows[0][0] or 0) if rows else 0

    def journal_records(self, scope: str, scope_id: str, key: str) -> list[tuple[int, Any]]:
        """The slot's kept records ``(seq, text)``, oldest first."""
        slot = (str(scope), scope_id, key)
        rows = self._query(
            "read the journal",
            slot,
            self._rows.journal_records,
            _b(slot),
        )
        return [(int(seq), text) for seq, text in rows]

    def journal_since(self, scope: str, scope_id: str, key: str, seq: int) -> list[tuple[int, Any]]:
        """The slot's kept records numbered after ``seq``, oldest first (a follower's read)."""
        slot = (str(scope), scope_id, key)
        rows = self._query(
            "read the journal",
            slot,
            self._rows.journal_since,
            (*_b(slot), seq),
        )
        return [(int(s), text) for s, text in rows]

    def journal_counts(self) -> dict[Slot, int]:
        """How many records each journaled slot keeps."""
        rows = self._query(
            "list the journal",
            None,
            self._rows.journal_counts,
            (),
        )
        return {_slot_of(r): int(r[3]) for r in rows}

    # -- MEM-12 --------------------------------------------------------------------------------

    @contextmanager
    def lock(self, scope: str, scope_id: str, key: str, timeout: float = 5.0) -> Iterator[bool]:
        """MEM-12: the slot's thread lock, then a session advisory lock, waiting at most ``timeout``.

        Yields whether both were acquired; never raises for a timeout. The
        advisory lock lives on this thread's connection (the one the append
        then writes through) and is released on exit; a connection that
        fails while waiting yields ``False`` (the write that follows reports
        the failure).
        """
        slot = (str(scope), scope_id, key)
        wait = check_timeout(timeout)
        deadline = time.monotonic() + wait
        if self._pid != fork_generation():
            self._after_fork()
        with self._locks.held(slot, wait) as got_thread, self._lease():
            lock_key = _lock_key(self.schema, slot)
            got = False
            try:
                got = got_thread and self._advisory(slot, lock_key, deadline, wait)
                yield got
            finally:
                if got:
                    self._unadvise(slot, lock_key)

    @contextmanager
    def write_lock(
        self, scope: str, scope_id: str, key: str, timeout: float = 5.0
    ) -> Iterator[bool]:
        """MEM-12 for an append: the slot's thread lock now, the advisory lock with the write.

        The usual append then saves two round trips: its write transaction
        takes the slot's advisory lock with the slot row
        (``pg_try_advisory_xact_lock``, released at commit) instead of a
        session lock before and an unlock after. A write finding the lock
        held waits for it (as :meth:`lock` would, until the same deadline) and
        writes again under it; a write that conflicted takes it before the
        next try, so racing writers queue. Not obtained in time, the write
        raises :class:`LockUnavailable` (nothing written) and the append
        goes on unserialized. The block holds one connection, as :meth:`lock`.
        """
        slot = (str(scope), scope_id, key)
        wait = check_timeout(timeout)
        if self._pid != fork_generation():
            self._after_fork()
        with self._locks.held(slot, wait) as got_thread, self._lease():
            if not got_thread:
                yield False
                return
            held = _WriteLock(slot, _lock_key(self.schema, slot), wait)
            mark = _WRITE_LOCK.set(held)
            try:
                yield True
            finally:
                _WRITE_LOCK.reset(mark)
                if held.state == _TAKEN:
                    self._unadvise(slot, held.key)

    def _advisory(self, slot: Slot, lock_key: int, deadline: float, wait: float) -> bool:
        """Take the slot's session advisory lock on this thread's connection, by ``deadline``.

        Whether it was taken; never raises for a timeout, and a connection
        that fails while waiting is False (the write that follows reports it).
        """
        conn = None
        try:
            conn = self._conn(slot, "take the slot lock", max(deadline - time.monotonic(), 0.0))
            remaining = deadline - time.monotonic()
            with self._bounded(conn, max(remaining, 0.0), "take the slot lock", slot):
                if remaining <= 0:
                    return bool(
                        conn.execute("SELECT pg_try_advisory_lock(%s)", (lock_key,)).fetchone()[0]
                    )
                # Whole milliseconds, so a buffer's repeated appends set it once per
                # connection; the thread lock's wait is taken off.
                self._lock_timeout(conn, _ms(wait if remaining > 0.9 * wait else remaining))
                try:
                    conn.execute("SELECT pg_advisory_lock(%s)", (lock_key,))
                    return True
                except (pg_errors.LockNotAvailable, pg_errors.QueryCanceled):
                    return False
        except (psycopg.Error, StorageError) as exc:
            _log.warning(
                "MEM-12: cannot take the advisory lock on slot %s (%s)", slot_label(*slot), exc
            )
            if conn is not None:
                self._forget(conn)
            return False

    def _unadvise(self, slot: Slot, lock_key: int) -> None:
        """Release the slot's session advisory lock (the server frees it with the connection)."""
        conn = getattr(self._local, "conn", None)
        if conn is None or conn.broken:
            return
        try:
            with self._bounded(conn, 0.0, "release the slot lock", slot):
                conn.execute("SELECT pg_advisory_unlock(%s)", (lock_key,))
        except (psycopg.Error, StorageError):
            self._forget(conn)

    # -- native async (psycopg AsyncConnection) ------------------------------------------------

    def native_async(self) -> bool:
        """Whether the async API runs on ``psycopg.AsyncConnection`` (the store's own pool).

        Then ``aappend`` runs the append's steps (:mod:`flowdrop_core.storage._steps`) on
        the async twins below: the same statements (:meth:`_apply_steps`), the same
        checks and errors, no thread. A caller's pool or connection is sync, so with one
        the async API runs on the store's bounded executor instead.
        """
        return self._given_pool is None

    def _aside(self) -> _AsyncSide:
        """This event loop's connections and task locks (made on first use, again after a fork).

        Each loop holds at most ``pool_size`` connections, closed as the loop
        ends; making one closes the sync pool's idle connections, so a process
        appending from async code only stays within ``pool_size``.
        """
        loop = asyncio.get_running_loop()
        side = self._asides.get(loop)
        if side is not None and side.generation == fork_generation():
            return side
        if self._pid != fork_generation():
            self._after_fork()  # drops the parent's sides unclosed
        with self._asides_guard:  # sides of loops closed without shutting them down go
            gone = [other for other in self._asides.values() if other.loop.is_closed()]
            for other in gone:
                del self._asides[other.loop]
        for other in gone:
            other.forget(close=True)
        if isinstance(self._pool, _OwnPool):
            self._pool.close_idle()
        side = _AsyncSide(self.pool_size, self._aconnect, self._side_ended)
        with self._asides_guard:
            self._asides[loop] = side
        return side

    def _side_ended(self, side: _AsyncSide) -> None:
        with self._asides_guard:
            if self._asides.get(side.loop) is side:
                del self._asides[side.loop]

    async def _aconnect(self) -> Any:
        return await psycopg.AsyncConnection.connect(
            self.dsn, autocommit=True, connect_timeout=self.connect_timeout
        )

    async def aclose(self) -> None:
        """Close the current event loop's connections now (``asyncio.run`` closes them as
        its loop ends without this call; the sync ones: :meth:`close`)."""
        with self._asides_guard:
            side = self._asides.pop(asyncio.get_running_loop(), None)
        if side is not None:
            await side.aclose()
            side.forget(close=False)

    @asynccontextmanager
    async def _alease(self) -> AsyncIterator[_ALease]:
        """:meth:`_lease` for a task: one connection until the outermost call ends."""
        lease = _ALEASE.get()
        if lease is not None and lease.store is self:
            yield lease
            return
        lease = _ALease(self, self._aside())
        mark = _ALEASE.set(lease)
        try:
            yield lease
        finally:
            _ALEASE.reset(mark)
            conn, lease.conn = lease.conn, None
            if conn is not None:
                await lease.side.pool.release(conn, conn.closed or conn.broken)

    async def _aconn(
        self, lease: _ALease, slot: Slot | None, what: str, wait: float | None = None
    ) -> Any:
        """:meth:`_conn` for a task: the lease's connection (from the loop's pool)."""
        if not self._ready:  # first use: create or check the tables once, as the sync path
            async with lease.side.ready_guard:  # one task prepares; the others then see it
                if not self._ready:
                    await asyncio.to_thread(self._prepare_now, slot, what)
        conn = lease.conn
        if conn is not None and (conn.closed or conn.broken):
            await self._adrop(lease)
            conn = None
        if conn is None:
            wait = self.busy_timeout if wait is None else wait
            try:
                conn = await lease.side.pool.acquire(wait)
            except psycopg.Error as exc:
                raise self._error(what, slot, exc) from None
            if conn is None:
                raise self._exhausted(what, slot, wait, lease.side.pool.size)
            lease.conn = conn
        return conn

    def _prepare_now(self, slot: Slot | None, what: str) -> None:
        """Create or check the tables on a sync connection, then close it (a worker thread)."""
        with self._lease():
            self._conn(slot, what)
        if isinstance(self._pool, _OwnPool):
            self._pool.close_idle()

    async def _adrop(self, lease: _ALease) -> None:
        conn, lease.conn = lease.conn, None
        if conn is not None:
            await lease.side.pool.release(conn, True)

    async def _aforget(self, lease: _ALease) -> None:
        conn = lease.conn
        if conn is not None and (conn.closed or conn.broken):
            await self._adrop(lease)

    @asynccontextmanager
    async def _abounded(
        self, lease: _ALease, wait: float, what: str, slot: Slot | None
    ) -> AsyncIterator[None]:
        """:meth:`_bounded` on the event loop: a timer cuts the connection at the deadline."""
        call = _Call(lease.conn, 0.0)
        timer = asyncio.get_running_loop().call_later(wait + self.io_timeout, _fire, call)
        try:
            yield
        except (psycopg.Error, StorageError) as exc:
            if not call.fired:
                raise
            await self._adrop(lease)
            raise self._no_answer(what, slot, wait, exc) from exc
        finally:
            timer.cancel()

    async def _alock_timeout(self, conn: Any, value: str) -> None:
        if self._lock_timeouts.get(conn) != value:
            await conn.execute(f"SET lock_timeout = '{value}'")
            self._lock_timeouts[conn] = value

    async def _aquery(
        self, what: str, slot: Slot | None, sql: str, args: tuple[Any, ...]
    ) -> list[Any]:
        """:meth:`_query` on the loop's connections."""
        async with self._alease() as lease:
            for attempt in range(_TRIES):
                conn = await self._aconn(lease, slot, what)
                if not self._ready:
                    return []
                try:
                    async with self._abounded(lease, 0.0, what, slot):
                        cur = await conn.execute(sql, args)
                        return await cur.fetchall()
                except _RETRYABLE as exc:
                    if attempt + 1 < _TRIES:
                        continue
                    raise self._error(what, slot, exc) from None
                except psycopg.Error as exc:
                    await self._aforget(lease)
                    raise self._error(what, slot, exc) from None
        raise AssertionError("unreachable")  # pragma: no cover

    async def aread(self, scope: str, scope_id: str, key: str) -> Snapshot:
        """:meth:`read` on ``psycopg.AsyncConnection``: the same statement and checks."""
        slot = (str(scope), scope_id, key)
        return self._snapshot(
            slot, await self._aquery("read the slot", slot, self._sql_read, _b(slot))
        )

    async def arevision(self, scope: str, scope_id: str, key: str) -> str | None:
        """:meth:`revision` on ``psycopg.AsyncConnection``."""
        slot = (str(scope), scope_id, key)
        rows = await self._aquery("read the slot's revision", slot, self._sql_rev, _b(slot))
        return rows[0][0] if rows else None

    async def ajournal_last(self, scope: str, scope_id: str, key: str) -> int:
        """:meth:`journal_last` on ``psycopg.AsyncConnection``."""
        slot = (str(scope), scope_id, key)
        rows = await self._aquery("read the journal", slot, self._rows.journal_last, _b(slot))
        return int(rows[0][0] or 0) if rows else 0

    async def ajournal_records(self, scope: str, scope_id: str, key: str) -> list[tuple[int, Any]]:
        """:meth:`journal_records` on ``psycopg.AsyncConnection``."""
        slot = (str(scope), scope_id, key)
        rows = await self._aquery("read the journal", slot, self._rows.journal_records, _b(slot))
        return [(int(seq), text) for seq, text in rows]

    @asynccontextmanager
    async def _atransaction(
        self, slot: Slot, timeout: float | None, expected: Any, single: bool = False
    ) -> AsyncIterator[Any]:
        """:meth:`_transaction` on the loop's connections: the same bounds and errors."""
        async with self._alease() as lease:
            conn = await self._aconn(lease, slot, "write the slot")
            if not self._ready:
                raise StorageError.for_slot(
                    f"the schema {self.schema!r} has no FlowDrop tables (opened with "
                    "create=False); nothing was written",
                    slot,
                )
            wait = self.busy_timeout if timeout is None else check_timeout(timeout)
            committing = False
            async with self._abounded(lease, wait, "write the slot", slot):
                try:
                    await self._alock_timeout(conn, _ms(wait))
                    if single:
                        committing = True
                        yield conn
                    else:
                        tx = conn.transaction()
                        await tx.__aenter__()
                        try:
                            yield conn
                        except BaseException as exc:
                            await tx.__aexit__(type(exc), exc, exc.__traceback__)
                            raise
                        committing = True
                        await tx.__aexit__(None, None, None)
                except psycopg.Error as exc:
                    unknown = committing and (conn.closed or conn.broken)
                    now: Any = None
                    if isinstance(exc, _BUSY):
                        try:
                            now = await self.arevision(*slot)
                        except StorageError:
                            now = _UNREAD
                    else:
                        await self._aforget(lease)
                        if isinstance(exc, _CONFLICT):
                            now = await self.arevision(*slot)
                    raise self._write_failed(exc, slot, wait, expected, now, unknown) from exc

    async def aapply(
        self,
        scope: str,
        scope_id: str,
        key: str,
        delta: Delta,
        *,
        expected: str | None,
        timeout: float | None = None,
        journal: JournalWrite | None = None,
    ) -> str:
        """:meth:`apply` on ``psycopg.AsyncConnection``: the same transaction's statements."""
        slot, bodies, token = self._apply_args(scope, scope_id, key, delta, journal)
        try:
            return await self._aapply(slot, delta, bodies, expected, token, timeout, journal)
        except StorageError as exc:
            if not (self._unknown(exc, delta) and await awrite_landed(self, slot, token, journal)):
                raise
            _log.warning(
                "the commit reply of a write to slot %s was lost; it landed", slot_label(*slot)
            )
            return token

    async def _aapply(
        self,
        slot: Slot,
        delta: Delta,
        bodies: list[str | None],
        expected: str | None,
        token: str,
        timeout: float | None,
        journal: JournalWrite | None,
    ) -> str:
        """:meth:`_apply` on the loop's connections (the lock states are the same)."""
        held = _WRITE_LOCK.get()
        if held is None or held.slot != slot or held.state == _UNAVAILABLE:
            held = None
        elif held.state == _WANTED:
            await self._atake(held)
        args = (slot, delta, bodies, expected, token, journal)
        try:
            return await self._aapply_once(*args, timeout, held)
        except _Held:  # another writer holds the lock: wait for it, then write under it
            assert held is not None
            await self._atake(held)
            return await self._aapply_once(*args, timeout, held)
        except RevisionConflict:
            if held is not None and held.state == _LAZY:  # racing writers: lock before retrying
                held.state = _WANTED
            raise

    async def _aapply_once(
        self,
        slot: Slot,
        delta: Delta,
        bodies: list[str | None],
        expected: str | None,
        token: str,
        journal: JournalWrite | None,
        timeout: float | None,
        held: _WriteLock | None,
    ) -> str:
        lock_key = held.key if held is not None and held.state == _LAZY else None
        steps, single = self._write_steps(slot, delta, bodies, expected, token, journal, lock_key)
        async with self._atransaction(slot, timeout, expected, single) as conn:
            return await arun_sql(conn, steps)  # type: ignore[no-any-return]

    @asynccontextmanager
    async def awrite_lock(
        self, scope: str, scope_id: str, key: str, timeout: float = 5.0
    ) -> AsyncIterator[bool]:
        """:meth:`write_lock` for async code: the slot's task lock now, the advisory lock
        with the write (MEM-12), the block on one connection of the loop's pool."""
        slot = (str(scope), scope_id, key)
        wait = check_timeout(timeout)
        side = self._aside()
        task_lock = side.locks.get(slot)
        if not await acquire_within(task_lock, wait):
            yield False
            return
        try:
            async with self._alease():
                held = _WriteLock(slot, _lock_key(self.schema, slot), wait)
                mark = _WRITE_LOCK.set(held)
                try:
                    yield True
                finally:
                    _WRITE_LOCK.reset(mark)
                    if held.state == _TAKEN:
                        await self._aunadvise(slot, held.key)
        finally:
            task_lock.release()

    async def _atake(self, held: _WriteLock) -> None:
        """:meth:`_take` on the loop's connection."""
        if await self._aadvisory(held.slot, held.key, held.deadline, held.wait):
            held.state = _TAKEN
            return
        held.state = _UNAVAILABLE
        raise LockUnavailable.for_slot(
            "the slot's lock is held by another writer past the lock timeout; nothing was written",
            held.slot,
        )

    async def _aadvisory(self, slot: Slot, lock_key: int, deadline: float, wait: float) -> bool:
        """:meth:`_advisory` on the lease's connection."""
        async with self._alease() as lease:
            try:
                conn = await self._aconn(
                    lease, slot, "take the slot lock", max(deadline - time.monotonic(), 0.0)
                )
                remaining = deadline - time.monotonic()
                async with self._abounded(lease, max(remaining, 0.0), "take the slot lock", slot):
                    if remaining <= 0:
                        cur = await conn.execute("SELECT pg_try_advisory_lock(%s)", (lock_key,))
                        return bool((await cur.fetchone())[0])
                    await self._alock_timeout(
                        conn, _ms(wait if remaining > 0.9 * wait else remaining)
                    )
                    try:
                        await conn.execute("SELECT pg_advisory_lock(%s)", (lock_key,))
                        return True
                    except (pg_errors.LockNotAvailable, pg_errors.QueryCanceled):
                        return False
            except (psycopg.Error, StorageError) as exc:
                _log.warning(
                    "MEM-12: cannot take the advisory lock on slot %s (%s)", slot_label(*slot), exc
                )
                await self._aforget(lease)
                return False

    async def _aunadvise(self, slot: Slot, lock_key: int) -> None:
        """:meth:`_unadvise` on the lease's connection."""
        lease = _ALEASE.get()
        if lease is None or lease.conn is None or lease.conn.broken:
            return
        try:
            async with self._abounded(lease, 0.0, "release the slot lock", slot):
                await lease.conn.execute("SELECT pg_advisory_unlock(%s)", (lock_key,))
        except (psycopg.Error, StorageError):
            await self._aforget(lease)
