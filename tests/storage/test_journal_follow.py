"""The journal follower in the library: records by number, outside writes named once, gaps."""

from __future__ import annotations

from pathlib import Path

import pytest

from flowdrop_core.conversation import ConversationBuffer
from flowdrop_core.journal import JournalRecord, journal_for
from flowdrop_core.journal._wait import SleepWaiter
from flowdrop_core.journal.follow import JournalFollower, follow_journal
from flowdrop_core.storage import Delta, MemoryStore, SQLiteStore, Store
from flowdrop_core.storage._base import JournalWrite

SLOT = ("session", "s1", "chat_history")
CTX = {"session_id": "s1"}


def say(buf: ConversationBuffer, text: str) -> None:
    buf.append({"role": "user", "content": text}, CTX)


def kinds(follower: JournalFollower) -> list[tuple[str, int]]:
    return [(e.kind, e.record.seq if e.record else e.after_seq) for e in follower.poll()]


def test_read_since_gives_only_newer_records(store: Store) -> None:
    buf = ConversationBuffer(store=store, journal=10)
    for text in ("a", "b", "c"):
        say(buf, text)
    journal = journal_for(store)
    assert [r.seq for r in journal.read_since(SLOT, 1)] == [2, 3]
    assert journal.read_since(SLOT, 3) == []


def test_new_appends_outside_writes_once_and_nothing_twice(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "s.sqlite3")
    buf = ConversationBuffer(store=store, journal=10)
    say(buf, "before")  # history: not shown
    follower = follow_journal(store, SLOT, interval=0.01)
    assert follower.poll() == []
    say(buf, "one")
    assert kinds(follower) == [("append", 2)]
    assert follower.poll() == []
    store.set(*SLOT, [{"role": "user", "content": "rewritten"}])
    seen = follower.poll()
    assert [e.kind for e in seen] == ["outside"]
    assert "outside the journal after record 2" in seen[0].describe()
    say(buf, "two")  # reads the outside revision: already named, not again
    assert kinds(follower) == [("append", 3)]
    store.delete(*SLOT)
    say(buf, "three")  # the clear and the append land between two polls
    assert kinds(follower) == [("outside", 3), ("append", 4)]
    follower.close()
    store.close()


def test_records_trimmed_before_they_were_read_are_named() -> None:
    store = MemoryStore()
    buf = ConversationBuffer(store=store, journal=2)
    say(buf, "first")
    follower = JournalFollower(store, SLOT, waiter=SleepWaiter(store, 0.01))
    for n in range(5):
        say(buf, f"m{n}")
    seen = follower.poll()
    assert [e.kind for e in seen] == ["missed", "append", "append"]
    assert seen[0].to_dict()["message"].startswith("records 2..4 were trimmed")


def test_every_slot_is_followed_new_slots_from_their_first_record() -> None:
    store = MemoryStore()
    follower = JournalFollower(store, waiter=SleepWaiter(store, 0.01))
    assert follower.poll() == []
    ConversationBuffer(store=store, journal=5).append({"role": "user", "content": "x"}, CTX)
    other = ConversationBuffer(scope="user", store=store, journal=5)
    other.append({"role": "user", "content": "y"}, {"user_id": "u1"})
    got = [(e.slot, e.record.seq) for e in follower.poll() if e.record]
    assert sorted(got) == [(SLOT, 1), (("user", "u1", "chat_history"), 1)]


def test_a_writer_that_records_without_changing_the_slot_is_no_outside_write() -> None:
    """A framework's reducer journal writes records whose revisions are its own."""
    store = MemoryStore()
    follower = JournalFollower(store, SLOT, waiter=SleepWaiter(store, 0.01))
    for seq in (1, 2, 3):
        record = JournalRecord(
            seq=seq, at=0.0, scope=SLOT[0], scope_id=SLOT[1], key=SLOT[2], max_messages=0,
            incoming=[], count=seq, appended=1, appended_any=True,
            revision_before=f"r{seq - 1}", revision=f"r{seq}",
        )  # fmt: skip
        write = JournalWrite(seq, record.to_json(), 10, 0.0, None)
        store.apply(*SLOT, Delta((), 0), expected=store.revision(*SLOT), journal=write)
    assert [e.kind for e in follower.poll()] == ["append", "append", "append"]
    assert follower.poll() == []


def test_interval_must_be_positive() -> None:
    with pytest.raises(ValueError, match="interval must be a positive"):
        JournalFollower(MemoryStore(), SLOT, interval=0)
