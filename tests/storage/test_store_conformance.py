"""The store conformance suite: every backend (memory, SQLite, Redis, Postgres) passes it or is not done.

Modelled on langgraph-checkpoint-conformance: one set of behaviours the
runtime relies on, run against each real backend through the ``store``
fixture: compare and set and re-apply on conflict, delta operations,
isolation of ``(scope, scope_id, key)``, journal atomicity (the record
lands with its change or neither does, including a failure injected where
the journal is written), listing, and the journal's numbering.
"""

from __future__ import annotations

import itertools
import sqlite3
from typing import Any

import pytest

from flowdrop_core.conversation import ConversationBuffer
from flowdrop_core.journal import journal_for
from flowdrop_core.storage import Delta, Op, RevisionConflict, StorageError, Store, apply_ops
from flowdrop_core.storage.base import JournalConflict, JournalStore, JournalWrite, new_revision

CTX = {"session_id": "s1"}
SLOT = ("session", "s1", "chat_history")


def user(text: str) -> dict[str, Any]:
    return {"role": "user", "content": text}


def contents(store: Store, slot: tuple[str, str, str] = SLOT) -> list[str]:
    value, _ = store.get(*slot, default=[])
    return [e["content"] for e in value]


def record(seq: int, revision: str | None = None, limit: int = 100) -> JournalWrite:
    return JournalWrite(seq, f'{{"seq":{seq}}}', limit, 0.0, revision or new_revision())


def test_every_backend_implements_the_journal_protocol(store: Store) -> None:
    assert isinstance(store, JournalStore)
    assert store.kind in {"memory", "sqlite", "redis", "postgres"}


# -- compare and set -------------------------------------------------------------------------


def test_a_stale_write_is_a_conflict_and_writes_nothing(store: Store) -> None:
    rev = store.set(*SLOT, [user("a")])
    newer = store.apply(*SLOT, Delta((Op("insert", 1, user("b")),), 2), expected=rev)
    with pytest.raises(RevisionConflict) as err:
        store.apply(*SLOT, Delta((Op("insert", 1, user("stale")),), 2), expected=rev)
    assert (err.value.expected, err.value.actual) == (rev, newer)
    with pytest.raises(RevisionConflict):
        store.apply(*SLOT, Delta((Op("insert", 0, user("x")),), 1), expected=None)
    with pytest.raises(RevisionConflict):
        store.set(*SLOT, [user("x")], expected=rev)
    with pytest.raises(RevisionConflict):
        store.delete(*SLOT, expected=rev)
    assert contents(store) == ["a", "b"]
    assert store.revision(*SLOT) == newer


def test_two_buffers_interleaving_re_apply_on_conflict(store: Store) -> None:
    """Two writers with cached copies: each conflict is re-read and re-applied, nothing lost."""
    one, two = ConversationBuffer(store=store), ConversationBuffer(store=store)
    for n in range(6):
        assert one.append(user(f"one {n}"), CTX).appended == 1
        res = two.append(user(f"two {n}"), CTX)  # its cache is stale: conflict, re-apply
        assert res.appended == 1 and res.count == 2 * n + 2
    assert contents(store) == [f"{w} {n}" for n in range(6) for w in ("one", "two")]


# -- delta operations ------------------------------------------------------------------------


@pytest.mark.parametrize(
    "ops",
    [
        [Op("insert", 3, user("end"))],
        [Op("insert", 0, user("front"))],
        [Op("insert", 2, user("mid")), Op("insert", 2, user("mid2"))],
        [Op("replace", 1, user("new1"))],
        [Op("delete", 0), Op("delete", 0)],
        [Op("delete", 1), Op("insert", 1, user("back")), Op("delete", 2)],
        [Op("delete", 2), Op("insert", 0, user("f")), Op("replace", 2, user("r"))],
    ],
    ids=["append", "front", "mid-twice", "replace", "evict-two", "mixed", "mixed2"],
)
def test_delta_ops_match_the_reference(store: Store, ops: list[Op]) -> None:
    start = [user(f"e{k}") for k in range(3)]
    rev = store.set(*SLOT, start)
    expected = list(start)
    apply_ops(expected, ops)
    rev = store.apply(*SLOT, Delta(tuple(ops), len(expected)), expected=rev)
    assert store.read(*SLOT) == (expected, True, rev)


def test_many_inserts_in_one_place_keep_their_order(store: Store) -> None:
    """Insertions at one spot use up the ordering gap (the rows are shifted, not misordered)."""
    rev = store.set(*SLOT, [user("first"), user("last")])
    expected = [user("first"), user("last")]
    for n in range(40):
        op = Op("insert", 1, user(f"i{n}"))
        apply_ops(expected, [op])
        rev = store.apply(*SLOT, Delta((op,), len(expected)), expected=rev)
    assert store.get(*SLOT)[0] == expected


def test_a_bad_delta_writes_nothing(store: Store) -> None:
    rev = store.set(*SLOT, [user("a")])
    with pytest.raises(StorageError, match=r"nothing was written|cannot apply"):
        store.apply(*SLOT, Delta((Op("insert", 1, user("b")), Op("delete", 5)), 1), expected=rev)
    assert store.read(*SLOT) == ([user("a")], True, rev)


# -- isolation -------------------------------------------------------------------------------

TRICKY = ["a", "a:b", ":", "", "[", '"', '","', "\\", "\x00", "a\x00b", "é", "e\u0301", "😀", "}{"]


def test_tricky_parts_are_separate_slots(store: Store) -> None:
    """Triples differing by a separator, NUL, a brace or a normalization never share a slot."""
    triples = [t for t in itertools.product(TRICKY, repeat=3) if t[1] != "s"][::37]
    for n, (scope, scope_id, key) in enumerate(triples):
        store.set(scope, scope_id, key, [user(str(n))])
    for n, (scope, scope_id, key) in enumerate(triples):
        assert store.get(scope, scope_id, key) == ([user(str(n))], True), (scope, scope_id, key)
    listed = store.listing()  # type: ignore[attr-defined]
    assert set(triples) <= set(listed)
    assert all(listed[t] == (1, listed[t][1]) for t in triples)


# -- journal ---------------------------------------------------------------------------------


def test_journal_records_are_numbered_from_the_store_and_checked(store: Store) -> None:
    rev = store.set(*SLOT, [])
    rev = store.apply(
        *SLOT, Delta((Op("insert", 0, user("a")),), 1), expected=rev, journal=record(1)
    )
    with pytest.raises(JournalConflict):  # a number that does not follow the last
        store.apply(*SLOT, Delta((Op("insert", 1, user("b")),), 2), expected=rev, journal=record(1))
    with pytest.raises(JournalConflict):
        store.apply(*SLOT, Delta((Op("insert", 1, user("b")),), 2), expected=rev, journal=record(3))
    assert contents(store) == ["a"] and store.revision(*SLOT) == rev
    assert [seq for seq, _ in store.journal_records(*SLOT)] == [1]  # type: ignore[attr-defined]


def test_a_record_of_a_change_names_the_revision_it_leaves(store: Store) -> None:
    entry = record(1)
    rev = store.apply(*SLOT, Delta((Op("insert", 0, user("a")),), 1), expected=None, journal=entry)
    assert rev == entry.revision == store.revision(*SLOT)


def test_a_record_of_no_change_leaves_the_slot_alone(store: Store) -> None:
    rev = store.set(*SLOT, [user("a")])
    got = store.apply(*SLOT, Delta((), 1), expected=rev, journal=record(1, revision=rev))
    assert got == rev == store.revision(*SLOT)
    assert store.journal_last(*SLOT) == 1  # type: ignore[attr-defined]
    with pytest.raises(RevisionConflict):  # still conditional on the revision
        store.apply(*SLOT, Delta((), 1), expected="other", journal=record(2, revision="other"))
    assert store.journal_last(*SLOT) == 1  # type: ignore[attr-defined]


def test_a_failed_journaled_write_leaves_neither(store: Store) -> None:
    rev = store.set(*SLOT, [user("a")])
    with pytest.raises(RevisionConflict):
        store.apply(
            *SLOT, Delta((Op("insert", 1, user("b")),), 2), expected="stale", journal=record(1)
        )
    with pytest.raises(StorageError):
        store.apply(*SLOT, Delta((Op("delete", 7),), 0), expected=rev, journal=record(1))
    assert store.journal_records(*SLOT) == []  # type: ignore[attr-defined]
    assert store.read(*SLOT) == ([user("a")], True, rev)


def test_the_journal_is_trimmed_and_kept_past_a_delete(store: Store) -> None:
    buf = ConversationBuffer(store=store, journal=4, tier="admin")
    for n in range(7):
        buf.append(user(f"m{n}"), CTX)
    assert [r.seq for r in journal_for(store).read(SLOT)] == [4, 5, 6, 7]
    buf.clear(CTX)
    buf.append(user("after"), CTX)
    assert [r.seq for r in journal_for(store).read(SLOT)] == [5, 6, 7, 8]
    assert journal_for(store).counts() == {SLOT: 4}


def _inject_journal_failure(store: Store) -> None:
    """Make the backend's own journal write fail, exactly where it stores a record."""
    kind = store.kind  # type: ignore[attr-defined]
    if kind == "sqlite":
        conn = sqlite3.connect(store.path)  # type: ignore[attr-defined]
        conn.execute(
            "CREATE TRIGGER boom BEFORE INSERT ON journal BEGIN SELECT RAISE(ABORT, 'boom'); END"
        )
        conn.commit()
        conn.close()
    elif kind == "postgres":
        import psycopg

        with psycopg.connect(store.dsn, autocommit=True) as pg:  # type: ignore[attr-defined]
            pg.execute(
                "CREATE FUNCTION flowdrop.boom() RETURNS trigger LANGUAGE plpgsql AS "
                "$$ BEGIN RAISE EXCEPTION 'boom'; END $$"
            )
            pg.execute(
                "CREATE TRIGGER boom BEFORE INSERT ON flowdrop.journal "
                "FOR EACH ROW EXECUTE FUNCTION flowdrop.boom()"
            )
    elif kind == "redis":
        from flowdrop_core.storage.redis_store import slot_keys

        journal_key = slot_keys(SLOT, store.namespace)[2]  # type: ignore[attr-defined]
        store.client.delete(journal_key)  # type: ignore[attr-defined]
        store.client.set(journal_key, "not a stream")  # type: ignore[attr-defined]
    else:
        pytest.skip("the memory store keeps the record in the same locked step: no I/O to fail")


def test_a_failure_where_the_journal_is_written_leaves_nothing(store: Store) -> None:
    """There is no point between the slot write and the journal write: both fail together."""
    buf = ConversationBuffer(store=store, journal=10)
    first = buf.append(user("kept"), CTX)
    rev = store.revision(*SLOT)
    _inject_journal_failure(store)
    fresh = ConversationBuffer(store=store, journal=10)
    with pytest.raises(StorageError):
        fresh.append(user("must not land"), CTX)
    assert contents(store) == ["kept"] and store.revision(*SLOT) == rev
    assert first.count == 1


# -- listing ---------------------------------------------------------------------------------


def test_listing_counts_entries_values_and_journals(store: Store) -> None:
    ConversationBuffer(store=store, journal=5).append([user("a"), user("b")], CTX)
    store.set("global", "", "note", {"x": 1})
    rows = store.listing()  # type: ignore[attr-defined]
    assert rows[SLOT][0] == 2 and rows[("global", "", "note")][0] is None
    at = rows[SLOT][1]
    assert at is None or at > 0
    assert store.journal_counts() == {SLOT: 1}  # type: ignore[attr-defined]
    store.delete(*SLOT)
    assert SLOT not in store.listing()  # type: ignore[attr-defined]
    assert store.journal_counts() == {SLOT: 1}  # type: ignore[attr-defined]


# -- a lost reply ------------------------------------------------------------------------------


def _lose_replies(store: Store, *, land: bool) -> None:
    """Make the next writes lose their reply, after (``land``) or instead of committing."""
    kind = store.kind  # type: ignore[attr-defined]
    if kind == "redis":
        from redis.exceptions import ConnectionError as RedisConnectionError

        script = store._apply  # type: ignore[attr-defined]

        def lost(*args: Any, **kw: Any) -> Any:
            if land:
                script(*args, **kw)
            raise RedisConnectionError("Connection closed by server.")

        store._apply = lost  # type: ignore[attr-defined]
    elif kind == "postgres":
        import psycopg

        real = store._apply  # type: ignore[attr-defined]

        def lost_commit(slot: Any, *args: Any) -> Any:
            if land:
                real(slot, *args)
            raise store._error(  # type: ignore[attr-defined]
                "write the slot", slot, psycopg.OperationalError("server closed"), unknown=True
            )

        store._apply = lost_commit  # type: ignore[attr-defined]
    else:
        pytest.skip(f"a {kind} write has no reply to lose (no network between)")


@pytest.mark.parametrize("land", [True, False], ids=["landed", "not-landed"])
def test_a_write_whose_reply_was_lost_reports_what_happened(store: Store, land: bool) -> None:
    """A stored turn whose reply was lost reports success; one that did not land raises."""
    buf = ConversationBuffer(store=store, journal=10)
    buf.append(user("a"), CTX)
    _lose_replies(store, land=land)
    if land:
        res = buf.append(user("b"), CTX)  # stored: success, so a caller never retries it
        assert res.appended == 1
    else:
        with pytest.raises(StorageError):
            buf.append(user("b"), CTX)
    assert contents(store) == (["a", "b"] if land else ["a"])
    assert len(journal_for(store).read(SLOT)) == (2 if land else 1)
