"""Storage backends for buffers and memory values, keyed by ``(scope, scope_id, key)``.

Two backends share one small :class:`Store` protocol:

- :class:`MemoryStore`: process-local, the default for tests and the playground.
- :class:`SQLiteStore`: a real SQLite file in WAL mode, the embedded default
  for anything that must survive a restart.

:class:`SQLiteStore` stores JSON text. :class:`MemoryStore` stores the value
itself, a list as an immutable tuple snapshot of its elements (shallow), so a
write costs O(length) and no encoding. **Entries are treated as immutable**:
the engine never mutates an entry dict (it replaces a placeholder with a new
dict), and callers must not mutate the dicts a store or a buffer hands out.

Revisions: every ``set`` returns a fresh, never reused token, and
``revision()`` returns the slot's current token in O(1) without decoding the
value. A caller that keeps a decoded copy of a slot next to the token it read
(``ConversationBuffer`` does) can tell whether anyone, in any thread or
process, has written the slot since.

``lock()`` is the MEM-12 slot lock: it serializes the read-modify-write of one
slot across threads and, for SQLite, across processes on the same file. The
wait is bounded; the context manager yields whether the lock was acquired and
never raises for a timeout, so the caller can proceed unserialized rather
than drop a turn.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import logging
import os
import sqlite3
import threading
import time
import uuid
import weakref
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

try:  # POSIX advisory file locks for the cross-process half of MEM-12.
    import fcntl
except ImportError:  # pragma: no cover - non-POSIX: thread-level serialization only
    fcntl = None  # type: ignore[assignment]

__all__ = [
    "DB_ENV",
    "MemoryStore",
    "SQLiteStore",
    "StorageError",
    "Store",
    "default_db_path",
    "slot_label",
]

_log = logging.getLogger("flowdrop_core")

#: Environment variable naming the SQLite file when no path is passed.
DB_ENV = "FLOWDROP_DB"

Slot = tuple[str, str, str]


def slot_label(scope: str, scope_id: str, key: str) -> str:
    """Human-readable slot name used in every error and warning."""
    return f"(scope={scope!r}, scope_id={scope_id!r}, key={key!r})"


class StorageError(RuntimeError):
    """A stored value cannot be read or written; names the slot and, for files, the path.

    Raised instead of ever returning an empty buffer for a corrupt value.
    """

    def __init__(
        self,
        message: str,
        *,
        scope: str | None = None,
        scope_id: str | None = None,
        key: str | None = None,
        path: str | os.PathLike[str] | None = None,
    ) -> None:
        where = []
        if scope is not None:
            where.append(f"slot {slot_label(scope, scope_id or '', key or '')}")
        if path is not None:
            where.append(f"file {os.fspath(path)!r}")
        super().__init__(f"{message} [{', '.join(where)}]" if where else message)
        self.scope, self.scope_id, self.key = scope, scope_id, key
        self.path = None if path is None else os.fspath(path)

    @classmethod
    def for_slot(
        cls, message: str, slot: Slot, path: str | os.PathLike[str] | None = None
    ) -> StorageError:
        """The error for one ``(scope, scope_id, key)`` slot."""
        scope, scope_id, key = slot
        return cls(message, scope=scope, scope_id=scope_id, key=key, path=path)


@runtime_checkable
class Store(Protocol):
    """What a buffer needs from a backend. ``scope`` is the scope's name (a ``str``)."""

    def get(self, scope: str, scope_id: str, key: str, default: Any = None) -> tuple[Any, bool]:
        """Return ``(value, True)``, or ``(default, False)`` when the slot is empty."""
        ...

    def set(self, scope: str, scope_id: str, key: str, value: Any) -> str:
        """Store ``value`` in the slot, replacing what was there; return its new revision token.

        The token is fresh for every write: no later write of any slot, in any
        process, returns it again (a delete followed by a set included).
        """
        ...

    def revision(self, scope: str, scope_id: str, key: str) -> str | None:
        """The token the slot's last write returned, in O(1) and without decoding the value.

        ``None`` when the slot is empty or its revision is unknown (a value
        written without a token); ``None`` never matches a cached copy.
        """
        ...

    def delete(self, scope: str, scope_id: str, key: str) -> bool:
        """Empty the slot; return whether it held a value."""
        ...

    def lock(
        self, scope: str, scope_id: str, key: str, timeout: float
    ) -> AbstractContextManager[bool]:
        """MEM-12 slot lock; yields ``True`` if acquired within ``timeout`` seconds."""
        ...


#: Tokens are ``<random per-process prefix>-<counter>``: unique across processes
#: (the prefix is 128 random bits, drawn again after a fork) and cheap to make.
_token_prefix = uuid.uuid4().hex
_token_counter = itertools.count(1)


def _reseed_tokens() -> None:
    global _token_prefix, _token_counter
    _token_prefix = uuid.uuid4().hex
    _token_counter = itertools.count(1)


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_reseed_tokens)


def new_revision() -> str:
    """A fresh revision token, never returned before by any process."""
    return f"{_token_prefix}-{next(_token_counter)}"


def _encode(value: Any, slot: Slot, path: str | None = None) -> str:
    try:
        return json.dumps(value, ensure_ascii=False, allow_nan=False, separators=(",", ":"))
    except (TypeError, ValueError) as exc:
        raise StorageError.for_slot(f"value is not JSON-serializable ({exc})", slot, path) from exc


def _decode(text: Any, slot: Slot, path: str | None = None) -> Any:
    try:
        if isinstance(text, bytes):
            text = text.decode("utf-8")
        if not isinstance(text, str):
            raise TypeError(f"stored value is {type(text).__name__}, not JSON text")
        return json.loads(text)
    except (TypeError, ValueError) as exc:  # JSONDecodeError and UnicodeDecodeError are ValueErrors
        raise StorageError.for_slot(
            f"stored value is corrupt and cannot be decoded ({exc})", slot, path
        ) from exc


def _check_timeout(timeout: float) -> float:
    if timeout < 0:
        raise ValueError(f"lock timeout must be >= 0 seconds, got {timeout!r}")
    return float(timeout)


class _SlotLocks:
    """One ``threading.Lock`` per slot, created on demand and dropped when unused.

    Different slots get different locks, so they never wait on each other.
    """

    def __init__(self) -> None:
        self._guard = threading.Lock()
        self._locks: weakref.WeakValueDictionary[Slot, Any] = weakref.WeakValueDictionary()

    def get(self, slot: Slot) -> Any:
        with self._guard:
            lock = self._locks.get(slot)
            if lock is None:
                lock = threading.Lock()
                self._locks[slot] = lock
            return lock


class MemoryStore:
    """In-process store: a dict of immutable snapshots plus per-slot thread locks (MEM-12).

    A list or tuple is stored as a tuple of its elements and ``get`` returns a
    new list, so appending to (or replacing items of) the list passed to
    ``set`` or returned by ``get`` never changes the store. The elements
    themselves are shared, not copied: entries are immutable by contract
    (see the module docstring). Any value is accepted; only
    :class:`SQLiteStore` requires JSON.
    """

    def __init__(self) -> None:
        self._data: dict[Slot, tuple[Any, str]] = {}  # slot -> (snapshot, revision)
        self._guard = threading.Lock()
        self._locks = _SlotLocks()

    def get(self, scope: str, scope_id: str, key: str, default: Any = None) -> tuple[Any, bool]:
        """Return ``(value, found)``; a stored list comes back as a new list."""
        item = self._data.get((str(scope), scope_id, key))  # one dict read: atomic under the GIL
        if item is None:
            return default, False
        value = item[0]
        return (list(value) if type(value) is tuple else value), True

    def set(self, scope: str, scope_id: str, key: str, value: Any) -> str:
        """Store a snapshot of ``value`` (a list as a tuple); return the new revision token."""
        if isinstance(value, list | tuple):
            value = tuple(value)
        token = new_revision()
        item = (value, token)
        with self._guard:
            self._data[(str(scope), scope_id, key)] = item
        return token

    def revision(self, scope: str, scope_id: str, key: str) -> str | None:
        """The slot's revision token, ``None`` when it is empty."""
        item = self._data.get((str(scope), scope_id, key))
        return None if item is None else item[1]

    def delete(self, scope: str, scope_id: str, key: str) -> bool:
        """Empty the slot; return whether it held a value."""
        with self._guard:
            return self._data.pop((str(scope), scope_id, key), None) is not None

    def slots(self) -> list[Slot]:
        """Every non-empty slot, sorted (for the inspector)."""
        with self._guard:
            return sorted(self._data)

    @contextmanager
    def lock(self, scope: str, scope_id: str, key: str, timeout: float = 5.0) -> Iterator[bool]:
        """MEM-12: hold the slot's thread lock, waiting at most ``timeout`` seconds."""
        lock = self._locks.get((str(scope), scope_id, key))
        acquired = lock.acquire(timeout=_check_timeout(timeout))
        try:
            yield acquired
        finally:
            if acquired:
                lock.release()


def default_db_path() -> Path:
    """Where the SQLite store lives when neither an argument nor ``FLOWDROP_DB`` says.

    ``$XDG_DATA_HOME/flowdrop/buffers.sqlite3``, else
    ``~/.local/share/flowdrop/buffers.sqlite3`` (``%LOCALAPPDATA%`` on Windows).
    """
    base = os.environ.get("XDG_DATA_HOME", "").strip()
    if not base and os.name == "nt":  # pragma: no cover - platform specific
        base = os.environ.get("LOCALAPPDATA", "").strip()
    root = Path(base) if base else Path.home() / ".local" / "share"
    return root / "flowdrop" / "buffers.sqlite3"


def _resolve_path(path: str | os.PathLike[str] | None) -> Path:
    if path is None:
        env = os.environ.get(DB_ENV, "").strip()
        path = env or default_db_path()
    p = Path(path).expanduser()
    if str(p) == ":memory:" or str(p).startswith("file:"):
        raise ValueError(
            f"SQLiteStore needs a real file path, got {os.fspath(path)!r}; "
            "use MemoryStore for an in-memory store"
        )
    return p.resolve()


_SCHEMA = """
CREATE TABLE IF NOT EXISTS slots (
    scope      TEXT NOT NULL,
    scope_id   TEXT NOT NULL,
    key        TEXT NOT NULL,
    value      TEXT NOT NULL,
    updated_at REAL NOT NULL,
    rev        TEXT,
    PRIMARY KEY (scope, scope_id, key)
) WITHOUT ROWID
"""

#: A write that changes the value but keeps the revision (an older version of
#: this code, a manual UPDATE) makes the revision unknown, so no cached copy of
#: the old value can match it. Our own writes always set a new ``rev``.
_REV_TRIGGER = """
CREATE TRIGGER IF NOT EXISTS slots_rev_unknown AFTER UPDATE ON slots
FOR EACH ROW WHEN NEW.rev IS NOT NULL AND NEW.rev IS OLD.rev
BEGIN
    UPDATE slots SET rev = NULL
    WHERE scope = NEW.scope AND scope_id = NEW.scope_id AND key = NEW.key;
END
"""

#: Poll interval bounds while waiting for another process's slot file lock.
_POLL_MIN, _POLL_MAX = 0.0005, 0.004


class SQLiteStore:
    """SQLite file store (WAL mode) with thread- and process-level slot locks.

    The path comes from ``path``, else ``$FLOWDROP_DB``, else
    :func:`default_db_path`; parent directories are created. Each thread gets
    its own connection. Every write is one short ``BEGIN IMMEDIATE`` ..
    ``COMMIT`` transaction, so a process killed mid-write leaves the old value
    (SQLite rolls the uncommitted transaction back) and never a torn one.

    MEM-12 across processes: ``lock()`` takes the slot's thread lock, then an
    ``fcntl.flock`` on a per-slot lock file in ``<db>.locks/`` (polled until
    the deadline, so the wait is bounded). The kernel releases a dead
    process's flock, so a crash never leaves a slot locked.

    ``on_write(slot)``, when given, is called inside each write transaction
    just before ``COMMIT``; it exists for crash tests and instrumentation.
    """

    def __init__(
        self,
        path: str | os.PathLike[str] | None = None,
        *,
        busy_timeout: float = 30.0,
        on_write: Callable[[Slot], None] | None = None,
    ) -> None:
        self.path = _resolve_path(path)
        self.lock_dir = self.path.with_name(self.path.name + ".locks")
        self.busy_timeout = busy_timeout
        self.on_write = on_write
        self._conns_guard = threading.Lock()
        self._after_fork()
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self.lock_dir.mkdir(exist_ok=True)
            conn = self._conn()
            mode = conn.execute("PRAGMA journal_mode=WAL").fetchone()[0]
            self._migrate(conn)
        except (OSError, sqlite3.Error) as exc:
            raise StorageError(f"cannot open the SQLite store ({exc})", path=self.path) from exc
        if str(mode).lower() != "wal":  # pragma: no cover - e.g. a filesystem without shm
            raise StorageError(f"SQLite refused WAL mode (got {mode!r})", path=self.path)

    def __repr__(self) -> str:
        return f"SQLiteStore({os.fspath(self.path)!r})"

    @staticmethod
    def _migrate(conn: sqlite3.Connection) -> None:
        """Create the table, or add the ``rev`` column to one made before revisions existed.

        Rows of a migrated table keep ``rev`` NULL ("unknown") until their next write.
        An up-to-date file is only read, so opening it takes no write lock.
        """

        def current() -> bool:
            columns = {row[1] for row in conn.execute("PRAGMA table_info(slots)")}
            trigger = conn.execute(
                "SELECT 1 FROM sqlite_master WHERE type='trigger' AND name='slots_rev_unknown'"
            ).fetchone()
            return "rev" in columns and trigger is not None

        if current():
            return
        conn.execute("BEGIN IMMEDIATE")  # one process migrates; the others wait, then see it
        try:
            conn.execute(_SCHEMA)
            columns = {row[1] for row in conn.execute("PRAGMA table_info(slots)")}
            if "rev" not in columns:
                conn.execute("ALTER TABLE slots ADD COLUMN rev TEXT")
            conn.execute(_REV_TRIGGER)
            conn.execute("COMMIT")
        except BaseException:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            raise

    # -- connections -----------------------------------------------------------------------

    def _after_fork(self) -> None:
        """Start fresh per-process state: connections and thread locks never cross a fork."""
        self._pid = os.getpid()
        self._local = threading.local()
        self._conns: list[sqlite3.Connection] = []
        self._locks = _SlotLocks()

    def _conn(self) -> sqlite3.Connection:
        if self._pid != os.getpid():
            self._after_fork()
        conn = getattr(self._local, "conn", None)
        if conn is None:
            conn = sqlite3.connect(
                self.path,
                timeout=self.busy_timeout,
                isolation_level=None,  # we issue BEGIN/COMMIT ourselves
                check_same_thread=False,  # only so close() may close it from another thread
            )
            conn.execute("PRAGMA synchronous=NORMAL")  # WAL+NORMAL: crash-safe, not power-loss-safe
            self._local.conn = conn
            with self._conns_guard:
                self._conns.append(conn)
        return conn

    def close(self) -> None:
        """Close every connection this store opened (in any thread)."""
        with self._conns_guard:
            conns, self._conns = self._conns, []
        for conn in conns:
            conn.close()
        self._local = threading.local()

    def __enter__(self) -> SQLiteStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- Store protocol --------------------------------------------------------------------

    def _select(self, slot: Slot, column: str, what: str) -> tuple[Any] | None:
        """One column of the slot's row (``None`` when empty); errors name the slot."""
        try:
            return (
                self._conn()
                .execute(f"SELECT {column} FROM slots WHERE scope=? AND scope_id=? AND key=?", slot)
                .fetchone()
            )
        except sqlite3.Error as exc:
            raise StorageError.for_slot(f"cannot read {what} ({exc})", slot, self.path) from exc

    def get(self, scope: str, scope_id: str, key: str, default: Any = None) -> tuple[Any, bool]:
        """Return ``(value, found)``; a corrupt value raises :class:`StorageError`."""
        slot = (str(scope), scope_id, key)
        row = self._select(slot, "value", "the slot")
        if row is None:
            return default, False
        return _decode(row[0], slot, os.fspath(self.path)), True

    def set(self, scope: str, scope_id: str, key: str, value: Any) -> str:
        """Replace the slot's value and revision in one atomic statement; return the revision."""
        slot = (str(scope), scope_id, key)
        text = _encode(value, slot, os.fspath(self.path))
        token = new_revision()
        self._write(
            slot,
            "INSERT INTO slots (scope, scope_id, key, value, updated_at, rev) "
            "VALUES (?, ?, ?, ?, ?, ?) "
            "ON CONFLICT (scope, scope_id, key) DO UPDATE "
            "SET value = excluded.value, updated_at = excluded.updated_at, rev = excluded.rev",
            (*slot, text, time.time(), token),
        )
        return token

    def revision(self, scope: str, scope_id: str, key: str) -> str | None:
        """The slot's revision token (one indexed lookup, the value is not read).

        ``None`` when the slot is empty or was written without a revision.
        """
        row = self._select((str(scope), scope_id, key), "rev", "the slot's revision")
        return None if row is None else row[0]

    def delete(self, scope: str, scope_id: str, key: str) -> bool:
        """Empty the slot; return whether it held a value."""
        slot = (str(scope), scope_id, key)
        return (
            self._write(slot, "DELETE FROM slots WHERE scope=? AND scope_id=? AND key=?", slot) > 0
        )

    def _write(self, slot: Slot, sql: str, params: tuple[Any, ...]) -> int:
        conn = self._conn()
        try:
            conn.execute("BEGIN IMMEDIATE")
            try:
                changed = conn.execute(sql, params).rowcount
                if self.on_write is not None:
                    self.on_write(slot)
                conn.execute("COMMIT")
            except BaseException:
                if conn.in_transaction:
                    conn.execute("ROLLBACK")
                raise
        except sqlite3.Error as exc:
            raise StorageError.for_slot(f"cannot write the slot ({exc})", slot, self.path) from exc
        return changed

    def slots(self) -> list[Slot]:
        """Every non-empty slot, sorted (for the inspector)."""
        rows = self._conn().execute("SELECT scope, scope_id, key FROM slots ORDER BY 1, 2, 3")
        return [tuple(r) for r in rows]  # type: ignore[misc]

    # -- MEM-12 ----------------------------------------------------------------------------

    def _lock_file(self, slot: Slot) -> Path:
        digest = hashlib.sha256(json.dumps(slot).encode("utf-8")).hexdigest()[:32]
        return self.lock_dir / f"{digest}.lock"

    def _open_lock_file(self, slot: Slot) -> int | None:
        """Open the slot's lock file, recreating a removed lock directory.

        Returns ``None`` when it cannot be opened at all: the append then runs
        unserialized with the MEM-12 warning instead of failing the turn.
        """
        path = self._lock_file(slot)
        for attempt in range(2):
            try:
                return os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
            except FileNotFoundError:
                if attempt == 0:
                    self.lock_dir.mkdir(parents=True, exist_ok=True)
            except OSError:
                break
        _log.warning("MEM-12: cannot open lock file %s for slot %s", path, slot_label(*slot))
        return None

    @contextmanager
    def lock(self, scope: str, scope_id: str, key: str, timeout: float = 5.0) -> Iterator[bool]:
        """MEM-12: serialize one slot across threads and processes, waiting at most ``timeout``.

        Yields ``True`` when both the thread lock and the slot's file lock were
        acquired. On timeout it yields ``False`` (never raises); whatever was
        acquired is released on exit, exceptions included.
        """
        slot = (str(scope), scope_id, key)
        deadline = time.monotonic() + _check_timeout(timeout)
        if self._pid != os.getpid():
            self._after_fork()
        tlock = self._locks.get(slot)
        got_thread = tlock.acquire(timeout=timeout)
        fd: int | None = None
        got_file = False
        try:
            if got_thread and fcntl is not None:
                fd = self._open_lock_file(slot)
                got_file = fd is not None and _flock_until(fd, deadline)
            elif got_thread:  # pragma: no cover - non-POSIX
                got_file = True
            yield got_thread and got_file
        finally:
            if fd is not None:
                if got_file:
                    fcntl.flock(fd, fcntl.LOCK_UN)
                os.close(fd)
            if got_thread:
                tlock.release()


def _flock_until(fd: int, deadline: float) -> bool:
    """Take an exclusive flock on ``fd``, polling until ``deadline`` (monotonic)."""
    delay = _POLL_MIN
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return True
        except BlockingIOError:
            pass
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            return False
        time.sleep(min(delay, remaining))
        delay = min(delay * 2, _POLL_MAX)
