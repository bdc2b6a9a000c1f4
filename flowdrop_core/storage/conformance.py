"""The store conformance suite: what the runtime relies on a backend for, runnable by one call.

Modelled on langgraph-checkpoint-conformance. A backend (ours or a third
party's) declares what it can be made to do in :class:`Capabilities` and
runs every check with :func:`run_store_conformance`::

    from flowdrop_core.storage.conformance import Capabilities, run_store_conformance

    report = run_store_conformance(lambda: MyStore(url), Capabilities(kind="mine"))
    assert report.ok, report

The checks: compare and set and re-apply on conflict, delta operations,
isolation of ``(scope, scope_id, key)``, journal atomicity (the record lands
with its change or neither does, including a failure injected where the
journal is written), listing, the journal's numbering, and a write whose
reply was lost. A check that needs a capability the backend does not declare
is reported as not applicable, with the reason, instead of being skipped by
name. Each check gets a fresh, empty store from the factory and closes it.

Standard library only (no pytest): a failed check is an ``AssertionError``
or an unexpected exception, reported with its traceback.
"""

from __future__ import annotations

import itertools
import re
import traceback
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from flowdrop_core.conversation import ConversationBuffer
from flowdrop_core.journal import journal_for
from flowdrop_core.storage._base import (
    Delta,
    JournalConflict,
    JournalStore,
    JournalWrite,
    Op,
    RevisionConflict,
    StorageError,
    Store,
    apply_ops,
    new_revision,
)

__all__ = [
    "CHECKS",
    "SLOT",
    "Capabilities",
    "Check",
    "ConformanceReport",
    "run_store_conformance",
]

CTX = {"session_id": "s1"}
#: The slot the checks write (the one ``CTX`` resolves to under the default scope).
SLOT = ("session", "s1", "chat_history")


@dataclass(frozen=True, slots=True)
class Capabilities:
    """What a backend declares about itself for the suite.

    ``kind`` is the store's ``kind``. ``fail_journal_writes(store)`` makes the
    backend's own journal write fail from then on, exactly where it stores a
    record (a backend with no I/O between change and record leaves it
    ``None``). ``lose_replies(store, land)`` makes the next writes lose their
    reply, after committing when ``land`` is true, instead of committing
    otherwise (``None`` for a backend with no network between).
    """

    kind: str
    fail_journal_writes: Callable[[Store], None] | None = None
    lose_replies: Callable[[Store, bool], None] | None = None


@dataclass(frozen=True, slots=True)
class Check:
    """One named check; ``needs`` is the capability it cannot run without."""

    name: str
    run: Callable[[Any, Capabilities], None]
    needs: str | None = None


@dataclass(slots=True)
class ConformanceReport:
    """What :func:`run_store_conformance` found, check by check."""

    kind: str
    passed: list[str] = field(default_factory=list)
    failed: dict[str, str] = field(default_factory=dict)  # name -> traceback
    not_applicable: dict[str, str] = field(default_factory=dict)  # name -> why

    @property
    def ok(self) -> bool:
        """True when every applicable check passed (and at least one ran)."""
        return not self.failed and bool(self.passed)

    def __str__(self) -> str:
        lines = [
            f"{self.kind}: {len(self.passed)} passed, {len(self.failed)} failed, "
            f"{len(self.not_applicable)} not applicable"
        ]
        lines += [f"FAILED {name}:\n{text}" for name, text in self.failed.items()]
        lines += [f"not applicable {name}: {why}" for name, why in self.not_applicable.items()]
        return "\n".join(lines)


class _Raised:
    value: BaseException


@contextmanager
def _raises(kind: type[BaseException], match: str | None = None) -> Iterator[_Raised]:
    """``pytest.raises`` without pytest: the block must raise ``kind`` (matching ``match``)."""
    got = _Raised()
    try:
        yield got
    except kind as exc:
        if match is not None and not re.search(match, str(exc)):
            raise AssertionError(f"{kind.__name__} {str(exc)!r} does not match {match!r}") from exc
        got.value = exc
        return
    raise AssertionError(f"did not raise {kind.__name__}")


def user(text: str) -> dict[str, Any]:
    return {"role": "user", "content": text}


def contents(store: Store, slot: tuple[str, str, str] = SLOT) -> list[str]:
    value, _ = store.get(*slot, default=[])
    return [e["content"] for e in value]


def record(seq: int, revision: str | None = None, limit: int = 100) -> JournalWrite:
    return JournalWrite(seq, f'{{"seq":{seq}}}', limit, 0.0, revision or new_revision())


def every_backend_implements_the_journal_protocol(store: Any, caps: Capabilities) -> None:
    assert isinstance(store, JournalStore)
    assert store.kind == caps.kind, (store.kind, caps.kind)


# -- compare and set -------------------------------------------------------------------------


def a_stale_write_is_a_conflict_and_writes_nothing(store: Any, caps: Capabilities) -> None:
    rev = store.set(*SLOT, [user("a")])
    newer = store.apply(*SLOT, Delta((Op("insert", 1, user("b")),), 2), expected=rev)
    with _raises(RevisionConflict) as err:
        store.apply(*SLOT, Delta((Op("insert", 1, user("stale")),), 2), expected=rev)
    conflict = err.value
    assert isinstance(conflict, RevisionConflict)
    assert (conflict.expected, conflict.actual) == (rev, newer)
    with _raises(RevisionConflict):
        store.apply(*SLOT, Delta((Op("insert", 0, user("x")),), 1), expected=None)
    with _raises(RevisionConflict):
        store.set(*SLOT, [user("x")], expected=rev)
    with _raises(RevisionConflict):
        store.delete(*SLOT, expected=rev)
    assert contents(store) == ["a", "b"]
    assert store.revision(*SLOT) == newer


def two_buffers_interleaving_re_apply_on_conflict(store: Any, caps: Capabilities) -> None:
    """Two writers with cached copies: each conflict is re-read and re-applied, nothing lost."""
    one, two = ConversationBuffer(store=store), ConversationBuffer(store=store)
    for n in range(6):
        assert one.append(user(f"one {n}"), CTX).appended == 1
        res = two.append(user(f"two {n}"), CTX)  # its cache is stale: conflict, re-apply
        assert res.appended == 1 and res.count == 2 * n + 2
    assert contents(store) == [f"{w} {n}" for n in range(6) for w in ("one", "two")]


# -- delta operations ------------------------------------------------------------------------

DELTA_CASES: dict[str, list[Op]] = {
    "append": [Op("insert", 3, user("end"))],
    "front": [Op("insert", 0, user("front"))],
    "mid-twice": [Op("insert", 2, user("mid")), Op("insert", 2, user("mid2"))],
    "replace": [Op("replace", 1, user("new1"))],
    "evict-two": [Op("delete", 0), Op("delete", 0)],
    "mixed": [Op("delete", 1), Op("insert", 1, user("back")), Op("delete", 2)],
    "mixed2": [Op("delete", 2), Op("insert", 0, user("f")), Op("replace", 2, user("r"))],
}


def delta_ops_match_the_reference(ops: list[Op]) -> Callable[[Any, Capabilities], None]:
    def check(store: Any, caps: Capabilities) -> None:
        start = [user(f"e{k}") for k in range(3)]
        rev = store.set(*SLOT, start)
        expected = list(start)
        apply_ops(expected, ops)
        rev = store.apply(*SLOT, Delta(tuple(ops), len(expected)), expected=rev)
        assert store.read(*SLOT) == (expected, True, rev)

    return check


def many_inserts_in_one_place_keep_their_order(store: Any, caps: Capabilities) -> None:
    """Insertions at one spot use up the ordering gap (the rows are shifted, not misordered)."""
    rev = store.set(*SLOT, [user("first"), user("last")])
    expected = [user("first"), user("last")]
    for n in range(40):
        op = Op("insert", 1, user(f"i{n}"))
        apply_ops(expected, [op])
        rev = store.apply(*SLOT, Delta((op,), len(expected)), expected=rev)
    assert store.get(*SLOT)[0] == expected


def a_bad_delta_writes_nothing(store: Any, caps: Capabilities) -> None:
    rev = store.set(*SLOT, [user("a")])
    with _raises(StorageError, match=r"nothing was written|cannot apply"):
        store.apply(*SLOT, Delta((Op("insert", 1, user("b")), Op("delete", 5)), 1), expected=rev)
    assert store.read(*SLOT) == ([user("a")], True, rev)


# -- isolation -------------------------------------------------------------------------------

TRICKY = ["a", "a:b", ":", "", "[", '"', '","', "\\", "\x00", "a\x00b", "é", "e\u0301", "😀", "}{"]


def tricky_parts_are_separate_slots(store: Any, caps: Capabilities) -> None:
    """Triples differing by a separator, NUL, a brace or a normalization never share a slot."""
    triples = [t for t in itertools.product(TRICKY, repeat=3) if t[1] != "s"][::37]
    for n, (scope, scope_id, key) in enumerate(triples):
        store.set(scope, scope_id, key, [user(str(n))])
    for n, (scope, scope_id, key) in enumerate(triples):
        assert store.get(scope, scope_id, key) == ([user(str(n))], True), (scope, scope_id, key)
    listed = store.listing()
    assert set(triples) <= set(listed)
    assert all(listed[t] == (1, listed[t][1]) for t in triples)


# -- journal ---------------------------------------------------------------------------------


def journal_records_are_numbered_from_the_store_and_checked(store: Any, caps: Capabilities) -> None:
    rev = store.set(*SLOT, [])
    rev = store.apply(
        *SLOT, Delta((Op("insert", 0, user("a")),), 1), expected=rev, journal=record(1)
    )
    with _raises(JournalConflict):  # a number that does not follow the last
        store.apply(*SLOT, Delta((Op("insert", 1, user("b")),), 2), expected=rev, journal=record(1))
    with _raises(JournalConflict):
        store.apply(*SLOT, Delta((Op("insert", 1, user("b")),), 2), expected=rev, journal=record(3))
    assert contents(store) == ["a"] and store.revision(*SLOT) == rev
    assert [seq for seq, _ in store.journal_records(*SLOT)] == [1]


def a_record_of_a_change_names_the_revision_it_leaves(store: Any, caps: Capabilities) -> None:
    entry = record(1)
    rev = store.apply(*SLOT, Delta((Op("insert", 0, user("a")),), 1), expected=None, journal=entry)
    assert rev == entry.revision == store.revision(*SLOT)


def a_record_of_no_change_leaves_the_slot_alone(store: Any, caps: Capabilities) -> None:
    rev = store.set(*SLOT, [user("a")])
    got = store.apply(*SLOT, Delta((), 1), expected=rev, journal=record(1, revision=rev))
    assert got == rev == store.revision(*SLOT)
    assert store.journal_last(*SLOT) == 1
    with _raises(RevisionConflict):  # still conditional on the revision
        store.apply(*SLOT, Delta((), 1), expected="other", journal=record(2, revision="other"))
    assert store.journal_last(*SLOT) == 1


def a_failed_journaled_write_leaves_neither(store: Any, caps: Capabilities) -> None:
    rev = store.set(*SLOT, [user("a")])
    with _raises(RevisionConflict):
        store.apply(
            *SLOT, Delta((Op("insert", 1, user("b")),), 2), expected="stale", journal=record(1)
        )
    with _raises(StorageError):
        store.apply(*SLOT, Delta((Op("delete", 7),), 0), expected=rev, journal=record(1))
    assert store.journal_records(*SLOT) == []
    assert store.read(*SLOT) == ([user("a")], True, rev)


def the_journal_is_trimmed_and_kept_past_a_delete(store: Any, caps: Capabilities) -> None:
    buf = ConversationBuffer(store=store, journal=4, tier="admin")
    for n in range(7):
        buf.append(user(f"m{n}"), CTX)
    assert [r.seq for r in journal_for(store).read(SLOT)] == [4, 5, 6, 7]
    buf.clear(CTX)
    buf.append(user("after"), CTX)
    assert [r.seq for r in journal_for(store).read(SLOT)] == [5, 6, 7, 8]
    assert journal_for(store).counts() == {SLOT: 4}


def a_failure_where_the_journal_is_written_leaves_nothing(store: Any, caps: Capabilities) -> None:
    """There is no point between the slot write and the journal write: both fail together."""
    assert caps.fail_journal_writes is not None
    buf = ConversationBuffer(store=store, journal=10)
    first = buf.append(user("kept"), CTX)
    rev = store.revision(*SLOT)
    caps.fail_journal_writes(store)
    fresh = ConversationBuffer(store=store, journal=10)
    with _raises(StorageError):
        fresh.append(user("must not land"), CTX)
    assert contents(store) == ["kept"] and store.revision(*SLOT) == rev
    assert first.count == 1


# -- listing ---------------------------------------------------------------------------------


def listing_counts_entries_values_and_journals(store: Any, caps: Capabilities) -> None:
    ConversationBuffer(store=store, journal=5).append([user("a"), user("b")], CTX)
    store.set("global", "", "note", {"x": 1})
    rows = store.listing()
    assert rows[SLOT][0] == 2 and rows[("global", "", "note")][0] is None
    at = rows[SLOT][1]
    assert at is None or at > 0
    assert store.journal_counts() == {SLOT: 1}
    store.delete(*SLOT)
    assert SLOT not in store.listing()
    assert store.journal_counts() == {SLOT: 1}


# -- a lost reply ------------------------------------------------------------------------------


def a_write_whose_reply_was_lost_reports_what_happened(
    land: bool,
) -> Callable[[Any, Capabilities], None]:
    """A stored turn whose reply was lost reports success; one that did not land raises."""

    def check(store: Any, caps: Capabilities) -> None:
        assert caps.lose_replies is not None
        buf = ConversationBuffer(store=store, journal=10)
        buf.append(user("a"), CTX)
        caps.lose_replies(store, land)
        if land:
            res = buf.append(user("b"), CTX)  # stored: success, so a caller never retries it
            assert res.appended == 1
        else:
            with _raises(StorageError):
                buf.append(user("b"), CTX)
        assert contents(store) == (["a", "b"] if land else ["a"])
        assert len(journal_for(store).read(SLOT)) == (2 if land else 1)

    return check


#: Every check, in the order they run.
CHECKS: tuple[Check, ...] = (
    Check(
        "every_backend_implements_the_journal_protocol",
        every_backend_implements_the_journal_protocol,
    ),
    Check(
        "a_stale_write_is_a_conflict_and_writes_nothing",
        a_stale_write_is_a_conflict_and_writes_nothing,
    ),
    Check(
        "two_buffers_interleaving_re_apply_on_conflict",
        two_buffers_interleaving_re_apply_on_conflict,
    ),
    *(
        Check(f"delta_ops_match_the_reference[{case}]", delta_ops_match_the_reference(ops))
        for case, ops in DELTA_CASES.items()
    ),
    Check("many_inserts_in_one_place_keep_their_order", many_inserts_in_one_place_keep_their_order),
    Check("a_bad_delta_writes_nothing", a_bad_delta_writes_nothing),
    Check("tricky_parts_are_separate_slots", tricky_parts_are_separate_slots),
    Check(
        "journal_records_are_numbered_from_the_store_and_checked",
        journal_records_are_numbered_from_the_store_and_checked,
    ),
    Check(
        "a_record_of_a_change_names_the_revision_it_leaves",
        a_record_of_a_change_names_the_revision_it_leaves,
    ),
    Check(
        "a_record_of_no_change_leaves_the_slot_alone", a_record_of_no_change_leaves_the_slot_alone
    ),
    Check("a_failed_journaled_write_leaves_neither", a_failed_journaled_write_leaves_neither),
    Check(
        "the_journal_is_trimmed_and_kept_past_a_delete",
        the_journal_is_trimmed_and_kept_past_a_delete,
    ),
    Check(
        "a_failure_where_the_journal_is_written_leaves_nothing",
        a_failure_where_the_journal_is_written_leaves_nothing,
        needs="fail_journal_writes",
    ),
    Check("listing_counts_entries_values_and_journals", listing_counts_entries_values_and_journals),
    *(
        Check(
            f"a_write_whose_reply_was_lost_reports_what_happened[{label}]",
            a_write_whose_reply_was_lost_reports_what_happened(land),
            needs="lose_replies",
        )
        for label, land in (("landed", True), ("not-landed", False))
    ),
)

_WHY_NOT = {
    "fail_journal_writes": "the backend declares no journal write that can fail on its own "
    "(the record is kept in the same step as the change)",
    "lose_replies": "the backend declares no reply to lose (no network between)",
}


def run_check(check: Check, factory: Callable[[], Store], capabilities: Capabilities) -> None:
    """Run one check on a fresh store from ``factory``, closing it after; raises what it raised."""
    store = factory()
    try:
        check.run(store, capabilities)
    finally:
        close = getattr(store, "close", None)
        if close is not None:
            close()


def run_store_conformance(
    factory: Callable[[], Store],
    capabilities: Capabilities,
    *,
    checks: tuple[Check, ...] = CHECKS,
) -> ConformanceReport:
    """Run every check on fresh stores from ``factory``; the report says what passed.

    ``factory`` returns an empty store each time it is called (a new file, a
    flushed database). A check whose capability ``capabilities`` lacks is
    reported as not applicable, with why.
    """
    report = ConformanceReport(capabilities.kind)
    for check in checks:
        if check.needs is not None and getattr(capabilities, check.needs) is None:
            report.not_applicable[check.name] = _WHY_NOT[check.needs]
            continue
        try:
            run_check(check, factory, capabilities)
        except Exception:
            report.failed[check.name] = traceback.format_exc()
        else:
            report.passed.append(check.name)
    return report
