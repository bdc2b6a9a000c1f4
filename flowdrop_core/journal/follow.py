"""Follow a store's journal live: each append's record as it lands, and writes made outside it.

:func:`follow_journal` opens a :class:`JournalFollower` on one slot or on
every journaled slot of a store. It reads the journal by its record numbers
(each slot's last number seen is its cursor), so nothing is missed or
shown twice whatever woke it; what wakes it is the backend's own signal
(:mod:`flowdrop_core.journal._wait`: a ``stat`` for SQLite, a blocking
``XREAD`` for Redis, a bounded poll for Postgres). A follower only reads.

A write outside the journal (a plain ``set``, an append with ``journal=0``,
a clear, a manual SQL change) leaves no record; it is named as soon as it
is seen, once: when the slot's revision moved to one no record left, or
when a new record read a revision no record before it left. The slot's
revision is read *before* its records, so a journaled append landing in
between is never taken for an outside write. Records the journal's limit
trimmed before the follower read them are named too (``missed``).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from flowdrop_core.journal._backends import journal_for
from flowdrop_core.journal._record import JournalRecord
from flowdrop_core.journal._wait import RECHECK, SleepWaiter, Waiter
from flowdrop_core.storage import Slot, Store

__all__ = ["DEFAULT_INTERVAL", "FollowEvent", "JournalFollower", "follow_journal", "waiter_for"]

#: How often a follower checks its backend's signal, in seconds (latency bound, not cost).
DEFAULT_INTERVAL = 0.2


def waiter_for(store: Any, interval: float) -> Waiter:
    """The waiter for ``store``'s backend (its ``kind``); any other store: the interval."""
    kind = getattr(store, "kind", "")
    if kind == "sqlite":
        from flowdrop_core.journal._wait_sqlite import FileWaiter

        return FileWaiter(store.path, interval, store)
    if kind == "redis":
        from flowdrop_core.journal._wait_redis import StreamWaiter

        return StreamWaiter(store, interval)
    if kind == "postgres":
        from flowdrop_core.journal._wait_postgres import HorizonWaiter

        return HorizonWaiter(store, interval)
    return SleepWaiter(store, interval)


@dataclass(frozen=True)
class FollowEvent:
    """One thing a follower saw: an append's ``record``, or an ``outside`` write to ``slot``.

    For an outside write, ``after_seq`` is the slot's last record before it,
    ``revision_before`` the revision that record left and ``revision`` the
    slot's revision when the write was seen (``None``: the slot is empty).
    """

    kind: str  # "append", "outside", or "missed" (records trimmed before they were read)
    slot: Slot
    record: JournalRecord | None = None
    after_seq: int = 0
    revision_before: str | None = None
    revision: str | None = None
    next_seq: int = 0
    seen_at: float = field(default_factory=time.time)

    def describe(self) -> str:
        """An outside write (or missed records) in one sentence; an append has its reader."""
        if self.kind == "missed":
            return (
                f"records {self.after_seq + 1}..{self.next_seq - 1} were trimmed from the "
                "journal (its limit) before they could be read"
            )
        now = "emptied it" if self.revision is None else f"left revision {self.revision!r}"
        return (
            f"written outside the journal after record {self.after_seq}: the write "
            f"{now} (record {self.after_seq} left {self.revision_before!r}); no record shows it"
        )

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready: an append is its record (without the checkpoint buffer) plus the slot."""
        head: dict[str, Any] = {"kind": self.kind, "slot": list(self.slot)}
        if self.record is not None:
            body = self.record.model_dump(exclude={"base"})
            for name in ("scope", "scope_id", "key"):
                body.pop(name)
            return {**head, **body}
        if self.kind == "missed":
            return {
                **head,
                "after_seq": self.after_seq,
                "next_seq": self.next_seq,
                "message": self.describe(),
            }
        return {
            **head,
            "after_seq": self.after_seq,
            "revision_before": self.revision_before,
            "revision": self.revision,
            "seen_at": self.seen_at,
            "message": self.describe(),
        }


@dataclass
class _Cursor:
    seq: int  # the last record shown
    revision: str | None  # the slot's revision at the last poll
    last: str | None  # the revision the newest record (or outside write) left
    known: list[str | None] = field(default_factory=list)  # left by the newest records

    def learn(self, revision: str | None) -> None:
        self.last = revision
        self.known = [*self.known[-7:], revision]


class JournalFollower:
    """Reads new journal records of one slot (or every journaled slot) as they land.

    :meth:`poll` returns what landed since the last call; iterating blocks
    on the backend's signal between polls, until ``stop()`` says so.
    Records already in the journal when the follower starts are not shown
    (``--journal`` replays those).
    """

    def __init__(
        self,
        store: Store,
        slot: Slot | None = None,
        *,
        interval: float = DEFAULT_INTERVAL,
        waiter: Waiter | None = None,
    ) -> None:
        if not interval > 0:
            raise ValueError(f"interval must be a positive number of seconds, got {interval!r}")
        self.slot = slot
        self.interval = interval
        self.waiter = waiter if waiter is not None else waiter_for(store, interval)
        self.store: Store = self.waiter.reader
        self.journal = journal_for(self.store)
        self._cursors: dict[Slot, _Cursor] = {}
        self._listed = time.monotonic()
        for s in [slot] if slot is not None else self.journal.slots():
            self._cursors[s] = self._start(s)

    def _start(self, slot: Slot) -> _Cursor:
        """The slot as it stands: its revision and its last record's count as known."""
        revision = self.store.revision(*slot)
        seq = self.journal.last_seq(slot)
        newest = self.journal.read_since(slot, seq - 1) if seq else []
        left = newest[-1].revision if newest else revision
        return _Cursor(seq, revision, left, [left, revision])

    @property
    def slots(self) -> list[Slot]:
        """The slots followed so far (every journaled slot grows as new ones appear)."""
        return list(self._cursors)

    def poll(self) -> list[FollowEvent]:
        """What landed since the last poll, oldest first per slot.

        Following every slot, the store's list of journaled slots (a read of
        the whole journal's index) is read again only when no followed slot
        moved, or every :data:`~flowdrop_core.journal._wait.RECHECK` seconds:
        a busy slot does not make every poll list them all, and a new slot's
        first records are seen within that bound even then.
        """
        out: list[FollowEvent] = []
        for s, cursor in self._cursors.items():
            out.extend(self._poll_slot(s, cursor))
        now = time.monotonic()
        if self.slot is None and (not out or now - self._listed >= RECHECK):
            self._listed = now
            for s in self.journal.slots():
                if s not in self._cursors:  # a slot's first records: shown from the first
                    cursor = self._cursors[s] = _Cursor(0, None, None, [None])
                    out.extend(self._poll_slot(s, cursor))
        return out

    def _poll_slot(self, slot: Slot, cursor: _Cursor) -> list[FollowEvent]:
        """New records (each checked against the one before), then the slot's revision.

        Outside write: a record that read a revision no record left, or a slot
        whose revision moved to one no record left. A writer that records
        without changing the slot (a framework's reducer journal) moves no
        revision and is never taken for one.
        """
        revision = self.store.revision(*slot)  # first: a record landing after is not "outside"
        out: list[FollowEvent] = []
        if self.journal.last_seq(slot) > cursor.seq:
            for rec in self.journal.read_since(slot, cursor.seq):
                if cursor.seq and rec.seq > cursor.seq + 1:
                    out.append(FollowEvent("missed", slot, after_seq=cursor.seq, next_seq=rec.seq))
                elif cursor.seq and rec.revision_before not in cursor.known:
                    out.append(self._outside(slot, cursor, rec.revision_before))
                out.append(FollowEvent("append", slot, rec))
                cursor.seq = rec.seq
                cursor.learn(rec.revision)
        if revision != cursor.revision and revision not in cursor.known:
            out.append(self._outside(slot, cursor, revision))
        cursor.revision = revision
        return out

    def _outside(self, slot: Slot, cursor: _Cursor, revision: str | None) -> FollowEvent:
        event = FollowEvent("outside", slot, None, cursor.seq, cursor.last, revision)
        cursor.learn(revision)
        return event

    def check(self) -> list[FollowEvent]:
        """Without waiting: what landed, if the backend's signal moved (else nothing read)."""
        return self.poll() if self.waiter.moved() else []

    def events(self, stop: Callable[[], bool] | None = None) -> Iterator[FollowEvent]:
        """Every event as it lands, waiting on the backend's signal between polls."""
        while stop is None or not stop():
            started = time.monotonic()
            yield from self.poll()
            self.waiter.wait(self.slots)
            # At most one read per interval, however fast the writers go (a blocking
            # read returns at once when a record is waiting): the writers' cost stays flat.
            rest = self.interval - (time.monotonic() - started)
            if rest > 0:
                time.sleep(rest)

    def __iter__(self) -> Iterator[FollowEvent]:
        return self.events()

    def close(self) -> None:
        """Release the waiter (the store stays the caller's)."""
        self.waiter.close()


def follow_journal(
    store: Store, slot: Slot | None = None, *, interval: float = DEFAULT_INTERVAL
) -> JournalFollower:
    """A follower of ``slot``'s journal, or of every journaled slot's when ``slot`` is ``None``."""
    return JournalFollower(store, slot, interval=interval)
