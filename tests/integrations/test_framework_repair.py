"""A repair of a framework's file changes only what it reports (MEM-15), checked with the SDKs.

Files are written by the real packages (``SQLiteSession``,
``AdvancedSQLiteSession`` with usage and branches, LangGraph's
``SqliteSaver``); after a repair the same packages read them back.
"""

from __future__ import annotations

import asyncio
import sqlite3
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest
from agents import SQLiteSession
from agents.extensions.memory import AdvancedSQLiteSession
from framework_files import (
    advanced_file,
    agents_file,
    folder_state,
    interrupted_graph_file,
    langgraph_file,
    parallel_calls_file,
)
from langgraph.checkpoint.sqlite import SqliteSaver

from flowdrop_core.framework_stores import FrameworkStoreError, open_framework_store
from flowdrop_core.messages import PLACEHOLDER_CONTENT

PLACEHOLDER = {"type": "function_call_output", "call_id": "g1", "output": PLACEHOLDER_CONTENT}


def sdk_view(path: Path, session: str) -> dict[str, Any]:
    """What AdvancedSQLiteSession reads for ``session``: every branch's items, turns, usage."""

    async def read() -> dict[str, Any]:
        adv = AdvancedSQLiteSession(session_id=session, db_path=path)
        try:
            branches = [b["branch_id"] for b in await adv.list_branches()]
            return {
                b: (
                    await adv.get_items(branch_id=b),
                    await adv.get_conversation_turns(branch_id=b),
                    await adv.get_turn_usage(branch_id=b),
                )
                for b in branches
            }
        finally:
            adv.close()

    return asyncio.run(read())


def plain_items(path: Path, session: str) -> list[Any]:
    s = SQLiteSession(session, db_path=path)
    try:
        return asyncio.run(s.get_items())
    finally:
        s.close()


def message_rows(path: Path) -> list[tuple[Any, ...]]:
    """Every message row with its id, timestamp and bytes."""
    with closing(sqlite3.connect(path)) as conn:
        return conn.execute(
            "SELECT id, session_id, message_data, created_at FROM agent_messages ORDER BY id"
        ).fetchall()


def test_a_repair_of_an_advanced_session_keeps_the_sdk_reading_it_whole(tmp_path: Path) -> None:
    path = advanced_file(tmp_path / "adv.sqlite")
    before = {s: sdk_view(path, s) for s in ("adv-1", "adv-dup", "adv-cut")}
    assert len(before["adv-1"]["main"][0]) == 10 and len(before["adv-1"]["main"][1]) == 2
    store = open_framework_store(path, tier="admin")
    reports = [store.repair("adv-dup"), store.repair("adv-cut")]
    assert sdk_view(path, "adv-dup")["main"][0] == before["adv-dup"]["main"][0][:3]
    # every other branch is a conversation of its own, repaired on its own
    assert {t.id for t in store.threads()} == {"adv-1", "adv-dup", "adv-cut", "adv-cut@retry"}
    reports.append(store.repair("adv-cut@retry"))
    store.close()
    after = {s: sdk_view(path, s) for s in ("adv-1", "adv-dup", "adv-cut")}
    assert after["adv-1"] == before["adv-1"]  # another session: untouched
    items, turns, usage = after["adv-dup"]["main"]
    assert items == before["adv-dup"]["main"][0][:3]  # the duplicate result is gone
    assert (turns, usage) == before["adv-dup"]["main"][1:]
    for branch in ("main", "retry"):
        items, turns, usage = after["adv-cut"][branch]
        old = before["adv-cut"][branch][0]
        assert items == [*old[:2], PLACEHOLDER, *old[2:]]  # healed before the next user turn
        assert (turns, usage) == before["adv-cut"][branch][1:]
    for report in reports:
        assert report.changes and "as planned" in report.readback


def test_the_plan_names_every_change_before_the_write(tmp_path: Path) -> None:
    path = advanced_file(tmp_path / "adv.sqlite")
    store = open_framework_store(path, tier="admin")
    plan = store.plan_repair("adv-cut")
    assert [c.op for c in plan.changes] == ["renumber", "insert"]
    assert "every branch" in plan.changes[0].where
    assert plan.changes[1].new == PLACEHOLDER
    assert store.repair("adv-cut", plan).changes == plan.changes
    store.close()


def test_a_repair_with_nothing_to_do_writes_nothing(tmp_path: Path) -> None:
    plain = agents_file(tmp_path / "agents.sqlite")
    advanced = advanced_file(tmp_path / "adv.sqlite")
    graph = langgraph_file(tmp_path / "checkpoints.sqlite")
    graph_store = open_framework_store(graph, tier="admin")
    graph_store.repair("t1")
    graph_store.close()
    for backup in tmp_path.glob("*.bak-*"):
        backup.unlink()
    state = folder_state(tmp_path)
    summaries = []
    for path, thread in ((plain, "clean"), (advanced, "adv-1"), (graph, "t1")):
        store = open_framework_store(path, tier="admin")
        summaries.append(store.repair(thread).summary())
        store.close()
    assert folder_state(tmp_path) == state  # no byte changed, no backup made
    assert all("nothing written" in s for s in summaries)


def test_untouched_rows_keep_their_ids_timestamps_and_bytes(tmp_path: Path) -> None:
    path = agents_file(tmp_path / "agents.sqlite")
    rows = message_rows(path)
    store = open_framework_store(path, tier="admin")
    report = store.repair("retried")
    assert [str(c) for c in report.changes] == [
        "remove   agent_messages.id=4: "
        '{"call_id": "c1", "output": "Found 3 cats", "type": "function_call_output"}'
    ]
    assert message_rows(path) == [r for r in rows if r[0] != 4]
    healed = store.repair("interrupted")
    store.close()
    assert [c.op for c in healed.changes] == ["replace", "insert"]
    now = message_rows(path)
    kept = [r for r in rows if r[0] != 4 and r[0] != 7]
    assert [r for r in now if r[0] in {k[0] for k in kept}] == kept
    assert plain_items(path, "interrupted")[2]["output"] == PLACEHOLDER_CONTENT


def test_a_read_back_that_disagrees_restores_the_backup(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = agents_file(tmp_path / "agents.sqlite")
    rows = message_rows(path)
    real = SQLiteSession.get_items

    async def short(self: SQLiteSession, limit: int | None = None) -> list[Any]:
        return (await real(self, limit))[:-1]  # the SDK "reads" one item less

    monkeypatch.setattr(SQLiteSession, "get_items", short)
    store = open_framework_store(path, tier="admin")
    with pytest.raises(FrameworkStoreError, match="was restored"):
        store.repair("retried")
    store.close()
    assert message_rows(path) == rows

    graph = langgraph_file(tmp_path / "checkpoints.sqlite")
    with closing(sqlite3.connect(graph)) as conn:
        checkpoints = conn.execute("SELECT COUNT(*) FROM checkpoints").fetchone()
    store = open_framework_store(graph, tier="admin")
    own = store.saver  # type: ignore[attr-defined]
    real_get = SqliteSaver.get_tuple
    monkeypatch.setattr(
        SqliteSaver,
        "get_tuple",
        lambda self, config: real_get(self, config) if self is own else None,
    )
    with pytest.raises(FrameworkStoreError, match="was restored"):
        store.repair("t1")
    store.close()
    with closing(sqlite3.connect(graph)) as conn:
        assert conn.execute("SELECT COUNT(*) FROM checkpoints").fetchone() == checkpoints


def test_a_reader_that_fails_on_the_written_file_restores_the_backup(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = advanced_file(tmp_path / "adv.sqlite")
    rows = message_rows(path)
    real = AdvancedSQLiteSession.get_conversation_turns
    calls: list[int] = []

    async def fails_after(self: AdvancedSQLiteSession, branch_id: str | None = None) -> Any:
        calls.append(1)
        if len(calls) > 1:  # the read before the write works, the read back fails
            raise RuntimeError("cannot read turns")
        return await real(self, branch_id)

    monkeypatch.setattr(AdvancedSQLiteSession, "get_conversation_turns", fails_after)
    store = open_framework_store(path, tier="admin")
    with pytest.raises(FrameworkStoreError, match=r"reader failed.*was restored"):
        store.repair("adv-dup")
    store.close()
    assert message_rows(path) == rows


@pytest.mark.parametrize(
    "change",
    [
        "CREATE TRIGGER audit AFTER DELETE ON agent_messages BEGIN SELECT 1; END",
        "ALTER TABLE agent_messages ADD COLUMN tenant TEXT",
        "CREATE TABLE notes (id INTEGER, message_id INTEGER REFERENCES agent_messages (id))",
    ],
    ids=["a trigger", "an unknown column", "a table referring to the messages"],
)
def test_a_layout_it_does_not_understand_is_refused_before_any_change(
    tmp_path: Path, change: str
) -> None:
    path = agents_file(tmp_path / "agents.sqlite")
    with closing(sqlite3.connect(path)) as conn:
        conn.execute(change)
        conn.commit()
    state = folder_state(tmp_path)
    store = open_framework_store(path, tier="admin")
    with pytest.raises(FrameworkStoreError, match="refused"):
        store.repair("retried")
    store.close()
    assert folder_state(tmp_path) == state
    store = open_framework_store(path)
    assert "refused, nothing written" in store.plan_repair("retried").lines()[0]
    store.close()


def test_parallel_calls_are_one_assistant_turn_with_their_arguments(tmp_path: Path) -> None:
    path = parallel_calls_file(tmp_path / "agents.sqlite")
    store = open_framework_store(path)
    (info,) = store.threads()
    assert info.healthy, info.summary()  # no false late_result
    rows = store.rows("parallel")
    assert [r["role"] for r in rows] == ["user", "assistant", "tool", "tool", "assistant"]
    calls = rows[1]["metadata"]["tool_calls"]
    assert [(c["id"], c["arguments"]) for c in calls] == [
        ("c1", '{"city":"Paris"}'),
        ("c2", '{"city":"Rome"}'),
    ]
    assert store.plan_repair("parallel").changes == []
    store.close()


def test_a_graph_waiting_at_an_interrupt_is_refused_before_any_change(tmp_path: Path) -> None:
    path = interrupted_graph_file(tmp_path / "checkpoints.sqlite")
    state = folder_state(tmp_path)
    store = open_framework_store(path, tier="admin")
    with pytest.raises(FrameworkStoreError, match="pending write"):
        store.repair("t")  # a checkpoint on top would drop the interrupt's pending write
    store.close()
    assert folder_state(tmp_path) == state


def test_custom_table_names_are_repaired_and_read_back(tmp_path: Path) -> None:
    path = tmp_path / "custom.sqlite"

    async def write() -> None:
        session = SQLiteSession("s", db_path=path, sessions_table="conv", messages_table="items")
        await session.add_items(
            [
                {"role": "user", "content": "find cats"},
                {"type": "function_call", "call_id": "c1", "name": "search", "arguments": "{}"},
                {"type": "function_call_output", "call_id": "c1", "output": "3 cats"},
                {"type": "function_call_output", "call_id": "c1", "output": "3 cats"},
            ]
        )
        session.close()

    asyncio.run(write())
    store = open_framework_store(path, tier="admin")
    report = store.repair("s")
    store.close()
    assert [str(c).split(":")[0] for c in report.changes] == ["remove   items.id=4"]
    assert "SQLiteSession.get_items: as planned" in report.readback

    async def read() -> list[Any]:
        session = SQLiteSession("s", db_path=path, sessions_table="conv", messages_table="items")
        try:
            return await session.get_items()
        finally:
            session.close()

    assert len(asyncio.run(read())) == 3
