"""Journal truth: does the slot still hold what its journal's last record left?

A write made outside the journal (a plain ``store.set``, an append with
``journal=0``, a clear) leaves no record, so a journal replayed on its own
would say "every step reports what was recorded" while the slot holds
something else. The slot's revision (MEM-12's compare-and-set token, read
in O(1)) against the revision the last record left tells, as soon as the
slot is read, without waiting for the next journaled append to notice.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from flowdrop_core.journal._record import JournalRecord

__all__ = ["JournalGap", "journal_gap"]


@dataclass(frozen=True)
class JournalGap:
    """The slot moved on after the journal's last record: where, and from what to what."""

    last_seq: int
    last_count: int
    journal_revision: str | None
    slot_revision: str | None
    slot_count: int | None

    def __str__(self) -> str:
        now = (
            "the slot is now empty"
            if self.slot_revision is None
            else f"the slot is at revision {self.slot_revision!r}"
            + (f" and holds {self.slot_count} entries" if self.slot_count is not None else "")
        )
        return (
            f"The slot was written outside the journal after record {self.last_seq}: "
            f"{now}, while that record left revision {self.journal_revision!r} with count "
            f"{self.last_count}. The journal's replay ends at record {self.last_seq} and does "
            "not show that write."
        )


def journal_gap(
    slot_revision: str | None,
    records: Sequence[JournalRecord],
    slot_count: int | None = None,
) -> JournalGap | None:
    """A :class:`JournalGap` when the slot's revision is not the one the last record left.

    ``None`` when they agree, when there is no record, or when the last record
    carries no revision (a journal written before revisions were recorded:
    nothing to compare).
    """
    if not records:
        return None
    last = records[-1]
    if last.revision is None or last.revision == slot_revision:
        return None
    return JournalGap(last.seq, last.count, last.revision, slot_revision, slot_count)
