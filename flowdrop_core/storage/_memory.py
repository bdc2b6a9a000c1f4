"""The process-local store: a dict of slots, a buffer held as a deque of entries."""

from __future__ import annotations

import threading
from collections import deque
from typing import Any

from flowdrop_core.storage._base import (
    ANY,
    Delta,
    Expected,
    JournalWrite,
    LiveStep,
    LiveValue,
    Slot,
    SlotLocks,
    Snapshot,
    StorageError,
    apply_ops,
    check_journal_seq,
    check_ops,
    check_timeout,
    conflict_check,
    new_revision,
)

__all__ = ["MemoryStore"]


#: A live append's revision mark: the slot changed, its new token is made when first asked for.
_CHANGED: Any = object()


def _token_of(item: list[Any]) -> str:
    """The revision token of a stored ``[value, token]`` (made now after a live append)."""
    token = item[1]
    if token is _CHANGED:
        token = item[1] = new_revision()
    return token  # type: ignore[no-any-return]


class MemoryStore:
    """In-process store: a dict of slots plus per-slot thread locks (MEM-12).

    A list or tuple is stored as a buffer: a ``deque`` of its elements owned
    by the store, changed in place by :meth:`apply` in O(ops) (appends and
    front evictions O(1), a mid insert O(distance to the nearer end)).
    ``get`` returns a new list, so changing the list passed to ``set`` or
    returned by ``get`` never changes the store. The elements themselves are
    shared, not copied: entries are immutable by contract. Any value is
    accepted; only :class:`~flowdrop_core.storage.SQLiteStore` requires JSON.
    Every write is conditional when given ``expected`` (see
    :mod:`flowdrop_core.storage._base`); ``timeout`` is accepted and unused,
    since a write never waits. The append journal is a bounded deque of
    record texts per slot, written under the same guard as the change.
    A :class:`~flowdrop_core.conversation.ConversationBuffer` appends through
    :meth:`apply_live`, which keeps the slot as its live engine buffer (a
    :class:`~flowdrop_core.storage.LiveValue`) until another write turns it
    back into a ``deque``.
    """

    kind = "memory"

    def __init__(self) -> None:
        # slot -> [value (a deque or a LiveValue for a buffer), revision]
        self._data: dict[Slot, list[Any]] = {}
        self._journal: dict[Slot, deque[tuple[int, str]]] = {}
        self._guard = threading.Lock()
        self._locks = SlotLocks(_SlotLock)

    def __repr__(self) -> str:
        return "MemoryStore()"

    def read(self, scope: str, scope_id: str, key: str) -> Snapshot:
        """The value (a buffer as a new list) and its revision, read under the store's guard."""
        with self._guard:
            item = self._data.get((str(scope), scope_id, key))
            if item is None:
                return Snapshot(None, False, None)
            value = item[0]
            if type(value) is deque:
                value = list(value)
            elif isinstance(value, LiveValue):
                value = value.entries()
            return Snapshot(value, True, _token_of(item))

    def get(self, scope: str, scope_id: str, key: str, default: Any = None) -> tuple[Any, bool]:
        """Return ``(value, found)``; a stored buffer comes back as a new list."""
        snap = self.read(scope, scope_id, key)
        return (snap.value, True) if snap.found else (default, False)

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
        """Store ``value`` (a list or tuple as a buffer); return the new revision."""
        slot = (str(scope), scope_id, key)
        if isinstance(value, list | tuple):
            value = deque(value)
        token = new_revision()
        with self._guard:
            item = self._data.get(slot)
            conflict_check(slot, expected, None if item is None else _token_of(item))
            self._data[slot] = [value, token]
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
        """Apply ``delta`` in place if the slot is at ``expected``; return the new revision.

        With ``journal``, the record is kept under the same guard, so the
        change and its record land together or not at all.
        """
        slot = (scope, scope_id, key) if type(scope) is str else (str(scope), scope_id, key)
        ops = delta.ops
        if journal is None and len(ops) == 1:  # the usual append: one entry at the end
            kind, position, entry = ops[0]
            with self._guard:
                item = self._data.get(slot)
                # ``item[1] == expected`` is never true for ``expected=None`` (a token is a str)
                if item is not None and item[1] == expected and kind == "insert":
                    value = item[0]
                    if type(value) is deque and position == len(value) == delta.count - 1:
                        value.append(entry)
                        token = item[1] = new_revision()
                        return token
            # anything else (a conflict included) takes the general path below
        token = new_revision() if journal is None or journal.revision is None else journal.revision
        with self._guard:
            item = self._data.get(slot)
            conflict_check(slot, expected, None if item is None else _token_of(item))
            if journal is not None:
                records = self._journal.get(slot)
                check_journal_seq(slot, journal, records[-1][0] if records else 0)
                if not delta.ops:  # an append that changed nothing: only its record
                    self._add_record(slot, journal)
                    return expected  # type: ignore[return-value]
            if item is None:
                item = [deque(), token]
            elif isinstance(item[0], LiveValue):  # back to a plain buffer, the same entries
                item[0] = deque(item[0].entries())
            if type(item[0]) is not deque:
                raise StorageError.for_slot(
                    f"stored value is not a conversation buffer, got {type(item[0]).__name__}",
                    slot,
                )
            entries: deque[Any] = item[0]
            try:
                check_ops(len(entries), delta)  # all or nothing: validate before changing
            except ValueError as exc:
                raise StorageError.for_slot(f"cannot apply the change ({exc})", slot) from exc
            records = None if journal is None else self._records_for(slot, journal.limit)
            apply_ops(entries, delta.ops)  # cannot fail: every position was checked
            item[1] = token
            self._data[slot] = item
            if records is not None:  # nothing can fail between the change and its record
                records.append((journal.seq, journal.text))  # type: ignore[union-attr]
        return token

    def apply_live(self, scope: str, scope_id: str, key: str, step: LiveStep, arg: Any) -> Any:
        """Run ``step(slot, value, arg)`` under the guard and keep its value; None when not run.

        The slot's value goes to ``step`` as stored (a ``deque``, a
        :class:`~flowdrop_core.storage.LiveValue` it put there before, any
        other value, or None when empty); ``step`` returns ``(value, result,
        changed)``, and the value is kept in place of the old one, under a new
        revision when ``changed`` (an empty slot stays empty when nothing
        changed). MEM-12: not run, and None returned, while anyone holds the
        slot's lock (see :class:`~flowdrop_core.storage.LiveStore`).
        """
        slot = (scope, scope_id, key) if type(scope) is str else (str(scope), scope_id, key)
        locks = self._locks
        held = locks._recent.get(slot) or locks.get(slot)  # SlotLocks.get's usual answer, inline
        guard = self._guard
        guard.acquire()  # not ``with``: this is the hot path of every live append
        try:
            if held.locked():
                return None
            item: list[Any] | None
            try:
                item = self._data[slot]
                current = item[0]
            except KeyError:
                item = current = None
            value, result, changed = step(slot, current, arg)
            if item is not None:
                item[0] = value
                if changed:
                    item[1] = _CHANGED
            elif changed:
                self._data[slot] = [value, _CHANGED]
            return result
        finally:
            guard.release()

    def _records_for(self, slot: Slot, limit: int) -> deque[tuple[int, str]]:
        """The slot's record deque keeping the newest ``limit`` (under the guard)."""
        records = self._journal.get(slot)
        if records is None or records.maxlen != limit:
            records = self._journal[slot] = deque(records or (), maxlen=limit)
        return records

    def _add_record(self, slot: Slot, journal: JournalWrite) -> None:
        """Keep ``journal`` and only the slot's newest ``limit`` records (under the guard)."""
        self._records_for(slot, journal.limit).append((journal.seq, journal.text))

    # -- journal and listing ---------------------------------------------------------------

    def journal_last(self, scope: str, scope_id: str, key: str) -> int:
        """The slot's newest record number (0: none)."""
        records = self._journal.get((str(scope), scope_id, key))
        return records[-1][0] if records else 0

    def journal_records(self, scope: str, scope_id: str, key: str) -> list[tuple[int, Any]]:
        """The slot's kept records ``(seq, text)``, oldest first."""
        with self._guard:
            return list(self._journal.get((str(scope), scope_id, key), ()))

    def journal_counts(self) -> dict[Slot, int]:
        """How many records each journaled slot keeps."""
        with self._guard:
            return {s: len(r) for s, r in self._journal.items() if r}

    def listing(self) -> dict[Slot, tuple[int | None, float | None]]:
        """Every non-empty slot with its entry count (the memory store keeps no times)."""
        with self._guard:
            return {
                slot: (len(item[0]) if isinstance(item[0], deque | LiveValue) else None, None)
                for slot, item in self._data.items()
            }

    def revision(self, scope: str, scope_id: str, key: str) -> str | None:
        """The slot's revision token, ``None`` when it is empty."""
        with self._guard:
            item = self._data.get((str(scope), scope_id, key))
            return None if item is None else _token_of(item)

    def delete(
        self,
        scope: str,
        scope_id: str,
        key: str,
        *,
        expected: Expected = ANY,
        timeout: float | None = None,
    ) -> bool:
        """Empty the slot; return whether it held a value."""
        slot = (str(scope), scope_id, key)
        with self._guard:
            item = self._data.get(slot)
            conflict_check(slot, expected, None if item is None else _token_of(item))
            return self._data.pop(slot, None) is not None

    def slots(self) -> list[Slot]:
        """Every non-empty slot, sorted (for the inspector)."""
        with self._guard:
            return sorted(self._data)

    def lock(
        self, scope: str, scope_id: str, key: str, timeout: float = 5.0
    ) -> _SlotLock | _NotAcquired:
        """MEM-12: the slot's thread lock, waited for at most ``timeout`` seconds.

        Use it as ``with store.lock(...) as acquired:``. The lock is taken
        here, when called, and the ``with`` block releases it: the context
        manager is then a shared object without state (the slot's lock, or
        one object meaning "not acquired"), so a lock costs no allocation per
        append.
        """
        if not (type(timeout) is float and timeout >= 0):
            timeout = check_timeout(timeout)
        held: _SlotLock = self._locks.get(
            (scope, scope_id, key) if type(scope) is str else (str(scope), scope_id, key)
        )
        if held.acquire(True, timeout):
            return held
        return _NOT_ACQUIRED


class _SlotLock:
    """A slot's lock, and the ``with`` block of :meth:`MemoryStore.lock` once it was acquired."""

    __slots__ = ("__weakref__", "acquire", "locked", "release")

    def __init__(self) -> None:
        lock = threading.Lock()
        self.acquire = lock.acquire
        self.release = lock.release
        self.locked = lock.locked

    def __enter__(self) -> bool:
        return True

    def __exit__(self, *exc: object) -> None:
        self.release()


class _NotAcquired:
    """The ``with`` block of a slot lock not acquired in time: it yields False, releases nothing."""

    __slots__ = ()

    def __enter__(self) -> bool:
        return False

    def __exit__(self, *exc: object) -> None:
        return None


_NOT_ACQUIRED = _NotAcquired()
