"""Journal truth: the slot's revision against the one the journal's last record left."""

from __future__ import annotations

from pathlib import Path

from flowdrop_core.conversation import ConversationBuffer
from flowdrop_core.journal import journal_for
from flowdrop_core.journal.truth import journal_gap
from flowdrop_core.storage import SQLiteStore

SLOT = ("session", "s1", "chat_history")
CTX = {"session_id": "s1"}


def test_a_write_outside_the_journal_is_a_gap_at_once(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "b.sqlite3")
    journaled = ConversationBuffer(store=store, journal=50)
    for k in range(6):
        journaled.append({"role": "user", "content": f"m{k}"}, CTX)
    records = journal_for(store).read(SLOT)
    assert journal_gap(store.revision(*SLOT), records) is None
    ConversationBuffer(store=store).append({"role": "user", "content": "unjournaled"}, CTX)
    gap = journal_gap(store.revision(*SLOT), journal_for(store).read(SLOT), 7)
    assert gap is not None
    assert (gap.last_seq, gap.last_count, gap.slot_count) == (6, 6, 7)
    assert "written outside the journal after record 6" in str(gap)
    assert "holds 7 entries" in str(gap) and "with count 6" in str(gap)
    store.delete(*SLOT)
    cleared = journal_gap(store.revision(*SLOT), journal_for(store).read(SLOT))
    assert cleared is not None and "the slot is now empty" in str(cleared)


def test_no_records_no_gap() -> None:
    assert journal_gap("r1", []) is None
