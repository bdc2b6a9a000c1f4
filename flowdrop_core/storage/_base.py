"""The store protocol every backend implements: revisions, conditional writes and deltas.

This module imports nothing but the standard library, so a backend (memory,
SQLite, Redis, ...) can implement :class:`Store` without pulling another
backend in. The protocol in one paragraph:

- A **slot** is ``(scope, scope_id, key)``. It is empty or holds a value; a
  conversation buffer is a list of entry dicts, stored so that a change costs
  the rows it touches (:meth:`Store.apply`), not the whole list.
- A **revision** is an opaque string the store hands out on every successful
  write of a slot. It is fresh: no later write of any slot, in any process,
  returns it again (a delete followed by a write included). An empty slot's
  revision is ``None``.
- Every write can be **conditional** (compare and set, MEM-12):
  ``expected=<revision>`` means "only if the slot is still at the revision I
  read"; ``expected=None`` means "only if the slot is empty"; ``expected=ANY``
  (the default of :meth:`Store.set` and :meth:`Store.delete`) writes
  unconditionally. A failed condition raises :class:`RevisionConflict` and
  changes nothing. :meth:`Store.apply` is always conditional.
- A **delta** (:class:`Delta`) is an ordered tuple of :class:`Op`; each op's
  position counts in the buffer as it stands when that op runs, exactly like
  the engine's events, so applying the ops in order to the list at
  ``expected`` yields the new list. ``Delta.count`` is the length after.
- ``timeout`` on a write bounds how long the backend may wait for its own
  write lock (SQLite's busy wait, a Redis round trip...). Past it the write
  raises :class:`StoreBusyError` and changes nothing. ``None``: the store's
  default.
- :meth:`Store.lock` is the MEM-12 slot lock: a bounded wait that yields
  whether it was acquired and never raises for a timeout.
- A store that keeps an append **journal** (:class:`JournalStore`) takes the
  record with the write (:class:`JournalWrite`, passed to :meth:`Store.apply`)
  and stores both in one transaction or script, or neither: a record's
  number must be the journal's last plus one, checked in that same step
  (:class:`JournalConflict` otherwise), so numbers never collide, repeat or
  run backwards, and an append that raised left no record and no change.

Entries are treated as immutable: the engine never mutates an entry dict,
and callers must not mutate the dicts a store or a buffer hands out.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import os
import threading
import uuid
import weakref
from collections.abc import Callable, Iterable, Iterator, MutableSequence
from contextlib import AbstractContextManager, contextmanager
from typing import Any, Final, Literal, NamedTuple, Protocol, Self, runtime_checkable

from flowdrop_core._errors import FlowdropError
from flowdrop_core.nesting import MAX_ENTRY_DEPTH, deep_offset, deeper_than, text_may_nest

__all__ = [
    "ANY",
    "Delta",
    "JournalConflict",
    "JournalStore",
    "JournalWrite",
    "LiveStep",
    "LiveStore",
    "LiveValue",
    "LockUnavailable",
    "Op",
    "RevisionConflict",
    "Slot",
    "Snapshot",
    "StorageError",
    "Store",
    "StoreBusyError",
    "acquire_within",
    "apply_ops",
    "check_ops",
    "mask_url",
    "new_revision",
    "slot_label",
]

Slot = tuple[str, str, str]


def mask_url(url: str) -> str:
    """``url`` with its password replaced by ``***`` (every place that shows a URL uses this).

    ``redis://:secret@host:6379/0`` -> ``redis://:***@host:6379/0``;
    ``postgresql://me:secret@db/app`` -> ``postgresql://me:***@db/app``. A
    ``password=`` query parameter is masked too; text that is not a URL with
    credentials comes back unchanged.
    """
    from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

    try:
        parts = urlsplit(url)
    except ValueError:
        return url
    netloc = parts.netloc
    if "@" in netloc:
        creds, host = netloc.rsplit("@", 1)
        if ":" in creds:
            user = creds.split(":", 1)[0]
            netloc = f"{user}:***@{host}"
        elif parts.scheme.startswith("redis"):  # redis://secret@host: a bare password
            netloc = f"***@{host}"
    query = parts.query
    if query and "password" in query.lower():
        pairs = [
            (k, "***" if k.lower() == "password" else v)
            for k, v in parse_qsl(query, keep_blank_values=True)
        ]
        query = urlencode(pairs, safe="*")
    return urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment))


def slot_label(scope: str, scope_id: str, key: str) -> str:
    """Human-readable slot name used in every error and warning."""
    return f"(scope={scope!r}, scope_id={scope_id!r}, key={key!r})"


class StorageError(FlowdropError, RuntimeError):
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
    def for_slot(cls, message: str, slot: Slot, path: str | os.PathLike[str] | None = None) -> Self:
        """The error for one ``(scope, scope_id, key)`` slot."""
        scope, scope_id, key = slot
        return cls(message, scope=scope, scope_id=scope_id, key=key, path=path)


class RevisionConflict(StorageError):
    """A conditional write found the slot at another revision; nothing was written (MEM-12).

    ``expected`` is the revision the writer read, ``actual`` the slot's
    current one (``None``: empty). The writer re-reads and re-applies.
    """

    def __init__(
        self,
        slot: Slot,
        expected: str | None,
        actual: str | None,
        path: str | os.PathLike[str] | None = None,
    ) -> None:
        scope, scope_id, key = slot
        super().__init__(
            f"revision conflict: expected {expected!r}, the slot is at {actual!r}",
            scope=scope,
            scope_id=scope_id,
            key=key,
            path=path,
        )
        self.expected, self.actual = expected, actual


class JournalConflict(RevisionConflict):
    """A journaled write found the slot's journal moved on; nothing was written.

    ``expected`` and ``actual`` are the journal's last record numbers (as
    text) the writer expected and found. The writer re-reads and re-applies,
    exactly as for a revision conflict.
    """

    def __init__(
        self, slot: Slot, expected: str | None, actual: str | None, path: Any = None
    ) -> None:
        super().__init__(slot, expected, actual, path)
        scope, scope_id, key = slot
        StorageError.__init__(
            self,
            f"journal conflict: expected last record {expected}, the journal is at {actual}",
            scope=scope,
            scope_id=scope_id,
            key=key,
            path=path,
        )

    @classmethod
    def for_seq(cls, slot: Slot, seq: int, last: int | str, path: Any = None) -> Self:
        """The conflict of a record numbered ``seq`` on a journal whose last is ``last``."""
        return cls(slot, str(seq - 1), str(last), path)


class StoreBusyError(StorageError):
    """The backend's own write lock was not obtained within the write's ``timeout``.

    Nothing was written; the write may be retried. ``progressed`` is True when
    other writers committed while this one waited (contention: the store is
    moving, so retrying is safe and cheap); False when nothing was committed
    for the whole wait (a stalled writer).
    """

    progressed: bool = False


class LockUnavailable(StorageError):
    """A write found the MEM-12 slot lock held by another writer and could not take it in time.

    Only from a store whose ``write_lock`` takes the lock with the append's
    first write instead of before it: nothing was written, and the append
    goes on unserialized (MEM-12), its next write conditional as ever.
    """


class _Any:
    """The type of :data:`ANY`."""

    _instance: _Any | None = None

    def __new__(cls) -> _Any:
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "ANY"


#: ``expected=ANY``: an unconditional write (whatever the slot's revision).
ANY: Final = _Any()
Expected = str | None | _Any


class Op(NamedTuple):
    """One change of a stored buffer, at a position counted when the op runs.

    ``insert``: ``entry`` goes in at ``position`` (``position == len`` appends);
    ``replace``: the entry at ``position`` becomes ``entry``; ``delete``: the
    entry at ``position`` is removed (``entry`` is what was there, for
    backends that want to check it; it may be ``None``).
    """

    kind: Literal["insert", "replace", "delete"]
    position: int
    entry: dict[str, Any] | None = None


class Delta(NamedTuple):
    """What one append changed in a buffer: ordered ops and the length after them.

    A named tuple (immutable, and cheap to build once per append).
    """

    ops: tuple[Op, ...]
    count: int  # type: ignore[assignment]  # the field's name (API) hides tuple.count


class Snapshot(NamedTuple):
    """A slot read in one consistent step: value, whether found, and its revision."""

    value: Any
    found: bool
    revision: str | None


class JournalWrite(NamedTuple):
    """A journal record written with a slot's change, in the same atomic step.

    ``seq`` must be the slot journal's last record number plus one (the store
    checks it in the write and raises :class:`JournalConflict` otherwise);
    ``text`` is the record's JSON; the store keeps the newest ``limit``
    records of the slot. ``revision`` is the revision the write leaves (the
    record names it, so the caller chooses it with :func:`new_revision`);
    for a record of an append that changed nothing it is the slot's current
    revision and the slot itself is not touched.
    """

    seq: int
    text: str
    limit: int
    at: float
    revision: str | None


@runtime_checkable
class Store(Protocol):
    """What a buffer needs from a backend. ``scope`` is the scope's name (a ``str``)."""

    def get(self, scope: str, scope_id: str, key: str, default: Any = None) -> tuple[Any, bool]:
        """Return ``(value, True)``, or ``(default, False)`` when the slot is empty.

        A stored buffer comes back as a new ``list`` the caller may change.
        """
        ...

    def read(self, scope: str, scope_id: str, key: str) -> Snapshot:
        """The slot's value and revision read consistently (``Snapshot(None, False, None)``)."""
        ...

    def revision(self, scope: str, scope_id: str, key: str) -> str | None:
        """The slot's revision in O(1) without decoding the value; ``None`` when empty."""
        ...

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
        """Replace the slot's whole value; return its new revision.

        A list is stored as a buffer (so :meth:`apply` can change it row by
        row later). Raises :class:`RevisionConflict` when ``expected`` is not
        :data:`ANY` and the slot is at another revision.
        """
        ...

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
        """Apply ``delta`` to the buffer at revision ``expected``; return the new revision.

        Costs O(ops), not O(buffer). ``expected=None`` applies to an empty
        slot (an empty buffer). Raises :class:`RevisionConflict` (nothing
        written) when the slot is at another revision, and
        :class:`StorageError` when the slot holds something that is not a
        buffer or an op's position is out of range. ``journal`` (only for a
        :class:`JournalStore`) is stored with the change or not at all.
        """
        ...

    def delete(
        self,
        scope: str,
        scope_id: str,
        key: str,
        *,
        expected: Expected = ANY,
        timeout: float | None = None,
    ) -> bool:
        """Empty the slot; return whether it held a value (conditional like :meth:`set`)."""
        ...

    def lock(
        self, scope: str, scope_id: str, key: str, timeout: float
    ) -> AbstractContextManager[bool]:
        """MEM-12 slot lock; yields ``True`` if acquired within ``timeout`` seconds."""
        ...


class LiveValue:
    """A buffer an in-process store holds in its writer's own form (see :class:`LiveStore`).

    The store never looks inside: it lists the entries for every other read
    and write (:meth:`entries`, a new list) and counts them for its listing.
    """

    __slots__ = ()

    def entries(self) -> list[Any]:
        """The buffer's entries, oldest first, as a new list."""
        raise NotImplementedError  # pragma: no cover - every subclass defines one

    def __len__(self) -> int:
        raise NotImplementedError  # pragma: no cover - every subclass defines one


#: ``step(slot, value, arg) -> (new value, result, changed)``: a read-modify-write
#: run by :meth:`LiveStore.apply_live` on the slot's current value (None when empty).
LiveStep = Callable[[Slot, Any, Any], tuple[Any, Any, bool]]


@runtime_checkable
class LiveStore(Store, Protocol):
    """A store in this process that can run a whole read-modify-write of a slot itself.

    Optional: :class:`~flowdrop_core.conversation.ConversationBuffer` uses it
    when the store has it and the append is not journaled, and otherwise (or
    when it returns None) takes the slot lock, reads and writes conditionally
    as with any store. The memory store has it: there the read, the rules
    and the write of an append are one step under the store's own guard,
    with no second copy of the buffer and no conditional write.
    """

    def apply_live(self, scope: str, scope_id: str, key: str, step: LiveStep, arg: Any) -> Any:
        """Run ``step`` on the slot's value and keep what it returns; None when not run.

        MEM-12: it runs under the guard every other read and write of the
        store takes, so it is serialized with all of them. It is not run
        (None) while anyone holds the slot's :meth:`~Store.lock`, so a holder's
        own read-modify-write is never interleaved with it. The slot gets a
        new revision when ``step`` says it changed the buffer; ``step`` must
        change nothing before it can no longer fail.
        """
        ...


@runtime_checkable
class JournalStore(Store, Protocol):
    """A store that owns its append journal and can list its slots (the Store page).

    Records are kept per slot, numbered from 1 by :class:`JournalWrite`,
    written only through :meth:`Store.apply` and kept when the slot is
    emptied. ``kind`` names the backend (``memory``, ``sqlite``, ``redis``,
    ``postgres``).
    """

    kind: str

    def journal_last(self, scope: str, scope_id: str, key: str) -> int:
        """The slot's newest record number (0: none yet)."""
        ...

    def journal_records(self, scope: str, scope_id: str, key: str) -> list[tuple[int, Any]]:
        """The slot's kept records as ``(seq, JSON text)``, oldest first."""
        ...

    def journal_counts(self) -> dict[Slot, int]:
        """How many records each slot with a journal keeps."""
        ...

    def listing(self) -> dict[Slot, tuple[int | None, float | None]]:
        """Every non-empty slot: its entry count (``None``: a plain value) and last write.

        The last write is in seconds since the epoch, ``None`` when the
        backend keeps no time.
        """
        ...


def write_landed(store: Any, slot: Slot, token: str, journal: JournalWrite | None) -> bool:
    """After a write whose reply was lost: whether it landed (asked again, best effort).

    A revision is fresh, so the slot still at ``token``, or the journal
    holding exactly this write's record, proves the write committed; then
    the caller reports success instead of an error a retry would turn into a
    duplicate. False when neither is seen or the store cannot be asked.
    """
    try:
        if store.revision(*slot) == token:
            return True
        if journal is not None:
            return record_landed(store.journal_records(*slot)[-8:], journal)
    except StorageError:
        return False
    return False


async def awrite_landed(store: Any, slot: Slot, token: str, journal: JournalWrite | None) -> bool:
    """:func:`write_landed` on a store's native async twins (``arevision``, ``ajournal_records``)."""
    try:
        if await store.arevision(*slot) == token:
            return True
        if journal is not None:
            return record_landed((await store.ajournal_records(*slot))[-8:], journal)
    except StorageError:
        return False
    return False


async def acquire_within(lock: asyncio.Lock, wait: float) -> bool:
    """Take an ``asyncio.Lock``, waiting at most ``wait`` seconds; whether it was taken.

    A free lock nobody queues for is taken at once, without arming a timer
    (the usual case; a timeout costs about 5 us of CPU). A lock with waiters
    (``_waiters``; unknown: assumed) is queued for under the timeout.
    """
    if not lock.locked() and not getattr(lock, "_waiters", True):
        await lock.acquire()  # free and no queue: returns without suspending
        return True
    try:
        async with asyncio.timeout(wait):
            await lock.acquire()
    except TimeoutError:
        return False
    return True


def record_landed(records: Iterable[tuple[int, Any]], journal: JournalWrite) -> bool:
    """Whether ``records`` (``(seq, text)``) hold exactly ``journal``'s record."""
    return any(
        seq == journal.seq and (text.decode() if isinstance(text, bytes) else text) == journal.text
        for seq, text in records
    )


def check_journal_seq(slot: Slot, journal: JournalWrite, last: int, path: Any = None) -> None:
    """Raise :class:`JournalConflict` unless ``journal.seq`` follows the journal's ``last``."""
    if journal.seq != last + 1:
        raise JournalConflict.for_seq(slot, journal.seq, last, path)


def encode_json(value: Any, slot: Slot, where: str) -> str:
    """Compact JSON text for a networked store; what cannot be stored names the slot and field.

    NaN, infinities, an object JSON cannot hold and a lone surrogate (not
    UTF-8) are refused before anything is written.
    """
    try:
        text = json.dumps(value, ensure_ascii=False, allow_nan=False, separators=(",", ":"))
        text.encode("utf-8")
        check_depth(value, text, slot, where)
    except RecursionError:
        raise too_deep_error(value, slot, where) from None
    except (TypeError, ValueError) as exc:  # UnicodeEncodeError (a lone surrogate) included
        raise StorageError.for_slot(
            f"{where} cannot be stored as JSON text ({exc}); nothing was written", slot
        ) from None
    return text


def too_deep_error(
    value: Any, slot: Slot, where: str, path: str | os.PathLike[str] | None = None
) -> StorageError:
    """The error for a value nested past :data:`~flowdrop_core.nesting.MAX_ENTRY_DEPTH`."""
    at = deeper_than(value, MAX_ENTRY_DEPTH)
    return StorageError.for_slot(
        f"{where} is nested more than {MAX_ENTRY_DEPTH} levels"
        + (f" (at {at})" if at else "")
        + "; nothing was written",
        slot,
        path,
    )


def check_depth(
    value: Any, text: str, slot: Slot, where: str, path: str | os.PathLike[str] | None = None
) -> None:
    """Refuse to write a value a read would refuse: one nested past ``MAX_ENTRY_DEPTH``.

    ``text`` is the value's JSON: only text with more opening brackets than
    the bound is walked, so an ordinary entry costs two ``str.count``.
    """
    if text_may_nest(text, MAX_ENTRY_DEPTH) and deeper_than(value, MAX_ENTRY_DEPTH) is not None:
        raise too_deep_error(value, slot, where, path)


class _BadNumber(ValueError):
    """A stored number JSON has no spelling for (``NaN``, ``Infinity``) or a float cannot hold."""


def _constant(name: str) -> Any:
    raise _BadNumber(f"holds {name}, which is not a JSON number")


def _finite(spelling: str) -> float:
    value = float(spelling)
    if value - value != 0.0:  # 1e400 reads as infinity
        raise _BadNumber(f"holds a number out of range ({spelling[:40]})")
    return value


#: The decoder of every stored value: a number JSON does not allow, or one out of a float's
#: range, is refused instead of read as NaN or infinity (the hooks run only for such
#: constants and for floats, so an entry of text costs nothing more).
_STORED = json.JSONDecoder(parse_constant=_constant, parse_float=_finite)


def _text(text: Any, what: str) -> str:
    if isinstance(text, bytes | bytearray | memoryview):
        return bytes(text).decode("utf-8")
    if not isinstance(text, str):
        raise TypeError(f"{what} is {type(text).__name__}, not JSON text")
    return text


def decode_json(
    text: Any, slot: Slot, what: str = "stored value", path: str | os.PathLike[str] | None = None
) -> Any:
    """The value of stored JSON text, or a :class:`StorageError` naming the slot and ``what``.

    Corrupt text is an error as ever; so are, as a located ``bad stored entry``, a
    value nested past :data:`~flowdrop_core.nesting.MAX_ENTRY_DEPTH` levels (at any
    depth: never a ``RecursionError``) and a number out of range (``NaN``,
    ``Infinity``, ``1e400``), which no write of this library stores.
    """
    try:
        text = _text(text, what)
        value = _STORED.decode(text)
    except _BadNumber as exc:
        raise StorageError.for_slot(
            f"bad stored entry: {what} {exc}; nothing was read", slot, path
        ) from None
    except RecursionError:
        offset = deep_offset(text, MAX_ENTRY_DEPTH)
        at = None if offset is None else f"character {offset}"
        raise _too_deep_read(what, at, slot, path) from None
    except (TypeError, ValueError) as exc:  # JSONDecodeError and UnicodeDecodeError included
        raise StorageError.for_slot(
            f"{what} is corrupt and cannot be decoded ({exc})", slot, path
        ) from exc
    if text_may_nest(text, MAX_ENTRY_DEPTH):
        at = deeper_than(value, MAX_ENTRY_DEPTH)
        if at is not None:
            raise _too_deep_read(what, at, slot, path)
    return value


def _too_deep_read(
    what: str, at: str | None, slot: Slot, path: str | os.PathLike[str] | None
) -> StorageError:
    place = f" (at {at})" if at else ""
    return StorageError.for_slot(
        f"bad stored entry: {what} is nested more than {MAX_ENTRY_DEPTH} levels{place}; "
        "nothing was read",
        slot,
        path,
    )


def decode_entries(
    bodies: list[Any], slot: Slot, path: str | os.PathLike[str] | None = None
) -> list[Any]:
    """A buffer's stored entries, decoded in one pass; a bad one is named by its position.

    Each entry is bounded as :func:`decode_json` bounds a value. All bodies are
    decoded as one JSON list; only when that fails, or its length is not the
    number of bodies (a body holding two values, or none), or its text has more
    brackets than the depth bound, are they looked at one by one, which names
    the first bad entry.
    """
    if not bodies:
        return []
    try:
        if type(bodies[0]) is str:
            joined = "[" + ",".join(bodies) + "]"
        else:
            joined = (b"[" + b",".join(bodies) + b"]").decode("utf-8")
        entries = _STORED.decode(joined)
    except (TypeError, ValueError, RecursionError):  # a bad number is a ValueError too
        entries = None
    if type(entries) is list and len(entries) == len(bodies):
        if not text_may_nest(joined, MAX_ENTRY_DEPTH + 1):
            return entries
        # Nesting past the bound takes more opening and closing brackets than a short
        # body has; the long ones have their opening brackets counted, at C speed, and
        # only a body with more than the bound is walked.
        shortest = 2 * MAX_ENTRY_DEPTH + 2
        marks = ("[", "{") if type(bodies[0]) is str else (b"[", b"{")
        for n in itertools.compress(itertools.count(), map(shortest.__le__, map(len, bodies))):
            body = bodies[n]
            if body.count(marks[0]) + body.count(marks[1]) > MAX_ENTRY_DEPTH:
                at = deeper_than(entries[n], MAX_ENTRY_DEPTH)
                if at is not None:
                    raise _too_deep_read(f"stored entry {n}", at, slot, path)
        return entries
    return [decode_json(body, slot, f"stored entry {n}", path) for n, body in enumerate(bodies)]


#: The latest last-write time a listing shows: the end of the year 9999, in seconds.
LATEST_TIME = 253_402_300_799.0


def time_problem(at: Any) -> str | None:
    """Why a stored last-write time (seconds since the epoch) cannot be shown, else ``None``.

    A time is a number from 0 (1970) to :data:`LATEST_TIME` (9999); ``1e300`` or
    a NaN is a bad stored entry, not a crash where it is shown as a date.
    """
    if at is None:
        return None
    if isinstance(at, bool) or not isinstance(at, int | float):
        return f"last write {at!r} is not a time"
    if not 0 <= at <= LATEST_TIME:
        return f"last write {at!r} is out of range (a time from 1970 to 9999)"
    return None


def apply_ops(entries: MutableSequence[Any], ops: Iterable[Op]) -> None:
    """Apply ``ops`` in order to a mutable sequence (a list or a deque), in place.

    The reference semantics of :class:`Delta` for backends that hold the list
    themselves. Raises ``IndexError`` for a position out of range.
    """
    for kind, position, entry in ops:
        size = len(entries)
        if kind == "insert":
            if not 0 <= position <= size:
                raise IndexError(f"insert at {position} in a buffer of {size}")
            if position == size:
                entries.append(entry)
            else:
                entries.insert(position, entry)
        elif not 0 <= position < size:
            raise IndexError(f"{kind} at {position} in a buffer of {size}")
        elif kind == "replace":
            entries[position] = entry
        elif kind == "delete":
            del entries[position]
        else:
            raise ValueError(f"unknown op {kind!r}")


def check_ops(size: int, delta: Delta) -> None:
    """Raise ``ValueError`` unless every op's position is in range and the count matches.

    Positions depend only on the length, so a backend can check a delta in
    O(ops) before changing anything, and so apply it all or nothing.
    """
    for kind, position, _ in delta.ops:
        if kind == "insert":
            if not 0 <= position <= size:
                raise ValueError(f"insert at {position} in a buffer of {size}")
            size += 1
        elif kind in ("replace", "delete"):
            if not 0 <= position < size:
                raise ValueError(f"{kind} at {position} in a buffer of {size}")
            size -= kind == "delete"
        else:
            raise ValueError(f"unknown op {kind!r}")
    if size != delta.count:
        raise ValueError(f"the change leaves {size} entries, its count says {delta.count}")


def conflict_check(slot: Slot, expected: Expected, actual: str | None, path: Any = None) -> None:
    """Raise :class:`RevisionConflict` unless ``expected`` is :data:`ANY` or ``actual``."""
    if expected is not ANY and expected != actual:
        raise RevisionConflict(slot, expected, actual, path)  # type: ignore[arg-type]


#: Tokens are ``<random per-process prefix>-<counter>``: unique across processes
#: (the prefix is 128 random bits, drawn again after a fork) and cheap to make.
_token_prefix = uuid.uuid4().hex
_token_counter = itertools.count(1)


def _reseed_tokens() -> None:
    global _token_prefix, _token_counter
    _token_prefix = uuid.uuid4().hex
    _token_counter = itertools.count(1)


#: Bumped in a forked child: per-process state (connections, caches) compares it
#: instead of calling ``os.getpid()`` (a system call) on every append.
_fork_generation = [0]


def _after_fork_in_child() -> None:
    _reseed_tokens()
    _fork_generation[0] += 1


def fork_generation() -> int:
    """A number that changes in a child process after ``fork`` (0 in the first process)."""
    return _fork_generation[0]


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)


def new_revision() -> str:
    """A fresh revision token, never returned before by any process."""
    return f"{_token_prefix}-{next(_token_counter)}"


def check_timeout(timeout: float) -> float:
    """A lock or write timeout: a number of seconds >= 0."""
    if timeout < 0:
        raise ValueError(f"timeout must be >= 0 seconds, got {timeout!r}")
    return float(timeout)


#: How many slot locks :class:`SlotLocks` keeps alive after their last use.
_RECENT_LOCKS = 256


class SlotLocks:
    """One ``threading.Lock`` per slot, created on demand and dropped when unused.

    Different slots get different locks, so they never wait on each other.
    ``make`` builds a slot's lock (default ``threading.Lock``; a store may
    keep a lock-like object of its own, which must support weak references).
    """

    def __init__(self, make: Callable[[], Any] = threading.Lock) -> None:
        self._make = make
        self._guard = threading.Lock()
        self._locks: weakref.WeakValueDictionary[Slot, Any] = weakref.WeakValueDictionary()
        # Strong references to the most recently used locks (oldest first), so a
        # slot appended to over and over keeps one lock instead of making a new
        # one every time; read without the guard (a dict lookup is atomic), so
        # the usual lookup costs one ``dict.get``. Changed only under the guard.
        self._recent: dict[Slot, Any] = {}

    def get(self, slot: Slot) -> Any:
        """The slot's lock (the same object while anyone holds a reference)."""
        lock = self._recent.get(slot)
        if lock is not None:
            return lock
        with self._guard:
            lock = self._locks.get(slot)
            if lock is None:
                lock = self._make()
                self._locks[slot] = lock
            recent = self._recent
            recent[slot] = lock
            if len(recent) > _RECENT_LOCKS:
                del recent[next(iter(recent))]
            return lock

    @contextmanager
    def held(self, slot: Slot, timeout: float) -> Iterator[bool]:
        """The slot's thread lock for the ``with`` block, waited for at most ``timeout`` seconds.

        MEM-12's in-process half, shared by the stores that then take a
        cross-process lock: yields whether it was acquired (never raises for
        a timeout) and, only then, releases it on exit, exceptions included.
        """
        lock = self.get(slot)
        acquired = lock.acquire(timeout=timeout)
        try:
            yield acquired
        finally:
            if acquired:
                lock.release()
