"""The hook :class:`~flowdrop_core.conversation.ConversationBuffer` calls around one append.

Kept out of the buffer so the buffer's change is small: :func:`start` before
the engine runs (it reads the journal's last record number and, on a
checkpoint record, the buffer before), :meth:`Recorder.entry` after it: the
record, handed to the store's write so both land in one atomic step.
"""

from __future__ import annotations

import time
from typing import Any

from flowdrop_core.context import ExecutionContext
from flowdrop_core.engine import AppendResult, Buffer, as_batch
from flowdrop_core.journal._backends import journal_for
from flowdrop_core.journal._record import CHECKPOINT_EVERY, JournalRecord
from flowdrop_core.storage import Slot, Store
from flowdrop_core.storage._base import JournalWrite, new_revision

__all__ = ["Recorder", "start"]


class Recorder:
    """One append being recorded."""

    def __init__(
        self,
        limit: int,
        slot: Slot,
        seq: int,
        revision_before: str | None,
        base: list[dict[str, Any]] | None,
    ) -> None:
        self.limit, self.slot, self.seq = limit, slot, seq
        self.revision_before, self.base = revision_before, base

    def entry(
        self,
        messages: Any,
        context: ExecutionContext | None,
        result: AppendResult,
        *,
        changed: bool,
        serialized: bool,
    ) -> JournalWrite:
        """The record (incoming, context, MEM-14 report, events, revisions) for the write.

        ``changed``: whether the append changes the slot; the record then
        names the fresh revision the write will leave, else the current one.
        """
        scope, scope_id, key = self.slot
        revision = new_revision() if changed else self.revision_before
        now = time.time()
        record = JournalRecord(
            seq=self.seq,
            at=now,
            scope=scope,
            scope_id=scope_id,
            key=key,
            max_messages=result.max_messages,
            incoming=as_batch(messages),
            context=None if context is None else context.model_dump(exclude_none=True),
            count=result.count,
            appended=result.appended,
            appended_any=result.appended_any,
            serialized=serialized,
            revision_before=self.revision_before,
            revision=revision,
            events=[
                {k: v for k, v in ev.to_dict().items() if k != "reason"} for ev in result.events
            ],
            base=self.base,
        )
        return JournalWrite(self.seq, record.to_json(), self.limit, now, revision)


def start(store: Store, limit: int, slot: Slot, buf: Buffer, revision: str | None) -> Recorder:
    """Begin recording an append to ``slot``, whose buffer is ``buf`` at ``revision``.

    The record number is the journal's last plus one; the store checks it
    again in the write (a journal that moved meanwhile is a conflict, and the
    append is re-read and re-applied), so numbers never collide.
    """
    return recorder(limit, slot, buf, revision, journal_for(store).last_seq(slot))


def recorder(limit: int, slot: Slot, buf: Buffer, revision: str | None, last: int) -> Recorder:
    """:func:`start` for a caller that asked the journal's newest record number (``last``)."""
    seq = last + 1
    # A checkpoint at least every limit/2 records: the newest ``limit`` always hold one.
    every = max(1, min(CHECKPOINT_EVERY, limit // 2))
    base = buf.messages() if (seq - 1) % every == 0 else None
    return Recorder(limit, slot, seq, revision, base)
