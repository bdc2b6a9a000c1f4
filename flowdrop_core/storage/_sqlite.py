"""The SQLite store: one row per buffer entry, so an append writes only what it changed.

Layout (schema version 3, ``PRAGMA user_version``):

- ``slot``: one row per non-empty slot with its revision, its entry count
  (``NULL`` for a plain value) and, for a plain value, its JSON.
- ``entry``: one row per buffer entry, keyed by ``(slot id, ord)``. ``ord``
  is a gapped integer key (appends step by 2**20), so an entry can be put
  between two others by taking the midpoint, without renumbering the buffer;
  when a gap is used up, the rows from that point on are shifted once.
- ``journal``: the append journal, one row per record, keyed by
  ``(scope, scope_id, key, seq)``; a record is written in the transaction of
  the change it records, or not at all.

An append (:meth:`SQLiteStore.apply`) therefore costs a few indexed
statements per changed row: an eviction deletes the first row, an append
inserts after the last, a placeholder goes between its neighbours (found
from the nearer end), a replacement updates one row. A read still returns
the whole buffer. Every write is one ``BEGIN IMMEDIATE`` .. ``COMMIT``
transaction, conditional on the revision when asked (MEM-12), and waits at
most its ``timeout`` for SQLite's write lock (:class:`StoreBusyError` past it).
A file written by the first version (one JSON value per slot) is migrated
the first time it is opened writable.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from operator import itemgetter
from pathlib import Path
from typing import Any
from urllib.parse import quote

from flowdrop_core.storage._base import (
    ANY,
    Delta,
    Expected,
    JournalWrite,
    Slot,
    SlotLocks,
    Snapshot,
    StorageError,
    StoreBusyError,
    check_depth,
    check_ops,
    check_timeout,
    conflict_check,
    decode_entries,
    decode_json,
    fork_generation,
    new_revision,
    slot_label,
    time_problem,
    too_deep_error,
)
from flowdrop_core.storage._ordered_rows import (
    OrderedRows,
    RowSQL,
    add_journal_row,
    initial_rows,
)
from flowdrop_core.storage._readonly import ReadOnlyKind, is_stale, open_readonly

try:  # POSIX advisory file locks for the cross-process half of MEM-12.
    import fcntl
except ImportError:  # pragma: no cover - non-POSIX: thread-level serialization only
    fcntl = None  # type: ignore[assignment]

__all__ = ["DB_ENV", "SQLiteStore", "default_db_path"]

#: Bounds on listing a store's slots: a hostile or huge file cannot hold a page or the CLI.
MAX_LISTED_SLOTS = 10_000
LIST_SECONDS = 5.0

#: Bounds on every other read (a slot's buffer, its journal, the slot names), so that a
#: hostile or damaged file cannot hold the reader's memory or time: at most this many
#: rows, this many characters of stored JSON (measured a chunk of rows at a time, so a
#: read stops within one chunk of the bound) and this many seconds (SQLite's progress handler stops the statement). Far above
#: what a windowed buffer or a kept journal holds.
MAX_READ_ROWS = 1_000_000
MAX_READ_CHARS = 256 * 1024 * 1024
READ_SECONDS = 10.0

#: Rows fetched at a time by a bounded read (see ``SQLiteStore._rows``).
_CHUNK = 512


def _chars(rows: list[Any], column: int) -> int:
    """The characters (bytes for a blob) of JSON ``column`` holds in ``rows``."""
    try:
        return sum(map(len, map(itemgetter(column), rows)))
    except TypeError:  # a number or NULL in an untyped column: it is not JSON, counted 0
        return sum(len(v) for v in map(itemgetter(column), rows) if isinstance(v, str | bytes))


#: The tables this store reads; each must be a real table. A view (or a virtual table)
#: of that name runs arbitrary SQL on every read: a recursive one never ends.
_READ_TABLES = ("slot", "entry", "journal", "slots")

_log = logging.getLogger("flowdrop_core")

#: Environment variable naming the SQLite file when no path is passed.
DB_ENV = "FLOWDROP_DB"

#: The statements on the ``entry`` and ``journal`` tables (shared with Postgres).
_ROWS = RowSQL.build("entry", "journal", "?")

_VERSION = 3
#: Layouts this version reads without migrating (a read-only file cannot be migrated;
#: version 2 has no journal table, or one made the same way by an earlier version).
_READABLE = (2, 3)
_SCHEMA = (
    """
    CREATE TABLE IF NOT EXISTS slot (
        id         INTEGER PRIMARY KEY,
        scope      TEXT NOT NULL,
        scope_id   TEXT NOT NULL,
        key        TEXT NOT NULL,
        rev        TEXT NOT NULL,
        count      INTEGER,
        value      TEXT,
        updated_at REAL NOT NULL,
        UNIQUE (scope, scope_id, key)
    )
    """,
    """
    CREATE TABLE IF NOT EXISTS entry (
        slot INTEGER NOT NULL,
        ord  INTEGER NOT NULL,
        body TEXT NOT NULL,
        PRIMARY KEY (slot, ord)
    ) WITHOUT ROWID
    """,
    """
    CREATE TABLE IF NOT EXISTS journal (
        scope    TEXT NOT NULL,
        scope_id TEXT NOT NULL,
        key      TEXT NOT NULL,
        seq      INTEGER NOT NULL,
        at       REAL NOT NULL,
        record   TEXT NOT NULL,
        PRIMARY KEY (scope, scope_id, key, seq)
    ) WITHOUT ROWID
    """,
    *(
        # Any change of a row gives its slot a fresh revision, so a write that
        # bypasses this class (a manual UPDATE) never leaves a cached copy
        # current; our own writes then set the revision they return.
        f"""
        CREATE TRIGGER IF NOT EXISTS entry_{op.lower()}_rev AFTER {op} ON entry
        BEGIN
            UPDATE slot SET rev = 'external-' || lower(hex(randomblob(16)))
            WHERE id = {row}.slot;
        END
        """
        for op, row in (("INSERT", "NEW"), ("UPDATE", "NEW"), ("DELETE", "OLD"))
    ),
)

#: Poll interval bounds while waiting for another process's slot file lock.
_POLL_MIN, _POLL_MAX = 0.0005, 0.004


def _encode(value: Any, slot: Slot, path: Path, where: str) -> str:
    """JSON text for SQLite; refuses what cannot be stored, naming the slot and field."""
    try:
        text = json.dumps(value, ensure_ascii=False, allow_nan=False, separators=(",", ":"))
        text.encode("utf-8")  # a lone surrogate cannot be stored as UTF-8
        check_depth(value, text, slot, where, path)
    except RecursionError:
        raise too_deep_error(value, slot, where, path) from None
    except UnicodeEncodeError as exc:
        field = _surrogate_path(value, where)
        raise StorageError.for_slot(
            f"{field} holds a lone surrogate ({exc.object[exc.start : exc.end]!a}), "
            "which cannot be stored as UTF-8; nothing was written",
            slot,
            path,
        ) from None
    except (TypeError, ValueError) as exc:
        raise StorageError.for_slot(
            f"{where} is not JSON-serializable ({exc})", slot, path
        ) from exc
    return text


def _has_surrogate(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def _surrogate_path(value: Any, where: str) -> str:
    """The JSON path of the first string (key or value) holding a lone surrogate."""
    if isinstance(value, str):
        return where if _has_surrogate(value) else ""
    if isinstance(value, dict):
        for k, v in value.items():
            if isinstance(k, str) and _has_surrogate(k):
                return f"{where} key {k!a}"
            found = _surrogate_path(v, f"{where}.{k}")
            if found:
                return found
    elif isinstance(value, list | tuple):
        for n, v in enumerate(value):
            found = _surrogate_path(v, f"{where}[{n}]")
            if found:
                return found
    return where


def _decode(text: Any, slot: Slot, path: Path, what: str = "stored value") -> Any:
    """A stored JSON value, bounded (see :func:`~flowdrop_core.storage._base.decode_json`)."""
    return decode_json(text, slot, what, path)


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


def _is_busy(exc: sqlite3.Error) -> bool:
    code = getattr(exc, "sqlite_errorcode", None)
    if code is not None:
        return code & 0xFF in (sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED)
    return "locked" in str(exc) or "busy" in str(exc)  # pragma: no cover - Python < 3.11


class SQLiteStore:
    """SQLite file store (WAL mode) with thread- and process-level slot locks.

    The path comes from ``path``, else ``$FLOWDROP_DB``, else
    :func:`default_db_path`; parent directories are created. Each thread gets
    its own connection. A process killed mid-write leaves the old state
    (SQLite rolls the uncommitted transaction back), never a torn one.

    ``busy_timeout`` is the default bound on waiting for SQLite's write lock;
    a write's own ``timeout`` overrides it (``ConversationBuffer`` passes its
    ``lock_timeout``). A file that is not writable (or ``readonly=True``) is
    opened read-only: reads work, writes raise :class:`StorageError`.

    MEM-12 across processes: ``lock()`` takes the slot's thread lock, then an
    ``fcntl.flock`` on a per-slot lock file in ``<db>.locks/`` (polled until
    the deadline, so the wait is bounded). The kernel releases a dead
    process's flock, so a crash never leaves a slot locked.

    ``on_write(slot)``, when given, is called inside each write transaction
    just before ``COMMIT``; it exists for crash tests and instrumentation.
    """

    kind = "sqlite"

    def __init__(
        self,
        path: str | os.PathLike[str] | None = None,
        *,
        busy_timeout: float = 30.0,
        on_write: Callable[[Slot], None] | None = None,
        readonly: bool | None = None,
    ) -> None:
        self.path = _resolve_path(path)
        self.lock_dir = self.path.with_name(self.path.name + ".locks")
        self.busy_timeout = check_timeout(busy_timeout)
        self.on_write = on_write
        if readonly is None:  # an existing file we may not write (or whose folder we may not)
            readonly = self.path.exists() and not (
                os.access(self.path, os.W_OK) and os.access(self.path.parent, os.W_OK)
            )
        self.readonly = readonly
        self._conns_guard = threading.Lock()
        self._after_fork()
        try:
            if readonly:
                conn = self._conn()
                self._check_readable(conn)
                return
            self._check_ours()  # before any change: a file that is not our store stays as is
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

    def _probe(self) -> tuple[int, set[str]]:
        """``user_version`` and table names, read without changing or creating anything."""
        conn = sqlite3.connect(self._ro_uri(immutable=True), uri=True)
        try:
            version = conn.execute("PRAGMA user_version").fetchone()[0]
            tables = {
                r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")
            }
        finally:
            conn.close()
        return int(version), tables

    def _check_ours(self) -> None:
        """Refuse a writable open of a file that is not a FlowDrop store, before any change.

        Ours: an empty file or database, the current layout, or a version-1 file
        (its ``slots`` table is migrated). Anything else (another program's
        database, a text file) would get our tables, WAL mode and a lock folder.
        """
        if not self.path.exists() or self.path.stat().st_size == 0:
            return
        if not self.path.is_file():
            raise StorageError("not a SQLite store (not a regular file)", path=self.path)
        try:
            version, tables = self._probe()
        except sqlite3.Error as exc:
            raise StorageError(
                f"not a FlowDrop store ({exc}); nothing was changed", path=self.path
            ) from exc
        ours = (version == _VERSION and {"slot", "entry"} <= tables) or (
            version in (0, 1) and tables <= {"slots"}
        )
        if not ours:
            names = ", ".join(sorted(tables)) or "none"
            raise StorageError(
                f"not a FlowDrop store (layout version {version}, tables: {names}); "
                "opening it writable would change it, so nothing was changed",
                path=self.path,
            )

    def _ro_uri(self, *, immutable: bool) -> str:
        """The read-only URI; ``immutable`` makes SQLite create nothing (no ``-shm``)."""
        return f"file:{quote(os.fspath(self.path))}?mode=ro" + ("&immutable=1" if immutable else "")

    def _ro_connect(self) -> tuple[sqlite3.Connection, ReadOnlyKind]:
        """A read-only connection that leaves the file and its folder untouched.

        :func:`~flowdrop_core.storage._readonly.open_readonly`: a file at rest is
        opened ``immutable`` (a plain read-only open would create ``-shm`` and
        ``-wal``, and fails outright on a read-only filesystem); while a writer is
        live, or after one left its ``-wal`` and ``-shm``, the ``-shm`` is mapped
        read-only (a plain open would rebuild it); a ``-wal`` without ``-shm`` is
        read from a private copy. Returns the connection and its kind.
        """
        return open_readonly(
            self.path, timeout=self.busy_timeout, isolation_level=None, check_same_thread=False
        )

    def _check_readable(self, conn: sqlite3.Connection) -> None:
        """A read-only file must already have the current layout (it cannot be migrated)."""
        version = conn.execute("PRAGMA user_version").fetchone()[0]
        tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        if version not in _READABLE and tables and not (version in (0, 1) and tables <= {"slots"}):
            # Another program's database: a writable open refuses it too, so do not advise one.
            names = ", ".join(sorted(tables))
            raise StorageError(
                f"not a FlowDrop store (layout version {version}, tables: {names}), nor an "
                "OpenAI Agents SQLiteSession or LangGraph SqliteSaver file; no command of "
                "flowdrop-buffer reads it",
                path=self.path,
            )
        if version not in _READABLE and tables:
            raise StorageError(
                f"the file has layout version {version}, this version reads "
                f"{' and '.join(map(str, _READABLE))}; "
                "open it once writable to migrate it",
                path=self.path,
            )

    @staticmethod
    def _migrate(conn: sqlite3.Connection) -> None:
        """Create the tables, or move a version-1 file (one JSON value per slot) into them.

        An up-to-date file is only read, so opening it takes no write lock.
        """
        if conn.execute("PRAGMA user_version").fetchone()[0] == _VERSION:
            return
        conn.execute("BEGIN IMMEDIATE")  # one process migrates; the others wait, then see it
        try:
            if conn.execute("PRAGMA user_version").fetchone()[0] != _VERSION:
                for statement in _SCHEMA:
                    conn.execute(statement)
                legacy = conn.execute(
                    "SELECT 1 FROM sqlite_master WHERE type='table' AND name='slots'"
                ).fetchone()
                if legacy:
                    _migrate_v1(conn)
                conn.execute(f"PRAGMA user_version = {_VERSION}")
            conn.execute("COMMIT")
        except BaseException:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            raise

    # -- connections -----------------------------------------------------------------------

    def _after_fork(self) -> None:
        """Start fresh per-process state: connections and thread locks never cross a fork."""
        self._pid = fork_generation()
        self._local = threading.local()
        self._conns: list[sqlite3.Connection] = []
        self._locks = SlotLocks()

    def _conn(self) -> sqlite3.Connection:
        if self._pid != fork_generation():
            self._after_fork()
        conn = getattr(self._local, "conn", None)
        kind = getattr(self._local, "ro_kind", None)
        if conn is not None and kind is not None and is_stale(self.path, kind):
            # A writer started since: an immutable connection (or a private copy) would
            # not see its commits (nor notice a checkpoint rewriting pages under it).
            with self._conns_guard:
                if conn in self._conns:
                    self._conns.remove(conn)
            conn.close()
            conn = None
        if conn is None:
            if self.readonly:
                conn, self._local.ro_kind = self._ro_connect()
                self._local.immutable = self._local.ro_kind == "immutable"
            else:
                conn = sqlite3.connect(
                    self.path,
                    timeout=self.busy_timeout,
                    isolation_level=None,  # we issue BEGIN/COMMIT ourselves
                    check_same_thread=False,  # only so close() may close it from another thread
                )
                conn.execute("PRAGMA synchronous=NORMAL")  # WAL+NORMAL: crash-safe
            try:
                self._check_tables(conn)
            except BaseException:
                conn.close()
                raise
            self._local.conn = conn
            self._local.busy = self.busy_timeout
            with self._conns_guard:
                self._conns.append(conn)
        return conn

    def _check_tables(self, conn: sqlite3.Connection) -> None:
        """Refuse a file whose ``slot``, ``entry`` or ``journal`` is not a real table.

        Checked once per connection, before any read or write through it: a view
        or a virtual table of one of those names would run its own SQL on every
        read (a recursive view never returns), on every path, not only the listing.
        """
        names = ", ".join(f"'{name}'" for name in _READ_TABLES)
        rows = conn.execute(
            "SELECT name, type, sql FROM sqlite_master "
            f"WHERE type IN ('table', 'view') AND lower(name) IN ({names})"
        ).fetchall()
        for name, kind, sql in rows:
            virtual = kind == "table" and str(sql or "").lstrip().upper().startswith(
                "CREATE VIRTUAL"
            )
            if kind != "table" or virtual:
                raise StorageError(
                    f"not a FlowDrop store: {name!r} is a {'virtual table' if virtual else kind}, "
                    "not a table (reading it would run its own SQL); nothing was read",
                    path=self.path,
                )

    @contextmanager
    def _deadline(self, conn: sqlite3.Connection) -> Iterator[None]:
        """Stop any statement of ``conn`` still running :data:`READ_SECONDS` from now."""
        deadline = time.monotonic() + READ_SECONDS
        conn.set_progress_handler(lambda: int(time.monotonic() > deadline), 4_000)
        try:
            yield
        finally:
            conn.set_progress_handler(None, 0)

    def _read_error(self, what: str, slot: Slot | None, exc: sqlite3.Error) -> StorageError:
        """The error of a failed read: a read stopped by :meth:`_deadline` says so."""
        if "interrupted" in str(exc):
            message = f"reading {what} took over {READ_SECONDS:g} s and was stopped"
        else:
            message = f"cannot read {what} ({exc})"
        if slot is None:
            return StorageError(message, path=self.path)
        return StorageError.for_slot(message, slot, self.path)

    def _over(self, what: str, slot: Slot | None, limit: str) -> StorageError:
        message = f"{what} holds more than {limit}, the most a read takes; nothing was read"
        if slot is None:
            return StorageError(message, path=self.path)
        return StorageError.for_slot(message, slot, self.path)

    def _rows(
        self,
        conn: sqlite3.Connection,
        what: str,
        slot: Slot | None,
        sql: str,
        args: tuple[Any, ...],
        sized: int | None = None,
    ) -> list[Any]:
        """The rows of one read, bounded: at most :data:`MAX_READ_ROWS` rows and, when
        column ``sized`` holds JSON text, at most :data:`MAX_READ_CHARS` characters of it.

        Rows are fetched a chunk at a time and measured at C speed, so a read stops
        within one chunk of a bound. (A file holds what it stores: with views
        refused, no row is larger than the file.)
        """
        cur = conn.execute(sql, args)
        rows: list[Any] = []
        chars = 0
        while True:
            chunk = cur.fetchmany(_CHUNK)
            if not chunk:
                return rows
            rows += chunk
            if len(rows) > MAX_READ_ROWS:
                raise self._over(what, slot, f"{MAX_READ_ROWS:,} rows")
            if sized is not None:
                chars += _chars(chunk, sized)
                if chars > MAX_READ_CHARS:
                    raise self._over(what, slot, f"{MAX_READ_CHARS:,} characters of JSON")

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

    # -- reading ---------------------------------------------------------------------------

    def _meta(self, conn: sqlite3.Connection, slot: Slot) -> tuple[Any, ...] | None:
        """``(id, rev, count, value)`` of the slot's row, ``None`` when empty."""
        return conn.execute(
            "SELECT id, rev, count, value FROM slot WHERE scope=? AND scope_id=? AND key=?", slot
        ).fetchone()

    def read(self, scope: str, scope_id: str, key: str) -> Snapshot:
        """The value (a buffer as a list) and its revision, from one read transaction.

        Bounded: at most :data:`MAX_READ_ROWS` entries and :data:`MAX_READ_CHARS`
        characters of JSON within :data:`READ_SECONDS`; an entry nested too deep or
        holding a number out of range is a located bad stored entry.
        """
        slot = (str(scope), scope_id, key)
        conn = self._conn()
        try:
            conn.execute("BEGIN")
            try:
                with self._deadline(conn):
                    row = conn.execute(
                        "SELECT id, rev, count, CASE WHEN length(value) <= ? THEN value END, "
                        "length(value) FROM slot WHERE scope=? AND scope_id=? AND key=?",
                        (MAX_READ_CHARS, *slot),
                    ).fetchone()
                    if row is None:
                        return Snapshot(None, False, None)
                    sid, rev, count, value, size = row
                    if count is None:
                        if (size or 0) > MAX_READ_CHARS:
                            raise self._over(
                                "the slot's value", slot, f"{MAX_READ_CHARS:,} characters of JSON"
                            )
                        return Snapshot(_decode(value, slot, self.path), True, rev)
                    rows = self._rows(
                        conn,
                        "the slot",
                        slot,
                        "SELECT body FROM entry WHERE slot=? ORDER BY ord LIMIT ?",
                        (sid, MAX_READ_ROWS + 1),
                        sized=0,
                    )
                    bodies = [r[0] for r in rows]
            finally:
                conn.execute("COMMIT")
        except sqlite3.Error as exc:
            raise self._read_error("the slot", slot, exc) from exc
        return Snapshot(self._decode_rows(bodies, slot), True, rev)

    def _decode_rows(self, bodies: list[Any], slot: Slot) -> list[Any]:
        """Decode every row in one pass; on failure, name the bad row (bounded, see
        :func:`~flowdrop_core.storage._base.decode_entries`)."""
        return decode_entries(bodies, slot, self.path)

    def get(self, scope: str, scope_id: str, key: str, default: Any = None) -> tuple[Any, bool]:
        """Return ``(value, found)``; a corrupt value raises :class:`StorageError`."""
        snap = self.read(scope, scope_id, key)
        return (snap.value, True) if snap.found else (default, False)

    def revision(self, scope: str, scope_id: str, key: str) -> str | None:
        """The slot's revision (one indexed lookup, the value is not read); ``None`` when empty."""
        slot = (str(scope), scope_id, key)
        try:
            row = (
                self._conn()
                .execute("SELECT rev FROM slot WHERE scope=? AND scope_id=? AND key=?", slot)
                .fetchone()
            )
        except sqlite3.Error as exc:
            raise StorageError.for_slot(
                f"cannot read the slot's revision ({exc})", slot, self.path
            ) from exc
        return None if row is None else row[0]

    def slots(self) -> list[Slot]:
        """Every non-empty slot, sorted (for the inspector); bounded like :meth:`read`."""
        try:
            conn = self._conn()
            with self._deadline(conn):
                rows = self._rows(
                    conn,
                    "the slot names",
                    None,
                    "SELECT scope, scope_id, key FROM slot ORDER BY 1, 2, 3 LIMIT ?",
                    (MAX_READ_ROWS + 1,),
                )
        except sqlite3.Error as exc:
            raise self._read_error("the slot names", None, exc) from exc
        return [tuple(r) for r in rows]

    # -- writing ---------------------------------------------------------------------------

    @contextmanager
    def _transaction(self, slot: Slot, timeout: float | None) -> Iterator[sqlite3.Connection]:
        """One ``BEGIN IMMEDIATE`` .. ``COMMIT``, waiting at most ``timeout`` for the write lock."""
        if self.readonly:
            raise StorageError.for_slot(
                "the store was opened read-only (the file is not writable); nothing was written",
                slot,
                self.path,
            )
        conn = self._conn()
        wait = self.busy_timeout if timeout is None else check_timeout(timeout)
        version = None
        try:
            if self._local.busy != wait:
                conn.execute(f"PRAGMA busy_timeout = {int(wait * 1000)}")
                self._local.busy = wait
            # Changes when another connection commits: tells contention from a stall.
            version = conn.execute("PRAGMA data_version").fetchone()[0]
            conn.execute("BEGIN IMMEDIATE")
            try:
                yield conn
                if self.on_write is not None:
                    self.on_write(slot)
                conn.execute("COMMIT")
            except BaseException:
                if conn.in_transaction:
                    conn.execute("ROLLBACK")
                raise
            self._local.busy_version = None
        except sqlite3.Error as exc:
            if _is_busy(exc):
                busy = StoreBusyError.for_slot(
                    f"SQLite's write lock was not obtained within {wait:.3g} s; nothing was written",
                    slot,
                    self.path,
                )
                try:
                    now = conn.execute("PRAGMA data_version").fetchone()[0]
                except sqlite3.Error:  # pragma: no cover - the connection itself failed
                    now = version
                # Progress is any commit since this attempt began or since the last
                # busy attempt of this thread: commits made while the caller re-read
                # between attempts count too.
                last = getattr(self._local, "busy_version", None)
                busy.progressed = now != version or (last is not None and now != last)
                self._local.busy_version = now
                raise busy from exc
            raise StorageError.for_slot(f"cannot write the slot ({exc})", slot, self.path) from exc

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
            rows = [_encode(e, slot, self.path, f"entry {n}") for n, e in enumerate(value)]
        else:
            text = _encode(value, slot, self.path, "value")
        token = new_revision()
        with self._transaction(slot, timeout) as conn:
            row = self._meta(conn, slot)
            conflict_check(slot, expected, None if row is None else row[1], self.path)
            if row is not None:
                conn.execute("DELETE FROM entry WHERE slot=?", (row[0],))
                conn.execute("DELETE FROM slot WHERE id=?", (row[0],))
            cur = conn.execute(
                "INSERT INTO slot (scope, scope_id, key, rev, count, value, updated_at) "
                "VALUES (?, ?, ?, ?, ?, ?, ?)",
                (
                    *slot,
                    token,
                    len(rows) if is_buffer else None,
                    None if is_buffer else text,
                    time.time(),
                ),
            )
            if is_buffer:
                sid = cur.lastrowid
                conn.executemany(_ROWS.insert, initial_rows(sid, rows))
                conn.execute("UPDATE slot SET rev=? WHERE id=?", (token, sid))
        return token

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

        With ``journal``, the record goes in the same transaction: both or neither.
        """
        slot = (str(scope), scope_id, key)
        bodies = [
            None
            if entry is None or kind == "delete"
            else _encode(entry, slot, self.path, f"entry at position {pos}")
            for kind, pos, entry in delta.ops
        ]
        token = new_revision() if journal is None or journal.revision is None else journal.revision
        with self._transaction(slot, timeout) as conn:
            row = self._meta(conn, slot)
            conflict_check(slot, expected, None if row is None else row[1], self.path)
            if journal is not None:
                add_journal_row(conn, _ROWS, slot, slot, journal, self.path)
                if not delta.ops:  # an append that changed nothing: only its record
                    return expected  # type: ignore[return-value]
            if row is None:
                sid = conn.execute(
                    "INSERT INTO slot (scope, scope_id, key, rev, count, value, updated_at) "
                    "VALUES (?, ?, ?, ?, 0, NULL, ?)",
                    (*slot, token, time.time()),
                ).lastrowid
                count = 0
            else:
                sid, _, count, _ = row
                if count is None:
                    raise StorageError.for_slot(
                        "stored value is not a conversation buffer (a plain value); "
                        "nothing was written",
                        slot,
                        self.path,
                    )
            try:
                check_ops(count, delta)
            except ValueError as exc:
                raise StorageError.for_slot(
                    f"cannot apply the change ({exc}); nothing was written", slot, self.path
                ) from exc
            OrderedRows(conn, _ROWS, int(sid or 0), count).run(delta, bodies)
            conn.execute(
                "UPDATE slot SET rev=?, count=?, updated_at=? WHERE id=?",
                (token, delta.count, time.time(), sid),
            )
        return token

    # -- journal and listing ---------------------------------------------------------------

    def _has_journal(self, conn: sqlite3.Connection) -> bool:
        """Whether the file has a journal table (a read-only version-2 file may not)."""
        if not self.readonly:
            return True
        return bool(
            conn.execute(
                "SELECT 1 FROM sqlite_master WHERE type='table' AND name='journal'"
            ).fetchone()
        )

    def _journal_query(
        self,
        what: str,
        slot: Slot | None,
        sql: str,
        args: tuple[Any, ...],
        sized: int | None = None,
    ) -> Any:
        """A read of the journal, bounded like :meth:`read` (see :meth:`_rows`)."""
        try:
            conn = self._conn()
            if not self._has_journal(conn):
                return []
            with self._deadline(conn):
                return self._rows(conn, what, slot, sql, args, sized)
        except sqlite3.Error as exc:
            raise self._read_error(what, slot, exc) from exc

    def journal_last(self, scope: str, scope_id: str, key: str) -> int:
        """The slot's newest record number (0: none)."""
        slot = (str(scope), scope_id, key)
        rows = self._journal_query(
            "the journal",
            slot,
            _ROWS.journal_last,
            slot,
        )
        return int(rows[0][0] or 0) if rows else 0

    def journal_records(self, scope: str, scope_id: str, key: str) -> list[tuple[int, Any]]:
        """The slot's kept records ``(seq, text)``, oldest first."""
        slot = (str(scope), scope_id, key)
        rows = self._journal_query(
            "the journal",
            slot,
            _ROWS.journal_records + " LIMIT ?",
            (*slot, MAX_READ_ROWS + 1),
            sized=1,
        )
        return [(int(seq), text) for seq, text in rows]

    def journal_since(self, scope: str, scope_id: str, key: str, seq: int) -> list[tuple[int, Any]]:
        """The slot's kept records numbered after ``seq``, oldest first (a follower's read)."""
        slot = (str(scope), scope_id, key)
        rows = self._journal_query(
            "the journal",
            slot,
            _ROWS.journal_since + " LIMIT ?",
            (*slot, seq, MAX_READ_ROWS + 1),
            sized=1,
        )
        return [(int(s), text) for s, text in rows]

    def journal_counts(self) -> dict[Slot, int]:
        """How many records each journaled slot keeps."""
        rows = self._journal_query(
            "the journal's slots",
            None,
            _ROWS.journal_counts,
            (),
        )
        return {(a, b, c): int(n) for a, b, c, n in rows}

    def listing(self) -> dict[Slot, tuple[int | None, float | None]]:
        """Every non-empty slot with its entry count and last write time, bounded.

        At most :data:`MAX_LISTED_SLOTS` rows within :data:`LIST_SECONDS`; only a real
        ``slot`` table is read, never a view of that name (a recursive view would run
        forever); a row whose ids are not text, or whose count or time is not a
        number, is a located bad stored entry.
        """
        path = self.path
        try:
            conn = self._conn()
            kind = conn.execute("SELECT type FROM sqlite_master WHERE name='slot'").fetchone()
            if kind is None:
                raise StorageError("not a FlowDrop store: it has no 'slot' table", path=path)
            if kind[0] != "table":
                raise StorageError(
                    f"not a FlowDrop store: 'slot' is a {kind[0]}, not a table", path=path
                )
            deadline = time.monotonic() + LIST_SECONDS
            conn.set_progress_handler(lambda: int(time.monotonic() > deadline), 10_000)
            try:
                rows = conn.execute(
                    "SELECT scope, scope_id, key, count, updated_at FROM slot LIMIT ?",
                    (MAX_LISTED_SLOTS + 1,),
                ).fetchall()
            finally:
                conn.set_progress_handler(None, 0)
        except sqlite3.OperationalError as exc:
            if "interrupted" in str(exc):
                raise StorageError(
                    f"listing the slots took over {LIST_SECONDS:g} s and was stopped", path=path
                ) from exc
            raise StorageError(f"cannot list the slots ({exc})", path=path) from exc
        except sqlite3.Error as exc:
            raise StorageError(f"cannot list the slots ({exc})", path=path) from exc
        if len(rows) > MAX_LISTED_SLOTS:
            raise StorageError(
                f"the store holds more than {MAX_LISTED_SLOTS:,} slots; at most that many "
                "are listed",
                path=path,
            )
        out: dict[Slot, tuple[int | None, float | None]] = {}
        for n, (a, b, c, count, at) in enumerate(rows, start=1):
            if not all(isinstance(v, str) for v in (a, b, c)):
                raise StorageError(
                    f"bad stored entry: slot row {n} has a scope, scope id or key that is not "
                    f"text ({a!r}, {b!r}, {c!r})",
                    path=path,
                )
            if count is not None and (isinstance(count, bool) or not isinstance(count, int)):
                raise StorageError.for_slot(
                    f"bad stored entry: count {count!r} is not a number", (a, b, c), path
                )
            problem = time_problem(at)
            if problem is not None:
                raise StorageError.for_slot(f"bad stored entry: {problem}", (a, b, c), path)
            out[(a, b, c)] = (count, at)
        return out

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
        with self._transaction(slot, timeout) as conn:
            row = self._meta(conn, slot)
            conflict_check(slot, expected, None if row is None else row[1], self.path)
            if row is None:
                return False
            conn.execute("DELETE FROM entry WHERE slot=?", (row[0],))
            conn.execute("DELETE FROM slot WHERE id=?", (row[0],))
            return True

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
        deadline = time.monotonic() + check_timeout(timeout)
        if self._pid != fork_generation():
            self._after_fork()
        with self._locks.held(slot, timeout) as got_thread:
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


def _migrate_v1(conn: sqlite3.Connection) -> None:
    """Move every version-1 row (``slots``: one JSON value per slot) into the new tables.

    A list becomes rows (each element re-encoded as is, good or bad, so a bad
    entry is still reported as one when read); anything else, corrupt text
    included, is kept verbatim as the slot's plain value.
    """
    rows = conn.execute("SELECT scope, scope_id, key, value, updated_at FROM slots").fetchall()
    for scope, scope_id, key, text, updated in rows:
        try:
            value = json.loads(text) if isinstance(text, str | bytes) else None
        except ValueError:
            value = None
        is_buffer = isinstance(value, list)
        sid = conn.execute(
            "INSERT INTO slot (scope, scope_id, key, rev, count, value, updated_at) "
            "VALUES (?, ?, ?, ?, ?, ?, ?)",
            (
                scope,
                scope_id,
                key,
                new_revision(),
                len(value) if is_buffer else None,  # type: ignore[arg-type]
                None if is_buffer else text,
                updated or time.time(),
            ),
        ).lastrowid
        if isinstance(value, list):
            bodies = [json.dumps(e, ensure_ascii=False, separators=(",", ":")) for e in value]
            conn.executemany(_ROWS.insert, initial_rows(sid, bodies))
    conn.execute("DROP TRIGGER IF EXISTS slots_rev_unknown")
    conn.execute("DROP TABLE slots")


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
