"""A journal replay names every reason it may differ from the run (nothing skipped silently)."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from flowdrop_core.conversation import ConversationBuffer
from flowdrop_core.journal import journal_for
from flowdrop_core.journal._record import JournalRecord
from flowdrop_core.journal.replay import journal_scenario, replay_journal
from flowdrop_core.storage import MemoryStore, SQLiteStore, StorageError

CTX = {"session_id": "s1"}


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
    assert notes == ["record 3: records 2..2 are missing; the replay may differ from here"]
    assert len(scenario.steps) == 3


def _journal(appends: int) -> list[JournalRecord]:
    """A memory store's journal of ``appends`` appends, a checkpoint every 5 records."""
    store = MemoryStore()
    buf = ConversationBuffer(store=store, journal=10, max_messages=3)
    for n in range(appends):
        buf.append({"role": "user", "content": f"m{n}"}, CTX)
    return journal_for(store).read(SLOT)


def test_after_a_gap_the_replay_resynchronises_at_the_next_checkpoint() -> None:
    """One missing record does not make every later step differ: the replay restarts at 6."""
    got = _journal(10)
    assert [r.seq for r in got if r.base is not None] == [1, 6]
    replayed = replay_journal([r for r in got if r.seq != 3])
    assert replayed.notes == [
        "record 4: records 3..3 are missing; the replay resynchronises at checkpoint record 6, "
        "leaving records 1..5 out"
    ]
    assert replayed.first_seq == 6
    assert replayed.check.passed, replayed.check.mismatches
    assert len(replayed.timeline.steps) == 5
    # a gap after the last checkpoint cannot be resynchronised: said so, replay goes on
    later = replay_journal([r for r in got if r.seq != 8])
    assert later.notes == ["record 9: records 8..8 are missing; the replay may differ from here"]
    assert later.first_seq == 1


def test_resynchronised_replay_passes_its_check() -> None:
    store = MemoryStore()
    buf = ConversationBuffer(store=store, journal=4, max_messages=3)  # a checkpoint every 2
    ctx = CTX
    for n in range(6):
        buf.append({"role": "user", "content": f"m{n}"}, ctx)
    records = journal_for(store).read(SLOT)  # 3..6, checkpoints at 3 and 5
    assert [(r.seq, r.base is not None) for r in records] == [
        (3, True),
        (4, False),
        (5, True),
        (6, False),
    ]
    holed = [records[0], records[2], records[3]]  # record 4 lost
    replayed = replay_journal(holed)
    assert replayed.notes == [
        "record 5: records 4..4 are missing; the replay resynchronises at checkpoint record 5, "
        "leaving records 3..3 out"
    ]
    assert replayed.first_seq == 5
    assert replayed.check.passed, replayed.check.mismatches
    assert [s.label for s in replayed.scenario.steps] == ["record 5", "record 6"]
    # a record out of order is named too, never read as a negative gap
    _, notes = journal_scenario([records[0], records[1], records[1]])
    assert notes[0].startswith("record 4: out of order after record 4")


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


# -- journal backends ----------------------------------------------------------------------------

SLOT = ("session", "s1", "chat_history")


def test_a_corrupt_sqlite_journal_record_is_named_never_skipped(tmp_path: Path) -> None:
    path = tmp_path / "db.sqlite3"
    store = SQLiteStore(path)
    ConversationBuffer(store=store, journal=5).append({"role": "user", "content": "a"}, CTX)
    conn = sqlite3.connect(path)
    conn.execute("UPDATE journal SET record = '{bad'")
    conn.commit()
    conn.close()
    with pytest.raises(StorageError) as err:
        journal_for(store).read(SLOT)
    assert str(err.value) == (
        f"journal record 1 of {SLOT!r} in {path} is corrupt (Expecting property name enclosed "
        "in double quotes: line 1 column 2 (char 1))"
    )


def test_memory_journal_counts_its_records() -> None:
    store = MemoryStore()
    buf = ConversationBuffer(store=store, journal=5)
    for text in "ab":
        buf.append({"role": "user", "content": text}, CTX)
    assert journal_for(store).counts() == {SLOT: 2}
    assert journal_for(store).slots() == [SLOT]


def test_a_read_only_file_without_a_journal_has_an_empty_one(tmp_path: Path) -> None:
    path = tmp_path / "db.sqlite3"
    SQLiteStore(path).set(*SLOT, [{"role": "user", "content": "a"}])
    journal = journal_for(SQLiteStore(path, readonly=True))
    assert (journal.read(SLOT), journal.counts(), journal.slots()) == ([], {}, [])


def test_a_store_without_a_journal_kind_is_a_type_error() -> None:
    class OwnStore:
        pass

    with pytest.raises(TypeError) as err:
        journal_for(OwnStore())  # type: ignore[arg-type]
    assert str(err.value).startswith("OwnStore has no journal (a store keeps one by implementing")
