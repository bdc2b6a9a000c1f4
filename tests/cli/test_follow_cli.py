"""``store --follow``: a follower process prints each append another process makes, within 1 s.

Each backend for real (a SQLite file, the session's Redis and Postgres
servers); the writer is another process, each append its own transaction.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from follow_process import Process, Writer, follower
from framework_files import agents_file, folder_state, langgraph_file

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
def writer(target: str, tmp_path: Path) -> Iterator[Writer]:
    if "://" not in target:
        from flowdrop_core.storage import SQLiteStore

        SQLiteStore(target).close()  # the follower browses an existing file
    w = Writer(target)
    yield w
    w.stop()


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


def printed(proc: Process, done: dict[str, Any]) -> dict[str, Any]:
    """The next object the follower printed, checked to land within the bound of the commit."""
    at, line = proc.out.next(5)
    assert at - done["at"] < LATENCY, f"printed {at - done['at']:.2f} s after the commit"
    return dict(json.loads(line))


def kinds(obj: dict[str, Any]) -> list[tuple[str, str]]:
    return [(e["kind"], e["rule"]) for e in obj["events"]]


def test_each_append_is_printed_as_it_lands(target: str, writer: Writer) -> None:
    writer.send(op="append", messages={"role": "user", "content": "find cats"}, context=CTX)
    proc = follower(target, "--slot", *SLOT, "--json", *FAST)
    try:
        turn = printed(proc, writer.send(op="append", messages=call("c1"), context=CTX))
        assert turn["kind"] == "append" and turn["slot"] == list(SLOT) and turn["seq"] == 2
        assert (turn["count"], turn["appended"], turn["appended_any"]) == (2, 1, True)
        assert kinds(turn) == [("appended", "MEM-14")]
        assert turn["incoming"][0]["metadata"]["tool_calls"][0]["id"] == "c1"

        first = printed(proc, writer.send(op="append", messages=result("c1"), context=CTX))
        assert (first["seq"], first["appended"]) == (3, 1)
        refired = printed(proc, writer.send(op="append", messages=result("c1"), context=CTX))
        assert (refired["seq"], refired["count"], refired["appended"]) == (4, 3, 0)
        assert refired["appended_any"] is False
        assert kinds(refired) == [("duplicate_result", "MEM-1")]

        printed(proc, writer.send(op="append", messages=call("c2"), context=CTX))
        user = {"role": "user", "content": "anything?"}
        healed = printed(proc, writer.send(op="append", messages=user, context=CTX))
        assert (healed["seq"], healed["count"], healed["appended"]) == (6, 6, 1)
        assert kinds(healed) == [("placeholder_inserted", "MEM-3"), ("appended", "MEM-14")]

        # MEM-7: no session id, the append is refused and writes nothing: nothing printed,
        # so the next line is the write made outside the journal after it.
        refused = writer.send(op="append", messages=user, context={})
        assert refused["refused"] is True
        outside = printed(proc, writer.send(op="set", slot=SLOT, value=[user]))
        assert outside["kind"] == "outside" and outside["after_seq"] == 6
        assert "outside the journal" in outside["message"]
        again = printed(proc, writer.send(op="append", messages=result("c9"), context=CTX))
        assert again["seq"] == 7 and again["kind"] == "append"
    finally:
        proc.stop()


def test_every_slot_is_followed_each_line_naming_its_slot(tmp_path: Path) -> None:
    target = str(tmp_path / "buffers.sqlite3")
    from flowdrop_core.storage import SQLiteStore

    SQLiteStore(target).close()
    writer = Writer(target)
    proc = follower(target, *FAST)
    try:
        done = writer.send(op="append", messages={"role": "user", "content": "hi"}, context=CTX)
        at, line = proc.out.next(5)
        assert at - done["at"] < LATENCY
        assert line.startswith("[session/s1/chat_history] record 1 at ")
        assert "in: user: hi" in line and "count 1  appended 1  appended_any yes" in line
        assert proc.out.next(5)[1].startswith("    appended (MEM-14): ")
        other = {"user_id": "u-7"}
        writer.send(op="append", scope="user", messages=result("x1"), context=other)
        line = proc.out.next(5)[1]
        assert line.startswith("[user/u-7/chat_history] record 1 at "), line
        assert "in: tool[x1]: Found 3 cats  count 1" in line
    finally:
        proc.stop()
        writer.stop()


def test_framework_threads_are_followed_read_only(tmp_path: Path) -> None:
    """A LangGraph checkpoint file and an Agents session file, each written by its framework."""
    writer = Writer(wait=False)  # starts while the files are made
    cases = []
    for kind, make, thread in (
        ("langgraph", langgraph_file, "t1"),
        ("openai-agents", agents_file, "interrupted"),
    ):
        (tmp_path / kind).mkdir()
        path = make(tmp_path / kind / "fw.sqlite3")
        cases.append((kind, path, thread, follower(str(path), "--thread", thread, "--json", *FAST)))
    writer.ready()
    try:
        for kind, path, thread, proc in cases:
            kw = {"path": str(path), "kind": kind, "thread": thread}
            done = writer.send(op="run", module="follow_turns", kw=kw)
            at, line = proc.out.next(10)
            assert at - done["at"] < LATENCY, kind
            update = json.loads(line)
            assert [s["incoming"][0]["content"] for s in update["steps"]] == ["more cats?"]
            assert update["steps"][0]["appended"] == 1
            # the follower opened the file to read the turn and left every byte as it was
            assert folder_state(path.parent) == done["ran"], kind
    finally:
        for *_, proc in cases:
            proc.stop()
        writer.stop()
