"""The framework store readers on files the real libraries wrote, with seeded defects.

The ``SQLiteSession`` file is written by the Agents SDK (``add_items`` and
``Runner.run`` with its ``ScriptedModel``); the checkpoint file by a real
LangGraph ``StateGraph`` with ``SqliteSaver``. After a repair the same
libraries load the conversation and run on.
"""

from __future__ import annotations

import asyncio
import shutil
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any, cast

import pytest
from agents import Agent, Runner, SQLiteSession
from agents.testing import ScriptedModel, assistant_message
from framework_files import (
    advanced_file,
    agents_file,
    digest,
    folder_state,
    graph_of,
    langgraph_file,
    left_by_a_dead_writer,
)
from langchain_core.messages import HumanMessage, ToolMessage
from langgraph.checkpoint.sqlite import SqliteSaver

from flowdrop_core.framework_stores import (
    FrameworkStoreError,
    detect,
    gr_mem_view,
    open_framework_store,
)
from flowdrop_core.messages import PLACEHOLDER_CONTENT
from flowdrop_core.replay import replay
from flowdrop_core.tiers import TierDenied


def test_agents_file_lists_sessions_and_finds_the_seeded_defects(tmp_path: Path) -> None:
    path = agents_file(tmp_path / "agents.sqlite")
    assert detect(path) == "openai-agents"
    before = digest(path)
    store = open_framework_store(path)
    info = {t.id: t for t in store.threads()}
    assert set(info) == {"retried", "interrupted", "clean"}
    assert info["retried"].kinds() == {"duplicate_result": 1}
    assert info["retried"].findings[0].index == 3
    assert info["interrupted"].kinds() == {"unanswered_call": 1}
    assert info["clean"].healthy and info["clean"].count == 2
    # opened in the timeline: one append per stored item, the engine's decisions per step
    timeline = replay(store.scenario("retried"))
    assert [s.appended for s in timeline.steps] == [1, 1, 1, 0]
    with pytest.raises(TierDenied, match="MEM-15: a repair of 'retried' needs the admin tier"):
        store.repair("retried")
    with pytest.raises(sqlite3.OperationalError, match="readonly"):
        cast(Any, store).conn.execute("DELETE FROM agent_messages")
    store.close()
    assert digest(path) == before  # reading changed nothing


def test_agents_repair_backs_up_and_the_sdk_runs_on(tmp_path: Path) -> None:
    path = agents_file(tmp_path / "agents.sqlite")
    store = open_framework_store(path, tier="admin")
    report = store.repair("retried")
    assert (
        report.backup is not None
        and report.backup.is_file()
        and report.before == 4
        and report.after == 3
    )
    assert report.events == {"duplicate_result": 1} and report.remaining == []
    healed = store.repair("interrupted")
    assert healed.events == {"placeholder_inserted": 1} and healed.after == 4
    store.close()
    backup = open_framework_store(report.backup)  # the backup holds the file as it was
    assert {t.id: t.count for t in backup.threads()}["retried"] == 4
    backup.close()

    async def run_on() -> tuple[list[Any], Any]:
        session = SQLiteSession("retried", db_path=path)
        model = ScriptedModel([[assistant_message("still 3 cats")]])
        result = await Runner.run(Agent(name="a", model=model), "and now?", session=session)
        items = await session.get_items()
        session.close()
        return items, (result, model.last_call)

    items, (result, call) = asyncio.run(run_on())
    assert result.final_output == "still 3 cats"
    sent = [i for i in call.input if i.get("type") == "function_call_output"]
    assert len(sent) == 1  # the model was sent one result
    assert len(items) == 5
    interrupted = asyncio.run(SQLiteSession("interrupted", db_path=path).get_items())
    assert interrupted[2] == {
        "type": "function_call_output",
        "call_id": "g1",
        "output": PLACEHOLDER_CONTENT,
    }


def test_an_unreadable_record_is_reported_and_kept(tmp_path: Path) -> None:
    path = agents_file(tmp_path / "agents.sqlite")
    with sqlite3.connect(path) as conn:
        conn.execute(
            "INSERT INTO agent_messages (session_id, message_data) VALUES ('retried', '{oops')"
        )
    store = open_framework_store(path, tier="admin")
    info = {t.id: t for t in store.threads()}["retried"]
    assert len(info.problems) == 1 and "not JSON" in info.problems[0]
    assert "agent_messages.id=" in info.problems[0]
    store.repair("retried")
    left = (
        cast(Any, store)
        .conn.execute("SELECT COUNT(*) FROM agent_messages WHERE message_data = '{oops'")
        .fetchone()
    )
    assert left == (1,)
    store.close()


def test_langgraph_file_lists_threads_and_finds_the_seeded_defects(tmp_path: Path) -> None:
    path = langgraph_file(tmp_path / "checkpoints.sqlite")
    assert detect(path) == "langgraph"
    before = digest(path)
    store = open_framework_store(path)
    info = {t.id: t for t in store.threads()}
    assert set(info) == {"t1", "t2"}
    assert info["t1"].kinds() == {"duplicate_result": 1} and info["t1"].count == 4
    assert info["t2"].kinds() == {"orphan_result": 1}
    assert info["t1"].updated  # the checkpoint's timestamp
    timeline = replay(store.scenario("t1"))
    assert [s.appended for s in timeline.steps] == [1, 1, 1, 0]
    with pytest.raises(TierDenied, match="MEM-15"):
        store.repair("t1")
    store.close()
    assert digest(path) == before


def test_langgraph_repair_and_the_graph_runs_on(tmp_path: Path) -> None:
    path = langgraph_file(tmp_path / "checkpoints.sqlite")
    store = open_framework_store(path, tier="admin")
    original = [r["langchain"] for r in store.rows("t1")]
    report = store.repair("t1")
    assert [r["langchain"] for r in store.rows("t1")] == original[:3]  # ids, names: as they were
    assert report.events == {"duplicate_result": 1} and report.after == 3
    assert report.backup is not None and report.backup.is_file() and report.remaining == []
    store.close()
    conn = sqlite3.connect(path, check_same_thread=False)
    graph = graph_of(SqliteSaver(conn))
    cfg = {"configurable": {"thread_id": "t1"}}
    state = graph.get_state(cfg)
    assert [type(m).__name__ for m in state.values["messages"]] == [
        "HumanMessage",
        "AIMessage",
        "ToolMessage",
    ]
    assert state.metadata["source"] == "update"
    out = graph.invoke({"messages": [HumanMessage("thanks")]}, cfg)
    assert [type(m).__name__ for m in out["messages"]][-2:] == ["HumanMessage", "AIMessage"]
    assert sum(isinstance(m, ToolMessage) for m in out["messages"]) == 1
    history = list(graph.get_state_history(cfg))
    assert len(history) > 3  # the old checkpoints are still behind the repair
    conn.close()


def test_files_of_neither_kind_are_clear_errors(tmp_path: Path) -> None:
    other = tmp_path / "other.sqlite"
    with sqlite3.connect(other) as conn:
        conn.execute("CREATE TABLE t (x)")
    with pytest.raises(FrameworkStoreError, match="neither"):
        open_framework_store(other)
    text = tmp_path / "notes.txt"
    text.write_text("hello, not a database " * 50)
    with pytest.raises(FrameworkStoreError, match="not a SQLite database"):
        open_framework_store(text)
    with pytest.raises(FrameworkStoreError, match="no such file"):
        open_framework_store(tmp_path / "missing.sqlite")
    assert not (tmp_path / "missing.sqlite").exists()  # never created


def test_the_view_keeps_an_empty_user_turn() -> None:
    """A repair never drops what the framework stored as a turn (MEM-16 would not count it)."""
    rows = [{"role": "user", "content": ""}, {"role": "assistant", "content": "hi"}]
    fixed, tally = gr_mem_view(rows)
    assert [r["content"] for r in fixed] == ["", "hi"] and tally == {}


def _look(path: Path) -> None:
    """Everything a reader does with a file: detect, list, show, replay."""
    assert detect(path) is not None
    store = open_framework_store(path)
    for info in store.threads():
        store.rows(info.id)
        replay(store.scenario(info.id))
    store.close()


_WRITERS: dict[str, Callable[[Path], Path]] = {
    "openai-agents": agents_file,
    "advanced": advanced_file,
    "langgraph": langgraph_file,
}


@pytest.fixture(scope="module")
def dead_writer_files(tmp_path_factory: pytest.TempPathFactory) -> Callable[[str], Path]:
    """Each kind's file as its framework's writer left it when its process died, made once.

    A test copies the file with its ``-wal`` and ``-shm`` byte for byte into its own
    folder: the same files a dead writer leaves, without starting one process per test.
    """
    made: dict[str, Path] = {}

    def files(kind: str) -> Path:
        if kind not in made:
            path = _WRITERS[kind](tmp_path_factory.mktemp(kind) / "store.sqlite")
            left_by_a_dead_writer(path, kind)
            made[kind] = path
        return made[kind]

    return files


@pytest.mark.parametrize("kind", ["openai-agents", "advanced", "langgraph"])
@pytest.mark.parametrize("left", ["at rest", "wal and shm left", "wal left alone"])
def test_reading_a_framework_file_changes_no_byte_and_creates_no_file(
    tmp_path: Path, kind: str, left: str, dead_writer_files: Callable[[str], Path]
) -> None:
    path = tmp_path / "store.sqlite"
    if left == "at rest":
        _WRITERS[kind](path)
    else:
        source = dead_writer_files(kind)
        for suffix in ("", "-wal", "-shm"):
            shutil.copyfile(f"{source}{suffix}", f"{path}{suffix}")
        if left == "wal left alone":
            Path(f"{path}-shm").unlink()
    before = folder_state(tmp_path)
    _look(path)
    assert folder_state(tmp_path) == before
    if left != "at rest":  # what the writer left in its -wal is read
        store = open_framework_store(path)
        ids = {t.id: t.count for t in store.threads()}
        store.close()
        expected = {"langgraph": ("t3", 1), "openai-agents": ("clean", 3), "advanced": ("adv-1", 9)}
        thread, count = expected[kind]
        assert ids[thread] == count + (kind == "advanced")
