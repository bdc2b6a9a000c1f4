"""A journal replay names every reason it may differ from the run (nothing skipped silently)."""

from __future__ import annotations

import pytest

from flowdrop_core.conversation import ConversationBuffer
from flowdrop_core.journal import journal_for
from flowdrop_core.journal.record import JournalRecord
from flowdrop_core.journal.replay import journal_scenario
from flowdrop_core.storage import MemoryStore


@pytest.fixture
def records() -> list[JournalRecord]:
    store = MemoryStore()
    buf = ConversationBuffer(store=store, journal=10)
    for text in "abcd":
        buf.append({"role": "user", "content": text}, {"session_id": "s1"})
    got = journal_for(store).read(("session", "s1", "chat_history"))
    assert [(r.seq, r.base is not None) for r in got] == [
        (1, True),
        (2, False),
        (3, False),
        (4, False),
    ]
    return got


def test_no_checkpoint_left_means_no_replay(records: list[JournalRecord]) -> None:
    with pytest.raises(ValueError) as err:
        journal_scenario([r.model_copy(update={"base": None}) for r in records])
    assert str(err.value) == (
        "journal: no kept record carries a checkpoint of the buffer (records 1..4); "
        "the journal cannot be replayed"
    )


def test_missing_records_are_a_note(records: list[JournalRecord]) -> None:
    scenario, notes = journal_scenario([records[0], records[2], records[3]])
    assert notes == ["record 3: records 2..2 are missing"]
    assert len(scenario.steps) == 3


def test_a_changed_window_and_an_unserialized_append_are_notes(
    records: list[JournalRecord],
) -> None:
    changed = records[1].model_copy(update={"max_messages": 3, "serialized": False})
    scenario, notes = journal_scenario([records[0], changed])
    assert notes == [
        "record 2: window 3, not 0 as at the start; the replay uses the first",
        "record 2: ran unserialized (MEM-12 lock timeout)",
    ]
    assert scenario.config.max_messages == 0
