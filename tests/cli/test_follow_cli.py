"""``store --follow``: a follower process prints each append this process makes, within 1 s.

Each backend for real (a SQLite file, the session's Redis and Postgres
servers); the follower is a child process, the test process the writer,
each append its own transaction.
"""

from __future__ import annotations

import asyncio
import gc
import json
import sqlite3
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from follow_process import Follower
from framework_files import agents_file, folder_state, graph_of, langgraph_file

from flowdrop_core.conversation import ConversationBuffer
from flowdrop_core.storage import Store
from flowdrop_core.store_browser import open_store

#: From commit to print (the issue's bound); the follower checks every 0.05 s in the tests.
LATENCY = 1.0
FAST = ("--interval", "0.05")
CTX = {"session_id": "s1"}
SLOT = ("session", "s1", "chat_history")


@pytest.fixture(params=["sqlite", "redis", "postgres"])
def target(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "sqlite":
        return str(tmp_path / "buffers.sqlite3")
    return str(request.getfixturevalue(f"{request.param}_url"))


@pytest.fixture
def store(target: str) -> Iterator[Store]:
    if "://" not in target:
        Path(target).touch()  # the follower browses an existing file
    s = open_store(target, writable=True)
    yield s
    getattr(s, "close", lambda: None)()


def append(store: Store, messages: Any, context: dict[str, str], **kw: Any) -> dict[str, Any]:
    """One journaled append; its result and when it returned (committed)."""
    buf = ConversationBuffer(store=store, journal=100, **kw)
    res = buf.append(messages, context)
    return {"refused": res.refused, "at": time.time()}


def call(cid: str) -> dict[str, Any]:
    return {
        "role": "assistant",
        "content": None,
        "metadata": {
            "tool_calls": [{"id": cid, "type": "function", "function": {"name": "search"}}]
        },
    }


def result(cid: str) -> dict[str, Any]:
    return {"role": "tool", "content": "Found 3 cats", "metadata": {"tool_call_id": cid}}


def printed(proc: Follower, done: dict[str, Any]) -> dict[str, Any]:
    """The next object the follower printed, checked to land within the bound of the commit."""
    at, line = proc.out.next(5)
    assert at - done["at"] < LATENCY, f"printed {at - done['at']:.2f} s after the commit"
    return dict(json.loads(line))


def kinds(obj: dict[str, Any]) -> list[tuple[str, str]]:
    return [(e["kind"], e["rule"]) for e in obj["events"]]


def test_each_append_is_printed_as_it_lands(target: str, store: Store) -> None:
    append(store, {"role": "user", "content": "find cats"}, CTX)
    proc = Follower(target, "--slot", *SLOT, "--json", *FAST)
    try:
        turn = printed(proc, append(store, call("c1"), CTX))
        assert turn["kind"] == "append" and turn["slot"] == list(SLOT) and turn["seq"] == 2
        assert (turn["count"], turn["appended"], turn["appended_any"]) == (2, 1, True)
        assert kinds(turn) == [("appended", "MEM-14")]
        assert turn["incoming"][0]["metadata"]["tool_calls"][0]["id"] == "c1"

        first = printed(proc, append(store, result("c1"), CTX))
        assert (first["seq"], first["appended"]) == (3, 1)
        refired = printed(proc, append(store, result("c1"), CTX))
        assert (refired["seq"], refired["count"], refired["appended"]) == (4, 3, 0)
        assert refired["appended_any"] is False
        assert kinds(refired) == [("duplicate_result", "MEM-1")]

        printed(proc, append(store, call("c2"), CTX))
        user = {"role": "user", "content": "anything?"}
        healed = printed(proc, append(store, user, CTX))
        assert (healed["seq"], healed["count"], healed["appended"]) == (6, 6, 1)
        assert kinds(healed) == [("placeholder_inserted", "MEM-3"), ("appended", "MEM-14")]

        # MEM-7: no session id, the append is refused and writes nothing: nothing printed,
        # so the next line is the write made outside the journal after it.
        assert append(store, user, {})["refused"] is True
        store.set(*SLOT, [user])
        outside = printed(proc, {"at": time.time()})
        assert outside["kind"] == "outside" and outside["after_seq"] == 6
        assert "outside the journal" in outside["message"]
        again = printed(proc, append(store, result("c9"), CTX))
        assert again["seq"] == 7 and again["kind"] == "append"
    finally:
        proc.stop()


def test_every_slot_is_followed_each_line_naming_its_slot(tmp_path: Path) -> None:
    (tmp_path / "buffers.sqlite3").touch()
    target = str(tmp_path / "buffers.sqlite3")
    store = open_store(target, writable=True)
    proc = Follower(target, *FAST)
    try:
        done = append(store, {"role": "user", "content": "hi"}, CTX)
        at, line = proc.out.next(5)
        assert at - done["at"] < LATENCY
        assert line.startswith("[session/s1/chat_history] record 1 at ")
        assert "in: user: hi" in line and "count 1  appended 1  appended_any yes" in line
        assert proc.out.next(5)[1].startswith("    appended (MEM-14): ")
        append(store, result("x1"), {"user_id": "u-7"}, scope="user")
        line = proc.out.next(5)[1]
        assert line.startswith("[user/u-7/chat_history] record 1 at "), line
        assert "in: tool[x1]: Found 3 cats  count 1" in line
    finally:
        proc.stop()


def langgraph_turn(path: Path, thread: str) -> None:
    from langchain_core.messages import HumanMessage
    from langgraph.checkpoint.sqlite import SqliteSaver

    conn = sqlite3.connect(path, check_same_thread=False)
    graph = graph_of(SqliteSaver(conn))
    graph.update_state(
        {"configurable": {"thread_id": thread}}, {"messages": [HumanMessage("more cats?")]}
    )
    conn.close()


def agents_turn(path: Path, thread: str) -> None:
    from agents import SQLiteSession

    session = SQLiteSession(thread, db_path=path)
    asyncio.run(session.add_items([{"role": "user", "content": "more cats?"}]))
    session.close()


def test_framework_threads_are_followed_read_only(tmp_path: Path) -> None:
    """A LangGraph checkpoint file and an Agents session file, each written by its framework."""
    cases = []
    for kind, make, turn, thread in (
        ("langgraph", langgraph_file, langgraph_turn, "t1"),
        ("openai-agents", agents_file, agents_turn, "interrupted"),
    ):
        (tmp_path / kind).mkdir()
        path = make(tmp_path / kind / "fw.sqlite3")
        cases.append((path, turn, thread, Follower(str(path), "--thread", thread, "--json", *FAST)))
    try:
        for path, turn, thread, proc in cases:
            turn(path, thread)
            gc.collect()  # a framework connection left to the collector closes (and checkpoints) now
            written, done = folder_state(path.parent), time.time()
            at, line = proc.out.next(10)
            assert at - done < LATENCY, path
            update = json.loads(line)
            assert [s["incoming"][0]["content"] for s in update["steps"]] == ["more cats?"]
            assert update["steps"][0]["appended"] == 1
            # the follower opened the file to read the turn and left every byte as it was
            assert folder_state(path.parent) == written, path
    finally:
        for *_, proc in cases:
            proc.stop()
