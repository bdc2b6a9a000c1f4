"""The hook :class:`~flowdrop_core.conversation.ConversationBuffer` calls around one append.

Kept out of the buffer so the buffer's change is two lines: :func:`start`
before the engine runs (it reads the slot's revision and, on a checkpoint
record, the buffer before), :meth:`Recorder.finish` after the write.
"""

from __future__ import annotations

import time
from typing import Any

from flowdrop_core.context import ExecutionContext
from flowdrop_core.engine import AppendResult, Buffer, as_batch
from flowdrop_core.journal.backends import Journal, journal_for
from flowdrop_core.journal.record import CHECKPOINT_EVERY, JournalRecord
from flowdrop_core.storage import Slot, Store

__all__ = ["Recorder", "start"]


class Recorder:
    """One append being recorded."""

    def __init__(
        self,
        journal: Journal,
        limit: int,
        slot: Slot,
        seq: int,
        revision_before: str | None,
        base: list[dict[str, Any]] | None,
    ) -> None:
        self.journal, self.limit, self.slot, self.seq = journal, limit, slot, seq
        self.revision_before, self.base = revision_before, base

    def finish(
        self,
        messages: Any,
        context: ExecutionContext | None,
        result: AppendResult,
        revision: str | None,
        *,
        serialized: bool,
    ) -> None:
        """Write the record: incoming, context, MEM-14 report, events, revisions."""
        scope, scope_id, key = self.slot
        record = JournalRecord(
            seq=self.seq,
            at=time.time(),
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
        self.journal.add(record, self.limit)


def start(store: Store, limit: int, slot: Slot, buf: Buffer, revision: str | None) -> Recorder:
    """Begin recording an append to ``slot``, whose buffer is ``buf`` at ``revision``."""
    journal = journal_for(store)
    seq = journal.last_seq(slot) + 1
    # A checkpoint at least every limit/2 records: the newest ``limit`` always hold one.
    every = max(1, min(CHECKPOINT_EVERY, limit // 2))
    base = buf.messages() if (seq - 1) % every == 0 else None
    return Recorder(journal, limit, slot, seq, revision, base)
