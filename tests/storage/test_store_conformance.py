"""The store conformance suite on our four backends: each declares its capabilities and runs it.

The checks live in :mod:`flowdrop_core.storage.conformance` (importable, so a
third-party backend runs them with one call). Here each backend gives a
factory of fresh, empty stores and its :class:`Capabilities`: how its own
journal write is made to fail, and how a write's reply is lost. A check whose
capability a backend does not declare is reported as not applicable, never
skipped by name.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from itertools import count
from pathlib import Path
from typing import Any

from flowdrop_core.storage import MemoryStore, SQLiteStore, Store
from flowdrop_core.storage.conformance import (
    CHECKS,
    SLOT,
    Capabilities,
    Check,
    ConformanceReport,
    run_store_conformance,
)


def assert_conforms(
    factory: Callable[[], Store], caps: Capabilities, not_applicable: set[str]
) -> ConformanceReport:
    report = run_store_conformance(factory, caps)
    assert report.ok, str(report)
    assert set(report.not_applicable) == not_applicable, str(report)
    assert len(report.passed) + len(report.not_applicable) == len(CHECKS)
    return report


# -- memory ----------------------------------------------------------------------------------

MEMORY = Capabilities(kind="memory")


def test_the_memory_store_conforms() -> None:
    assert_conforms(
        MemoryStore,
        MEMORY,
        {c.name for c in CHECKS if c.needs is not None},
    )


# -- SQLite ----------------------------------------------------------------------------------


def sqlite_fail_journal_writes(store: Store) -> None:
    """A trigger that aborts every insert into the journal table."""
    conn = sqlite3.connect(store.path)  # type: ignore[attr-defined]
    conn.execute(
        "CREATE TRIGGER boom BEFORE INSERT ON journal BEGIN SELECT RAISE(ABORT, 'boom'); END"
    )
    conn.commit()
    conn.close()


SQLITE = Capabilities(kind="sqlite", fail_journal_writes=sqlite_fail_journal_writes)


def sqlite_factory(folder: Path) -> Callable[[], Store]:
    numbers = count()
    return lambda: SQLiteStore(folder / f"buffers-{next(numbers)}.sqlite3")


def test_the_sqlite_store_conforms(tmp_path: Path) -> None:
    assert_conforms(
        sqlite_factory(tmp_path),
        SQLITE,
        {c.name for c in CHECKS if c.needs == "lose_replies"},
    )


# -- Redis -----------------------------------------------------------------------------------


def redis_fail_journal_writes(store: Store) -> None:
    """The journal's key holds a string: the script's stream write fails."""
    from flowdrop_core.storage.redis_store import slot_keys

    journal_key = slot_keys(SLOT, store.namespace)[2]  # type: ignore[attr-defined]
    store.client.delete(journal_key)  # type: ignore[attr-defined]
    store.client.set(journal_key, "not a stream")  # type: ignore[attr-defined]


def redis_lose_replies(store: Store, land: bool) -> None:
    from redis.exceptions import ConnectionError as RedisConnectionError

    def losing(script: Any) -> Any:
        def lost(*args: Any, **kw: Any) -> Any:
            if land:
                script(*args, **kw)
            raise RedisConnectionError("Connection closed by server.")

        return lost

    # the append's write runs the leased script (under write_lock), any other the plain one
    for name in ("_apply", "_apply_leased"):
        setattr(store, name, losing(getattr(store, name)))


REDIS = Capabilities(
    kind="redis", fail_journal_writes=redis_fail_journal_writes, lose_replies=redis_lose_replies
)


def test_the_redis_store_conforms(redis_url: str) -> None:
    from flowdrop_core.storage.redis_store import RedisStore

    def fresh() -> Store:
        store = RedisStore(redis_url)
        store.client.flushdb()
        return store

    assert_conforms(fresh, REDIS, set())


# -- Postgres --------------------------------------------------------------------------------


def postgres_fail_journal_writes(store: Store) -> None:
    """A trigger that raises on every insert into the journal table."""
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


def postgres_lose_replies(store: Store, land: bool) -> None:
    import psycopg

    real = store._apply  # type: ignore[attr-defined]

    def lost_commit(slot: Any, *args: Any) -> Any:
        if land:
            real(slot, *args)
        raise store._error(  # type: ignore[attr-defined]
            "write the slot", slot, psycopg.OperationalError("server closed"), unknown=True
        )

    store._apply = lost_commit  # type: ignore[attr-defined]


POSTGRES = Capabilities(
    kind="postgres",
    fail_journal_writes=postgres_fail_journal_writes,
    lose_replies=postgres_lose_replies,
)


def test_the_postgres_store_conforms(postgres_url: str) -> None:
    import psycopg

    from flowdrop_core.storage.postgres import PostgresStore

    def fresh() -> Store:
        with psycopg.connect(postgres_url, autocommit=True) as conn:
            conn.execute("DROP SCHEMA IF EXISTS flowdrop CASCADE")
        return PostgresStore(postgres_url)

    assert_conforms(fresh, POSTGRES, set())


# -- the suite itself ------------------------------------------------------------------------


class ForgetsJournal(MemoryStore):
    """A memory store that silently drops its journal records: not conformant."""

    def apply(self, *args: Any, **kw: Any) -> Any:
        kw.pop("journal", None)
        return super().apply(*args, **kw)


def test_the_suite_fails_a_backend_that_breaks_a_promise() -> None:
    report = run_store_conformance(ForgetsJournal, MEMORY)
    assert not report.ok
    assert "journal_records_are_numbered_from_the_store_and_checked" in report.failed
    assert "FAILED journal_records_are_numbered" in str(report)


def test_a_wrong_kind_and_a_failing_capability_are_reported() -> None:
    def broken(store: Store) -> None:
        raise RuntimeError("the hook itself failed")

    caps = Capabilities(kind="other", fail_journal_writes=broken)
    report = run_store_conformance(MemoryStore, caps)
    assert set(report.failed) == {
        "every_backend_implements_the_journal_protocol",
        "a_failure_where_the_journal_is_written_leaves_nothing",
    }
    assert (
        "the hook itself failed"
        in report.failed["a_failure_where_the_journal_is_written_leaves_nothing"]
    )


def test_a_check_that_raises_nothing_where_it_must_fails() -> None:
    only = (c for c in CHECKS if c.name == "a_stale_write_is_a_conflict_and_writes_nothing")

    class NoConflicts(MemoryStore):
        def delete(self, *args: Any, **kw: Any) -> Any:
            kw.pop("expected", None)  # deletes whatever the slot holds
            return super().delete(*args, **kw)

    checks: tuple[Check, ...] = tuple(only)
    report = run_store_conformance(NoConflicts, MEMORY, checks=checks)
    assert "did not raise RevisionConflict" in report.failed[checks[0].name]


def test_every_check_has_a_unique_name() -> None:
    names = [c.name for c in CHECKS]
    assert len(names) == len(set(names)) == 22
