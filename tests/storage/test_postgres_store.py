"""PostgresStore specifics on a real throwaway cluster: URL sources, schemas, first use, failures."""

from __future__ import annotations

import pytest
from postgres_server import free_port

from flowdrop_core.conversation import ConversationBuffer
from flowdrop_core.storage import StorageError
from flowdrop_core.storage.postgres import POSTGRES_ENV, PostgresStore
from flowdrop_core.store_browser import open_browser

SLOT = ("session", "s1", "chat_history")
CTX = {"session_id": "s1"}


def test_url_from_the_environment(postgres_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(POSTGRES_ENV, postgres_url)
    PostgresStore().set(*SLOT, [{"role": "user", "content": "a"}])
    assert PostgresStore(postgres_url).get(*SLOT)[1] is True
    monkeypatch.delenv(POSTGRES_ENV)
    with pytest.raises(ValueError, match=POSTGRES_ENV):
        PostgresStore()


def test_schemas_separate_deployments(postgres_url: str) -> None:
    one, two = PostgresStore(postgres_url), PostgresStore(postgres_url, schema="other_app")
    try:
        one.set(*SLOT, [{"role": "user", "content": "one"}])
        assert two.get(*SLOT) == (None, False) and two.listing() == {}
        two.create_tables()  # idempotent after the first use made them
        assert two.slots() == [] and one.slots() == [SLOT]
    finally:
        import psycopg

        with psycopg.connect(postgres_url, autocommit=True) as conn:
            conn.execute("DROP SCHEMA IF EXISTS other_app CASCADE")


@pytest.mark.parametrize("schema", ["", "a-b", 'x"; DROP TABLE y; --', "1abc"])
def test_a_schema_must_be_a_plain_identifier(schema: str) -> None:
    with pytest.raises(ValueError, match="schema"):
        PostgresStore("postgresql://u@127.0.0.1/db", schema=schema)


def test_browsing_read_only_creates_nothing(postgres_url: str) -> None:
    browser = open_browser(postgres_url)
    assert browser.kind == "postgres" and browser.slots() == []
    with pytest.raises(StorageError, match="no FlowDrop tables"):
        PostgresStore(postgres_url, create=False).set(*SLOT, [])
    import psycopg

    with psycopg.connect(postgres_url) as conn:
        assert conn.execute("SELECT to_regnamespace('flowdrop')").fetchone() == (None,)


def test_an_unreachable_server_is_a_located_error_without_the_password() -> None:
    store = PostgresStore(f"postgresql://me:s3cret@127.0.0.1:{free_port()}/db", connect_timeout=2)
    buf = ConversationBuffer(store=store, journal=5)
    with pytest.raises(StorageError) as err:
        buf.append({"role": "user", "content": "a"}, CTX)
    text = str(err.value)
    assert "scope_id='s1'" in text and "Postgres 127.0.0.1:" in text and "s3cret" not in text
    assert "s3cret" not in repr(store) and store.display_url.count("***") == 1


def test_a_plain_value_is_not_a_buffer(postgres_url: str) -> None:
    store = PostgresStore(postgres_url)
    store.set(*SLOT, {"not": "a list"})
    with pytest.raises(StorageError, match="not a conversation buffer"):
        ConversationBuffer(store=store).append({"role": "user", "content": "a"}, CTX)
    assert store.get(*SLOT) == ({"not": "a list"}, True)


HOLDER = """
import sys, time
from flowdrop_core.storage.postgres import PostgresStore
store = PostgresStore(sys.argv[1])
with store.lock("session", "s1", "chat_history", 5.0) as held:
    print("held" if held else "not held", flush=True)
    time.sleep(600)
"""


def test_the_advisory_lock_is_a_bounded_wait_and_a_killed_holder_frees_it(
    postgres_url: str, caplog: pytest.LogCaptureFixture
) -> None:
    """Past lock_timeout the append lands unserialized with the MEM-12 warning, like elsewhere."""
    import logging
    import time

    from concurrency_helpers import LONG_WAIT, python_child

    store = PostgresStore(postgres_url)
    store.create_tables()
    holder = python_child(HOLDER, postgres_url)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        buf = ConversationBuffer(store=store, lock_timeout=0.2)
        start = time.monotonic()
        with caplog.at_level(logging.WARNING, logger="flowdrop_core"):
            res = buf.append({"role": "user", "content": "while held"}, CTX)
        assert 0.15 < time.monotonic() - start < LONG_WAIT
        assert res.serialized is False and res.appended == 1
        assert str(res.events[0].kind) == "unserialized" and res.events[0].rule == "MEM-12"
        assert any("MEM-12" in r.getMessage() for r in caplog.records)
        other = buf.append({"role": "user", "content": "other slot"}, {"session_id": "s2"})
        assert other.serialized is True  # another slot never waits on this one
    finally:
        holder.kill()
        holder.wait()
    start = time.monotonic()
    again = ConversationBuffer(store=store, lock_timeout=LONG_WAIT).append(
        {"role": "user", "content": "after"}, CTX
    )
    assert again.serialized is True and time.monotonic() - start < LONG_WAIT / 2
    assert [m["content"] for m in store.get(*SLOT)[0]] == ["while held", "after"]


def test_the_write_waits_for_a_lock_held_by_another_session_then_runs_serialized(
    postgres_url: str,
) -> None:
    """The append's write takes the advisory lock with the slot row; one held elsewhere is
    waited for (MEM-12), not written around, and the append runs serialized after it."""
    import threading
    import time

    store = PostgresStore(postgres_url, schema="fd_wait")
    buf = ConversationBuffer(store=store, lock_timeout=10.0, journal=5)
    buf.append({"role": "user", "content": "first"}, CTX)  # the cache holds the slot
    held, release = threading.Event(), threading.Event()

    def holder() -> None:
        other = PostgresStore(postgres_url, schema="fd_wait")
        with other.lock(*SLOT, 5.0) as got:
            assert got
            held.set()
            release.wait(10)
        other.close()

    thread = threading.Thread(target=holder)
    thread.start()
    try:
        assert held.wait(10)
        threading.Timer(0.5, release.set).start()
        start = time.monotonic()
        res = buf.append({"role": "user", "content": "after the holder"}, CTX)
        assert time.monotonic() - start >= 0.4  # it waited for the holder
        assert res.serialized is True and res.appended == 1
    finally:
        release.set()
        thread.join()
    assert [m["content"] for m in store.get(*SLOT)[0]] == ["first", "after the holder"]
    assert [seq for seq, _ in store.journal_records(*SLOT)] == [1, 2]
    store.close()


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (
            '{"role":"user","content":' + "[" * 100_000 + "]" * 100_000 + "}",
            "bad stored entry: stored entry 1 is nested more than 101 levels (at character 125)",
        ),
        ('{"role":"user","content":"x","n":NaN}', "stored entry 1 holds NaN, which is not"),
        ('{"role":"user","content":"x","n":1e400}', "holds a number out of range (1e400)"),
    ],
    ids=["100000-deep", "nan", "1e400"],
)
def test_a_deep_or_out_of_range_row_is_a_located_bad_stored_entry(
    postgres_url: str, body: str, message: str
) -> None:
    import psycopg

    store = PostgresStore(postgres_url)
    ConversationBuffer(store=store).append(
        [{"role": "user", "content": "a"}, {"role": "assistant", "content": "b"}], CTX
    )
    with psycopg.connect(postgres_url, autocommit=True) as conn:
        conn.execute(
            "UPDATE flowdrop.entry SET body = %s WHERE ord = (SELECT max(ord) FROM flowdrop.entry)",
            (body,),
        )
    with pytest.raises(StorageError) as err:
        store.get(*SLOT)
    assert message in str(err.value) and "scope_id='s1'" in str(err.value)


@pytest.mark.parametrize("at", ["1e300", "Infinity", "NaN", "-1"])
def test_a_last_write_out_of_range_is_a_located_bad_stored_entry(
    postgres_url: str, at: str
) -> None:
    import psycopg

    store = PostgresStore(postgres_url)
    ConversationBuffer(store=store).append({"role": "user", "content": "a"}, CTX)
    with psycopg.connect(postgres_url, autocommit=True) as conn:
        conn.execute("UPDATE flowdrop.slot SET updated_at = %s::double precision", (at,))
    with pytest.raises(StorageError, match=r"bad stored entry: last write .* is out of range"):
        open_browser(postgres_url).slots()


@pytest.mark.parametrize("window", [0, 3])
def test_the_usual_append_is_one_statement_on_both_paths(
    postgres_url: str, monkeypatch: pytest.MonkeyPatch, window: int
) -> None:
    from typing import Any

    """An append at the end (evicting from the front when the window is full), cached and
    journaled, is one statement and no explicit transaction: one round trip. A change of
    another shape still writes through the transaction of several."""
    import asyncio
    import uuid

    import psycopg

    from flowdrop_core.conversation import ConversationBuffer

    store = PostgresStore(postgres_url, schema=f"one_{uuid.uuid4().hex[:8]}")
    buf = ConversationBuffer(store=store, max_messages=window, journal=10)
    ctx = {"session_id": "s"}
    # warm: the slot exists, each path's connection has its lock_timeout, the buffer is cached
    runner = asyncio.Runner()  # one event loop: its connections are kept between the runs
    runner.run(buf.aappend({"role": "user", "content": "warm async"}, ctx))
    for n in range(4):
        buf.append({"role": "user", "content": f"warm {n}"}, ctx)
    calls: list[str] = []
    for cls in (psycopg.Connection, psycopg.AsyncConnection):
        for name in ("execute", "transaction"):
            original = getattr(cls, name)

            def spy(self: Any, *args: Any, _o: Any = original, _n: str = name, **kw: Any) -> Any:
                calls.append(_n)
                return _o(self, *args, **kw)

            monkeypatch.setattr(cls, name, spy)
    awkward = 'sync "q" \\ {a,b} NULL ü\n'  # what an array literal would have to escape
    buf.append({"role": "user", "content": awkward}, ctx)
    assert calls == ["execute"], calls
    calls.clear()
    runner.run(buf.aappend({"role": "user", "content": "async"}, ctx))
    runner.close()
    assert calls == ["execute"], calls
    buf.append(
        [
            {"role": "assistant", "content": "", "tool_calls": [{"id": "c9", "name": "f"}]},
            {"role": "user", "content": "no answer came"},  # MEM-3 heals c9 (at the end)
        ],
        ctx,
    )
    calls.clear()
    late = buf.append({"role": "tool", "tool_call_id": "c9", "content": "late"}, ctx)
    assert late.appended == 0  # MEM-10: the placeholder replaced in place, not at the end
    assert "transaction" in calls
    contents = [m.get("content") for m in buf.messages(ctx)]
    want = ["warm async", "warm 0", "warm 1", "warm 2", "warm 3", awkward, "async"]
    want += ["", "late", "no answer came"]
    assert contents == (want[-window:] if window else want)
    assert [r[0] for r in store.journal_records("session", "s", "chat_history")] == list(
        range(1, 10)
    )
    store.close()
